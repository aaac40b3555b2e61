package pypi_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"testing"

	"github.com/cudaenv/cudaenv/fetch"
	"github.com/cudaenv/cudaenv/fetch/pypi"
)

// No test reaches pypi.org but the end-to-end checks asked for
// (e2e_test.go): the index's default client goes through
// http.DefaultTransport, which refuses other hosts than this machine's
// here.
func TestMain(m *testing.M) {
	if !e2e() {
		http.DefaultTransport = fetch.LoopbackOnly(http.DefaultTransport)
	}
	os.Exit(m.Run())
}

func e2e() bool { return os.Getenv("CUDAENV_E2E_PYPI") == "1" }

func TestAnIndexLeftAtPyPIIsRefusedUnderTest(t *testing.T) {
	if e2e() {
		t.Skip("the end-to-end checks reach the real index")
	}
	var lines []string
	ix, err := pypi.NewIndex("", pypi.WithNotice(func(l string) { lines = append(lines, l) }))
	if err != nil {
		t.Fatal(err)
	}
	_, err = ix.Project(context.Background(), "nvidia-cuda-runtime")
	if !errors.Is(err, fetch.ErrNotLoopback) || len(lines) != 0 {
		t.Fatalf("err = %v after %d retries, want the guard's refusal at once", err, len(lines))
	}
}
