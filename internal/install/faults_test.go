package install

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cudaenv/cudaenv/internal/testwait"
	"github.com/cudaenv/cudaenv/store"
)

// CUDA and cuDNN in one command: cuDNN is installed, then CUDA fails.
// cuDNN's hint names the CUDA major, not the CUDA that failed (issue #34:
// "activate it with: cudaenv use 12.4.1 cudnn@…" after CUDA 12.4.1 failed).
func TestALibrarysHintDoesNotNameACUDAThatFailed(t *testing.T) {
	w := newWorld(t)
	target, _ := url.Parse(w.mirror.URL())
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "cuda_nvcc-") {
			// nvcc fails once cuDNN is in place.
			// However long that takes on a busy machine: until the
			// test's deadline, not a fixed number of seconds.
			for limit := testwait.Limit(t); time.Now().Before(limit); time.Sleep(10 * time.Millisecond) {
				if e, ok := w.store.Get(store.Cudnn, "9.5.1.17-cuda12"); ok && e.Err == nil {
					break
				}
			}
			http.NotFound(rw, r)
			return
		}
		proxy.ServeHTTP(rw, r)
	}))
	defer srv.Close()
	in := w.installer(t, func(o *Options) { o.Mirror = srv.URL })
	_, err := in.Install(context.Background(), Request{Args: []string{"12.4", "cudnn@9.5"}, Profile: "minimal"})
	if err == nil || !strings.Contains(err.Error(), "cuda_nvcc") {
		t.Fatalf("Install = %v; want CUDA's nvcc to fail", err)
	}
	var uses []string
	for _, r := range w.rec.results() {
		uses = append(uses, r.Label+": "+r.Use)
	}
	if len(uses) != 1 || uses[0] != "cuDNN 9.5.1.17-cuda12: 12 cudnn@9.5.1.17" {
		t.Fatalf("results %q; want cuDNN's, naming CUDA 12, not 12.4.1", uses)
	}
}
