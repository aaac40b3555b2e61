package pypi

import (
	"archive/zip"
	"cmp"
	"context"
	"io/fs"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/cudaenv/cudaenv/internal/filelist"
	"github.com/cudaenv/cudaenv/internal/rootfs"
)

// entryJob is one wheel entry to write: a file or a symlink.
type entryJob struct {
	f   *zip.File
	rel string
}

// copyBufSize is each extraction worker's copy buffer: memory stays a few
// hundred KiB a core, whatever the wheel.
const copyBufSize = 256 << 10

// extractEntries writes jobs into t. inOrder (a wheel with symlinks or a
// name given twice) writes them one after another as listed; otherwise
// files are written by one worker per core, largest first so that the
// last to finish is a small one. The first error stops the others.
func extractEntries(ctx context.Context, t *rootfs.Tree, jobs []entryJob, inOrder bool, o writeOptions) error {
	workers := min(runtime.GOMAXPROCS(0), len(jobs))
	if inOrder || workers <= 1 {
		buf := make([]byte, copyBufSize)
		for _, j := range jobs {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := extractEntry(ctx, t, j, buf, o); err != nil {
				return err
			}
		}
		return nil
	}
	order := slices.Clone(jobs)
	slices.SortStableFunc(order, func(a, b entryJob) int {
		return cmp.Compare(b.f.UncompressedSize64, a.f.UncompressedSize64)
	})
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next     atomic.Int64
		once     sync.Once
		firstErr error
		wg       sync.WaitGroup
	)
	for range workers {
		wg.Go(func() {
			buf := make([]byte, copyBufSize)
			for {
				i := int(next.Add(1) - 1)
				if i >= len(order) || ctx.Err() != nil {
					return
				}
				if err := extractEntry(ctx, t, order[i], buf, o); err != nil {
					once.Do(func() { firstErr = err; cancel() })
					return
				}
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return context.Cause(ctx) // the caller's, if it ended
}

// writeOptions are how files are written: read-only for the cache of
// unpacked wheels, each file's sha256 told to wrote and to sums (hashed
// as it is written unless known gives it).
type writeOptions struct {
	readOnly bool
	// wrote, if set, hears of each file written whole: its mode as
	// installed (0644 or 0755), size and sha256 (nil when known gave it).
	wrote func(f *zip.File, rel string, perm fs.FileMode, size int64, sum []byte)
	// known, if set, gives the sha256 of the entries that need not be
	// hashed as written (the wheel's RECORD).
	known func(f *zip.File) ([32]byte, bool)
	// sums, if set, is told every file's sha256 (see filelist.Sums).
	sums *filelist.Sums
}

func extractEntry(ctx context.Context, t *rootfs.Tree, j entryJob, buf []byte, o writeOptions) error {
	if j.f.Mode()&fs.ModeSymlink != 0 {
		return extractLink(t, j.f, j.rel)
	}
	return extractFile(ctx, t, j.f, j.rel, buf, o)
}
