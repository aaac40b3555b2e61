//go:build unix

package rootfs

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestCheckRefusesSpecialFiles(t *testing.T) {
	dir, _ := tree(t, "bin/")
	if err := syscall.Mkfifo(filepath.Join(dir, "bin", "pipe"), 0o644); err != nil {
		t.Skip(err)
	}
	if err := Check(dir); err == nil || !strings.Contains(err.Error(), "bin/pipe") {
		t.Fatalf("Check = %v", err)
	}
}
