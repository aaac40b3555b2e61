package fetch_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"sync/atomic"
	"testing"

	"github.com/cudaenv/cudaenv/fetch"
)

// No test reaches the internet: every client made by default goes
// through http.DefaultTransport, which refuses other hosts than this
// machine's here.
func TestMain(m *testing.M) {
	http.DefaultTransport = fetch.LoopbackOnly(http.DefaultTransport)
	os.Exit(m.Run())
}

// A client left at NVIDIA's server is refused by the guard at once: not
// retried, and not unreachable (which would send auto to PyPI and hide
// the stray test).
func TestAClientLeftAtNVIDIAsServerIsRefusedUnderTest(t *testing.T) {
	var notices atomic.Int32
	c := &fetch.Client{CacheDir: t.TempDir(), RetryDelay: 1, Notice: func(string) { notices.Add(1) }}
	_, err := c.Releases(context.Background(), fetch.CUDA, true)
	if !errors.Is(err, fetch.ErrNotLoopback) || fetch.Unreachable(err) {
		t.Fatalf("err = %v, want the guard's refusal, not unreachable", err)
	}
	if notices.Load() != 0 {
		t.Errorf("the refusal was retried")
	}
}
