// Package testfs gives tests a file system that runs out of room, as a
// full disk or a cluster's file-count quota does: a small tmpfs with few
// inodes, mounted where the test process may mount (Linux, as root), and
// skipped with the reason elsewhere.
package testfs

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
)

// FewInodes mounts a tmpfs of size (e.g. "4m") with at most inodes inodes
// on a new temporary folder, unmounted when t ends, and returns the folder.
func FewInodes(t testing.TB, size string, inodes int) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("a tmpfs with an inode limit is Linux's")
	}
	dir := t.TempDir()
	opts := fmt.Sprintf("size=%s,nr_inodes=%d", size, inodes)
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", opts, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here (needs root): %v: %s", err, out)
	}
	// Before t.TempDir's own clean-up, which runs later.
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}

// Fill creates empty files in dir (made first if need be) until the file
// system has no inode left, and returns the error that said so.
func Fill(t testing.TB, dir string) error {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := 0; ; i++ {
		f, err := os.Create(filepath.Join(dir, fmt.Sprint(i)))
		if err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling the inodes: %v", err)
			}
			return err
		}
		f.Close()
	}
}
