package pypi

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cudaenv/cudaenv/fetch"
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

// A reuse whose files' fingerprints the ledger holds reads none of them:
// the entry was checked once. The first reuse reads the files whose sums
// came from RECORD (never read before); a chmod undone on one file makes
// the next reuse read every file of the entry.
func TestAWarmReinstallReadsNoFileWhenFingerprintsHold(t *testing.T) {
	nvcc, crt, extra := "#!/bin/sh\necho nvcc\n", "crt header\n", "not in RECORD\n"
	dist := "nvidia_cuda_nvcc-13.0.88.dist-info/"
	wheel := buildZip(t,
		zipEntry{name: "nvidia/cu13/bin/nvcc", mode: 0o755, body: nvcc},
		zipEntry{name: "nvidia/cu13/include/crt/host_config.h", body: crt},
		zipEntry{name: "nvidia/cu13/include/extra.h", body: extra},
		zipEntry{name: dist + "METADATA", body: "Name: nvidia-cuda-nvcc\nVersion: 13.0.88\n"},
		zipEntry{name: dist + "RECORD", body: recordLine("nvidia/cu13/bin/nvcc", nvcc, "") + recordLine("nvidia/cu13/include/crt/host_config.h", crt, "") + dist + "RECORD,,\n"},
	)
	sha := sha256Hex(wheel)
	base := filepath.Join(t.TempDir(), `c "a" $che`)
	var notices []string
	c := NewWheelCache(filepath.Join(base, "cache"), func(l string) { notices = append(notices, l) })
	var read []string
	var mu sync.Mutex
	fetch.ReadHook = func(rel string) { mu.Lock(); read = append(read, rel); mu.Unlock() }
	t.Cleanup(func() { fetch.ReadHook = nil })
	n := 0
	install := func() {
		t.Helper()
		n++
		dest := filepath.Join(base, fmt.Sprint("store ", n))
		os.MkdirAll(dest, 0o755)
		ok, err := c.Reuse(context.Background(), sha, dest, "nvidia-cuda-nvcc", "13.0.88")
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			if err := c.Unpack(context.Background(), bytes.NewReader(wheel), int64(len(wheel)), sha, dest, "nvidia-cuda-nvcc", "13.0.88"); err != nil {
				t.Fatal(err)
			}
		}
	}
	install()
	for range 3 {
		read = nil
		install()
		if len(read) != 0 {
			t.Errorf("a reuse read %q", read)
		}
	}
	// Touched: a chmod undone changes only the ctime.
	f := filepath.Join(base, "cache", "unpacked", sha, "tree", "include", "extra.h")
	fi, _ := os.Stat(f)
	waitForTick(t, fi)
	os.Chmod(f, 0o644)
	os.Chmod(f, 0o444)
	read = nil
	install()
	if len(read) != 3 {
		t.Errorf("after a chmod undone, the reuse read %q, want every file", read)
	}
	read = nil
	install()
	if len(read) != 0 || len(notices) != 0 {
		t.Errorf("then: read %q, notices %q", read, notices)
	}
}
