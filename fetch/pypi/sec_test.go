package pypi

// Hostile or broken indexes (issue #10): silent and slow servers,
// credentials in the index URL.

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cudaenv/cudaenv/fetch"
	"github.com/cudaenv/cudaenv/internal/testwait"
)

func TestSilentAndSlowIndexesTimeOutAndSayWhatIsRetried(t *testing.T) {
	for name, h := range map[string]http.HandlerFunc{
		"never sends headers": func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() },
		"sends headers, then nothing": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", mediaJSON)
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		},
		"sends a byte every 20ms": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", mediaJSON)
			w.WriteHeader(http.StatusOK)
			for {
				select {
				case <-r.Context().Done():
					return
				case <-time.After(20 * time.Millisecond):
				}
				if _, err := w.Write([]byte(" ")); err != nil {
					return
				}
				w.(http.Flusher).Flush()
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(h)
			defer srv.Close()
			var mu sync.Mutex
			var lines []string
			ix, err := NewIndex(srv.URL+"/simple/", WithRetries(1, time.Millisecond),
				WithLimits(fetch.Limits{Header: 100 * time.Millisecond, Stall: 200 * time.Millisecond, MinSpeed: 1000, Window: 300 * time.Millisecond}),
				WithNotice(func(s string) { mu.Lock(); lines = append(lines, s); mu.Unlock() }))
			if err != nil {
				t.Fatal(err)
			}
			// The index's own deadlines must fire: the test's only ends a
			// hang, and its error is no TimeoutError.
			_, err = ix.Project(testwait.Context(t), "nvidia-cuda-nvcc-cu12")
			var te *fetch.TimeoutError
			if !errors.As(err, &te) || !fetch.Unreachable(err) {
				t.Errorf("want a timeout that counts as unreachable, got %v", err)
			}
			mu.Lock()
			defer mu.Unlock()
			if all := strings.Join(lines, "\n"); !strings.Contains(all, "retrying") || !strings.Contains(all, "nvidia-cuda-nvcc-cu12") {
				t.Errorf("no line says what is retried: %q", lines)
			}
		})
	}
}

func TestIndexKeepsTokensOutOfMessages(t *testing.T) {
	const token = "pypi-t0ken"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusBadGateway)
	}))
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	defer srv.Close()
	for _, base := range []string{srv.URL, dead.URL} {
		var lines []string
		ix, err := NewIndex(strings.Replace(base, "://", "://"+token+"@", 1)+"/simple/",
			WithRetries(1, time.Millisecond), WithNotice(func(s string) { lines = append(lines, s) }))
		if err != nil {
			t.Fatal(err)
		}
		_, err = ix.Project(t.Context(), "p")
		if err == nil {
			t.Fatal("no error")
		}
		for _, s := range append(lines, err.Error(), ix.URL()) {
			if strings.Contains(s, token) {
				t.Errorf("the token is in %q", s)
			}
		}
	}
}
