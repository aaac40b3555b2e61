package pypi

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand"
	"sync/atomic"
	"testing"
)

// countingReaderAt reads at most 4 KiB a call, counts its calls and runs
// at, if set, at the call numbered atCall.
type countingReaderAt struct {
	r      io.ReaderAt
	calls  atomic.Int64
	atCall int64
	at     func()
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if n := c.calls.Add(1); n == c.atCall && c.at != nil {
		c.at()
	}
	if len(p) > 4096 {
		p = p[:4096]
	}
	return c.r.ReadAt(p, off)
}

// Ctrl-C during a large wheel's extraction ends it promptly, mid-file,
// instead of after the whole wheel: counted in reads of the wheel, not in
// seconds, so a busy machine cannot make it fail.
func TestExtractWheelStopsSoonAfterItsContextEnds(t *testing.T) {
	noise := make([]byte, 1<<20) // 1 MiB that does not compress
	rand.New(rand.NewSource(1)).Read(noise)
	data := buildZip(t, zipEntry{name: "nvidia/cu13/lib/libbig.so.13", body: string(noise)})

	whole := &countingReaderAt{r: bytes.NewReader(data)}
	if err := ExtractWheelContext(context.Background(), whole, int64(len(data)), t.TempDir()); err != nil {
		t.Fatal(err)
	}
	all := whole.calls.Load()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var atCancel int64
	r := &countingReaderAt{r: bytes.NewReader(data), atCall: all / 4}
	r.at = func() { atCancel = r.calls.Load(); cancel() }
	err := ExtractWheelContext(ctx, r, int64(len(data)), t.TempDir())
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if after := r.calls.Load() - atCancel; after > all/8 {
		t.Errorf("%d of the wheel's %d reads came after the context ended (cancelled at read %d); want it to stop mid-file", after, all, atCancel)
	}
}
