package install

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

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
		case <-time.After(10 * time.Second):
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
	const pypiRetry = `^read http://127\.0\.0\.1:\d+/simple/nvidia-cuda-runtime(-cu1[12])?/: no data for 200ms; retrying in (500ms \(attempt 2|1s \(attempt 3) of 3\)$`
	tests := []struct {
		desc   string
		answer func(w http.ResponseWriter, r *http.Request) bool
		req    Request
		lines  []string
		err    string
	}{
		{"the release listing stalls after its headers", nil, Request{Args: []string{"12.4"}},
			[]string{`^list cuda releases: no data for 200ms; retrying in 1ms \(attempt 2 of 5\)$`},
			`^install 12\.4: list cuda releases: no data for 200ms \(gave up after 2 attempts in \d+ms\): http://127\.0\.0\.1:\d+/cuda/redist/; check the network, set CUDAENV_MIRROR to a mirror, or try --source pypi$`},
		{"the manifest stalls after its headers", listing, Request{Args: []string{"12.4"}},
			[]string{`^get cuda 12\.4\.1 manifest: no data for 200ms; retrying in 1ms \(attempt 2 of 5\)$`},
			`^install cuda 12\.4\.1: get cuda 12\.4\.1 manifest: no data for 200ms \(gave up after 2 attempts in \d+ms\): http://127\.0\.0\.1:\d+/cuda/redist/redistrib_12\.4\.1\.json; check the network, set CUDAENV_MIRROR to a mirror, or try --source pypi$`},
		{"a PyPI project page stalls after its headers", nil, Request{Args: []string{"12.4"}, Source: "pypi"},
			// Three pages at once (the runtime's projects), each retried
			// twice with PyPI's own backoff: one line per retry.
			[]string{pypiRetry, pypiRetry, pypiRetry, pypiRetry, pypiRetry, pypiRetry},
			`^install 12\.4 --source pypi: list CUDA releases on http://127\.0\.0\.1:\d+/simple/: (read http://127\.0\.0\.1:\d+/simple/nvidia-cuda-runtime(-cu1[12])?/: no data for 200ms(; |$)){3}$`},
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
			// A stall limit of 200ms (15s by default), and a budget with
			// room for two attempts at a document (three by default).
			in.client.DocumentStall, in.client.DocumentBudget, in.client.RetryDelay = 200*time.Millisecond, 500*time.Millisecond, time.Millisecond
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
