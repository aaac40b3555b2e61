//go:build unix

package envpins

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/cudaenv/cudaenv/internal/venv"
)

// A named pipe where a lock or a METADATA should be is never waited on.
func TestAPipeIsNeverWaitedOn(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "uv.lock")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no named pipes here:", err)
	}
	if _, err := Read(context.Background(), fifo, linux312); !errors.Is(err, venv.ErrNotRegular) {
		t.Errorf("err = %v, want ErrNotRegular", err)
	}
	prefix := venvWith(t, KindVenv, "3.12", "nvidia-nvtx-cu12==12.8.90")
	site := filepath.Join(prefix, "lib", "python3.12", "site-packages")
	dir := distInfo(t, site, "nvidia-cublas-cu12", "12.8.4.1")
	must(t, os.Remove(filepath.Join(dir, "METADATA")))
	must(t, syscall.Mkfifo(filepath.Join(dir, "METADATA"), 0o644))
	p, err := Read(context.Background(), prefix, linux312)
	if err != nil || !slices.Equal(p.Requirements, []string{"nvidia-nvtx-cu12==12.8.90"}) {
		t.Errorf("%q, %v", p.Requirements, err)
	}
}
