package pypi

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// waitForTick waits until a change made now gives a file a later ctime
// than fi's (file system timestamps come from a clock that moves a few
// milliseconds at a time).
func waitForTick(t *testing.T, fi fs.FileInfo) {
	t.Helper()
	ctime := fi.Sys().(*syscall.Stat_t).Ctim.Nano()
	probe := filepath.Join(t.TempDir(), "probe")
	for range 5000 {
		os.WriteFile(probe, nil, 0o644)
		if pi, err := os.Lstat(probe); err == nil && pi.Sys().(*syscall.Stat_t).Ctim.Nano() > ctime {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("the clock did not move")
}
