package store

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// Reinstalling an entry swaps the new tree in with one rename where the
// file system can: its path never goes missing, so a shim that starts one
// of its commands meanwhile finds the old tree or the new one (issue #34:
// 7 of 2,699 shim calls during reinstall cycles got /bin/sh's "cannot
// open" for a command that was set aside that moment).
func TestAReinstallNeverLeavesTheEntrysPathMissing(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the one-rename swap is Linux's (renameat2)")
	}
	s := newStore(t)
	install := func(tag string) {
		t.Helper()
		unlock, err := s.Lock(CUDA, "12.4.1")
		if err != nil {
			t.Fatal(err)
		}
		defer unlock()
		if _, err := s.Install(CUDA, "12.4.1", func(stage string) (Receipt, error) {
			os.MkdirAll(filepath.Join(stage, "bin"), 0o755)
			return Receipt{Source: tag}, os.WriteFile(filepath.Join(stage, "bin", "nvcc"), []byte("#!/bin/sh\necho "+tag+"\n"), 0o755)
		}); err != nil {
			t.Fatal(err)
		}
	}
	install("first")
	nvcc := filepath.Join(s.Dirs.CUDA(), "12.4.1", "bin", "nvcc")
	var stop atomic.Bool
	var missing, reads atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // a shim starting the command, again and again
		defer wg.Done()
		for !stop.Load() {
			if _, err := os.ReadFile(nvcc); errors.Is(err, fs.ErrNotExist) {
				missing.Add(1)
			}
			reads.Add(1)
		}
	}()
	for range 60 {
		install("again")
	}
	stop.Store(true)
	wg.Wait()
	if n := missing.Load(); n > 0 {
		t.Fatalf("the command was missing in %d of %d reads during reinstalls", n, reads.Load())
	}
	wantNoLeftovers(t, s)
}
