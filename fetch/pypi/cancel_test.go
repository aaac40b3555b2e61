package pypi

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand"
	"testing"
	"time"
)

// slowReaderAt reads like a disk that takes 20 ms per read.
type slowReaderAt struct{ r io.ReaderAt }

func (s slowReaderAt) ReadAt(p []byte, off int64) (int, error) {
	time.Sleep(20 * time.Millisecond)
	if len(p) > 4096 {
		p = p[:4096]
	}
	return s.r.ReadAt(p, off)
}

// Ctrl-C during a large wheel's extraction ends it promptly, mid-file,
// instead of after the whole wheel.
func TestExtractWheelStopsSoonAfterItsContextEnds(t *testing.T) {
	noise := make([]byte, 1<<20) // 1 MiB that does not compress: ~5 s at this speed
	rand.New(rand.NewSource(1)).Read(noise)
	data := buildZip(t, zipEntry{name: "nvidia/cu13/lib/libbig.so.13", body: string(noise)})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	err := ExtractWheelContext(ctx, slowReaderAt{bytes.NewReader(data)}, int64(len(data)), t.TempDir())
	took := time.Since(start)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if took > 2*time.Second {
		t.Errorf("took %v after the context ended; the whole wheel takes seconds", took)
	}
}
