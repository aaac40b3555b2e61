package fetch_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cudaenv/cudaenv/fetch"
	"github.com/cudaenv/cudaenv/fetch/fetchtest"
	"github.com/cudaenv/cudaenv/internal/testwait"
)

// A disk that fills during parallel downloads: the download that hits it
// and the ones it cancels remove their partial files (a part kept for a
// resume would keep the disk full for the rerun), an archive already
// complete stays, and the error says how much the downloads still need.
func TestAFullDiskDuringParallelDownloadsLeavesNoPartsAndSaysWhatIsNeeded(t *testing.T) {
	m := newMirror(t, fetchtest.Options{Synthetic: true,
		Sizes:  map[string]int64{"cuda_nvcc": 256 << 10},
		Faults: map[string]fetchtest.Fault{"cuda_cudart": {Hang: true}}})
	c := newClient(t, m)
	arts := minimal124(t, c)
	by := map[string]fetch.Artifact{}
	for _, a := range arts {
		by[a.Component] = a
	}
	nvcc, cudart, cccl := by["cuda_nvcc"], by["cuda_cudart"], by["cuda_cccl"]
	if nvcc.SHA256 == "" || cudart.SHA256 == "" || cccl.SHA256 == "" {
		t.Fatalf("minimal 12.4.1 is %v", arts)
	}
	dir := filepath.Join(c.CacheDir, "archives")
	// The disk fills under nvcc once cudart is half downloaded (the mirror
	// holds the rest back) and cccl is complete.
	wait := func() {
		limit := testwait.Limit(t)
		for ; time.Now().Before(limit); time.Sleep(2 * time.Millisecond) {
			st, err := os.Stat(filepath.Join(dir, cudart.SHA256+".part"))
			_, cerr := os.Stat(filepath.Join(dir, cccl.SHA256))
			if err == nil && st.Size() > 0 && cerr == nil {
				return
			}
		}
		t.Error("cudart never started, or cccl never finished")
	}
	restore := fetch.FailCacheWritesOf(nvcc.SHA256, wait, syscall.ENOSPC)
	_, err := c.Fetch(t.Context(), arts, t.TempDir())
	restore()
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("want a full disk, got %v", err)
	}
	for _, a := range []fetch.Artifact{nvcc, cudart} {
		if _, err := os.Stat(filepath.Join(dir, a.SHA256+".part")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the partial download of %s was left on the full disk (%v)", a.Component, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, cccl.SHA256)); err != nil {
		t.Errorf("the complete archive of cccl was removed: %v", err)
	}
	want := "the downloads still need " + fetch.SizeText(nvcc.Size+cudart.Size) + " in " + dir
	if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "cudaenv cache prune") {
		t.Errorf("error = %q\nwant it to say %q", err, want)
	}
}
