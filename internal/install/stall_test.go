package install

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cudaenv/cudaenv/fetch"
	"github.com/cudaenv/cudaenv/internal/testwait"
	"github.com/cudaenv/cudaenv/store"
)

// stallServer answers what answer says; every other request gets its
// headers and then nothing until the client goes away.
func stallServer(t *testing.T, answer func(w http.ResponseWriter, r *http.Request) bool) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if answer != nil && answer(w, r) {
			return
		}
		w.Header().Set("Content-Length", "100000")
		w.WriteHeader(http.StatusOK)
		w.Write([]byte("{"))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-testwait.After(t):
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestAnInstallWhoseMetadataStallsGivesUpByItself(t *testing.T) {
	listing := func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path != "/cuda/redist/" {
			return false
		}
		w.Write([]byte("<a href='redistrib_12.4.1.json'>redistrib_12.4.1.json</a>\n"))
		return true
	}
	var listed atomic.Int32
	stallsTwice := func(w http.ResponseWriter, r *http.Request) bool {
		return r.URL.Path == "/cuda/redist/" && listed.Add(1) > 2 && listing(w, r)
	}
	const pypiRetry = `^read http://127\.0\.0\.1:\d+/simple/(nvidia-cuda-runtime(-cu1[12])?|cuda-toolkit)/: no data for 200ms; retrying in (500ms \(attempt 2|1s \(attempt 3) of at most 3; [0-9.]+s left for metadata\)$`
	tests := []struct {
		desc   string
		answer func(w http.ResponseWriter, r *http.Request) bool
		req    Request
		budget time.Duration // for all the install's documents
		lines  []string
		err    string
	}{
		{"the release listing stalls after its headers", nil, Request{Args: []string{"12.4"}}, 500 * time.Millisecond,
			[]string{`^list cuda releases: no data for 200ms; retrying in 1ms \(attempt 2 of at most 5; [0-9.]+ms left for metadata\)$`},
			`^install 12\.4: list cuda releases: no data for 200ms \(gave up after 2 attempts in \d+ms\): http://127\.0\.0\.1:\d+/cuda/redist/; check the network, use a mirror \(cudaenv config set mirror URL\), or try --source pypi$`},
		{"the manifest stalls after its headers", listing, Request{Args: []string{"12.4"}}, 500 * time.Millisecond,
			[]string{`^get cuda 12\.4\.1 manifest: no data for 200ms; retrying in 1ms \(attempt 2 of at most 5; [0-9.]+ms left for metadata\)$`},
			`^install cuda 12\.4\.1: get cuda 12\.4\.1 manifest: no data for 200ms \(gave up after 2 attempts in \d+ms\): http://127\.0\.0\.1:\d+/cuda/redist/redistrib_12\.4\.1\.json; check the network, use a mirror \(cudaenv config set mirror URL\), or try --source pypi$`},
		// The listing's two stalls leave the manifest one attempt: one
		// budget for both, not one each.
		{"the release listing stalls twice and then answers, and the manifest stalls", stallsTwice, Request{Args: []string{"12.4"}}, 700 * time.Millisecond,
			[]string{
				`^list cuda releases: no data for 200ms; retrying in 1ms \(attempt 2 of at most 5; [0-9.]+ms left for metadata\)$`,
				`^list cuda releases: no data for 200ms; retrying in 2ms \(attempt 3 of at most 5; [0-9.]+ms left for metadata\)$`,
			},
			`^install cuda 12\.4\.1: get cuda 12\.4\.1 manifest: no data for 200ms \(gave up after 1 attempts in \d+ms\): http://127\.0\.0\.1:\d+/cuda/redist/redistrib_12\.4\.1\.json; check the network, use a mirror \(cudaenv config set mirror URL\), or try --source pypi$`},
		{"a PyPI project page stalls after its headers", nil, Request{Args: []string{"12.4"}, Source: "pypi"}, 5 * time.Second,
			// Four pages at once (the runtime's projects and the
			// meta-package's), each retried twice with PyPI's own backoff:
			// one line per retry.
			[]string{pypiRetry, pypiRetry, pypiRetry, pypiRetry, pypiRetry, pypiRetry, pypiRetry, pypiRetry},
			`^install 12\.4 --source pypi: list CUDA releases on http://127\.0\.0\.1:\d+/simple/: (read http://127\.0\.0\.1:\d+/simple/(nvidia-cuda-runtime(-cu1[12])?|cuda-toolkit)/: no data for 200ms(; |$)){4}$`},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			srv := stallServer(t, tt.answer)
			var mu sync.Mutex
			var lines []string
			in := w.installer(t, func(o *Options) {
				o.Mirror, o.PyPIIndex = srv.URL, srv.URL+"/simple/"
				o.Notice = func(l string) { mu.Lock(); lines = append(lines, l); mu.Unlock() }
			})
			// A stall limit of 200ms (15s by default), and a budget for the
			// stalls of all the install's documents (50s by default).
			in.client.DocumentStall, in.client.Budget, in.client.RetryDelay = 200*time.Millisecond, fetch.NewBudget(tt.budget), time.Millisecond
			_, err := in.Install(context.Background(), tt.req)
			if err == nil || !regexp.MustCompile(tt.err).MatchString(err.Error()) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err = %v, want one line matching %s", err, tt.err)
			}
			t.Log(err)
			mu.Lock()
			defer mu.Unlock()
			if len(lines) != len(tt.lines) {
				t.Fatalf("%d lines, want %d:\n%s", len(lines), len(tt.lines), strings.Join(lines, "\n"))
			}
			for i, re := range tt.lines {
				if !regexp.MustCompile(re).MatchString(lines[i]) {
					t.Errorf("line %d = %q, want %s", i+1, lines[i], re)
				}
			}
			if list, _ := w.store.List(store.CUDA); len(list) != 0 {
				t.Errorf("installed %+v", list)
			}
		})
	}
}
