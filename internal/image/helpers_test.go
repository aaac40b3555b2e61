package image

import (
	"archive/tar"
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	ggcr "github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"

	"github.com/cudaenv/cudaenv/fetch"
	"github.com/cudaenv/cudaenv/fetch/fetchtest"
	"github.com/cudaenv/cudaenv/internal/dirs"
	"github.com/cudaenv/cudaenv/internal/install"
	"github.com/cudaenv/cudaenv/store"
)

// No test reaches the internet: clients made by default go through
// http.DefaultTransport, which refuses other hosts than this machine's.
func TestMain(m *testing.M) {
	http.DefaultTransport = fetch.LoopbackOnly(http.DefaultTransport)
	os.Exit(m.Run())
}

// world is a store, a download cache and a mirror of NVIDIA's server
// (real manifests, generated archives); nothing is installed.
type world struct {
	t      *testing.T
	mirror *fetchtest.Mirror
	opts   install.Options
}

func newWorld(t *testing.T, mirror *fetchtest.Mirror) *world {
	t.Helper()
	if mirror == nil {
		mirror = fetchtest.NewMirror(t, fetchtest.Options{})
	}
	root := t.TempDir()
	empty := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(empty.Close)
	return &world{t: t, mirror: mirror, opts: install.Options{
		Store:     store.New(dirs.Dirs{Root: filepath.Join(root, "root"), Cache: filepath.Join(root, "cache")}),
		CacheDir:  filepath.Join(root, "cache"),
		Mirror:    mirror.URL(),
		PyPIIndex: empty.URL + "/simple/",
		GOOS:      "linux", GOARCH: "amd64",
	}}
}

func (w *world) installer() *install.Installer {
	w.t.Helper()
	in, err := install.New(w.opts)
	if err != nil {
		w.t.Fatal(err)
	}
	return in
}

func (w *world) make(req Request) (*Result, error) {
	if req.Registry == nil {
		req.Registry = &Registry{}
	}
	return Make(context.Background(), w.installer(), req)
}

func (w *world) mustMake(req Request) *Result {
	w.t.Helper()
	res, err := w.make(req)
	if err != nil {
		w.t.Fatal(err)
	}
	return res
}

// minimal12 asks for CUDA 12.4 with the minimal profile.
func minimal12(out ...string) Request {
	return Request{Select: install.ImageRequest{Args: []string{"12.4"}, Profile: "minimal", Platforms: []string{"linux-x86_64"}}, Outputs: out}
}

// readLayout reads the image named ref from an OCI layout.
func readLayout(t *testing.T, dir, ref string) v1.Image {
	t.Helper()
	p, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range im.Manifests {
		if d.Annotations[AnnotationRefName] == ref {
			img, err := idx.Image(d.Digest)
			if err != nil {
				t.Fatal(err)
			}
			return img
		}
	}
	t.Fatalf("no image named %q in %s", ref, dir)
	return nil
}

// tarNames lists a layer's entries (with a / after folders, -> TARGET
// after links).
func tarNames(t *testing.T, l v1.Layer) []string {
	t.Helper()
	rc, err := l.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var out []string
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		n := h.Name
		if h.Typeflag == tar.TypeSymlink {
			n += " -> " + h.Linkname
		}
		if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" || !h.ModTime.Equal(epoch) {
			t.Errorf("%s: owner %d/%d %q/%q, time %v; want root's, no names, %v", h.Name, h.Uid, h.Gid, h.Uname, h.Gname, h.ModTime, epoch)
		}
		out = append(out, n)
	}
}

// registry is go-containerregistry's in-process registry, on this
// machine, counting the blobs pushed to it; mangle (if set) may change an
// answer.
type registry struct {
	srv    *httptest.Server
	host   string
	mu     sync.Mutex
	blobs  []string // digests committed, in order
	mangle func(w http.ResponseWriter, r *http.Request, next http.Handler) bool
}

func newRegistry(t *testing.T) *registry {
	r := &registry{}
	h := ggcr.New(ggcr.Logger(log.New(io.Discard, "", 0)))
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method == http.MethodPut && strings.Contains(req.URL.Path, "/blobs/uploads/") {
			if d := req.URL.Query().Get("digest"); d != "" {
				r.mu.Lock()
				r.blobs = append(r.blobs, d)
				r.mu.Unlock()
			}
		}
		if r.mangle != nil && r.mangle(w, req, h) {
			return
		}
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(r.srv.Close)
	r.host = strings.TrimPrefix(r.srv.URL, "http://")
	return r
}

func (r *registry) sent() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append([]string(nil), r.blobs...)
	sort.Strings(out)
	r.blobs = nil
	return out
}

func digests(layers []Layer) []string {
	var out []string
	for _, l := range layers {
		out = append(out, l.Digest.String())
	}
	return out
}

// bigFile is a file of n moderately compressible bytes.
func bigFile(t *testing.T, n int64) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "big")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := fetchtest.Fill(f, n, 7); err != nil {
		t.Fatal(err)
	}
	return p
}
