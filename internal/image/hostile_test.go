package image

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/cudaenv/cudaenv/internal/testwait"
)

// hostileLayer is a layer that would do harm if it were unpacked:
// entries climbing out, absolute, a link to /, a hard link out, a header
// declaring 1 TiB.
func hostileLayer(t *testing.T) v1.Layer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range []*tar.Header{
		{Name: "../../../../../../tmp/cudaenv-evil", Typeflag: tar.TypeReg, Mode: 0o644, Size: 5},
		{Name: "/etc/cudaenv-evil", Typeflag: tar.TypeReg, Mode: 0o644, Size: 5},
		{Name: "opt", Typeflag: tar.TypeSymlink, Linkname: "/"},
		{Name: "passwd", Typeflag: tar.TypeLink, Linkname: "../../etc/passwd"},
	} {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			tw.Write([]byte("pwned"))
		}
	}
	tw.Close()
	data := buf.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// ociBase writes an OCI-typed base image with the given layers (and a
// linux/amd64 config) into a new layout and returns its folder.
func ociBase(t *testing.T, layers ...v1.Layer) (string, v1.Image) {
	t.Helper()
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err := mutate.AppendLayers(img, layers...)
	if err != nil {
		t.Fatal(err)
	}
	cf, _ := img.ConfigFile()
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", "amd64"
	cf.Config.Env = []string{"PATH=/usr/bin:/bin"}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.AppendImage(img); err != nil {
		t.Fatal(err)
	}
	return dir, img
}

func blobFile(dir string, h v1.Hash) string { return filepath.Join(dir, "blobs", h.Algorithm, h.Hex) }

// rewriteManifest replaces a layout's one image manifest with edit's.
func rewriteManifest(t *testing.T, dir string, img v1.Image, edit func(m *v1.Manifest)) {
	t.Helper()
	m, _ := img.Manifest()
	m = m.DeepCopy()
	edit(m)
	raw, _ := json.Marshal(m)
	h, size, _ := v1.SHA256(bytes.NewReader(raw))
	if err := os.WriteFile(blobFile(dir, h), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	idx := v1.IndexManifest{SchemaVersion: 2, MediaType: types.OCIImageIndex, Manifests: []v1.Descriptor{{MediaType: types.OCIManifestSchema1, Digest: h, Size: size}}}
	data, _ := json.Marshal(idx)
	if err := os.WriteFile(filepath.Join(dir, "index.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestHostileBasesAreRefusedOrNeverUnpacked(t *testing.T) {
	w := newWorld(t, nil)
	safe, _ := ociBase(t, hostileLayer(t))
	tests := []struct {
		desc  string
		setup func(t *testing.T) string // the --base
		want  string                    // "" for a build that works
	}{
		{"a base whose layer would escape, link to / and claim 1 TiB is carried byte for byte, never unpacked", func(t *testing.T) string {
			return "oci:" + safe
		}, ""},
		{"an index.json of 5 MiB", func(t *testing.T) string {
			dir, _ := ociBase(t)
			os.WriteFile(filepath.Join(dir, "index.json"), bytes.Repeat([]byte(" "), 5<<20), 0o644)
			return "oci:" + dir
		}, "refusing more than 4 MiB"},
		{"a config said to be 1 GiB", func(t *testing.T) string {
			dir, img := ociBase(t)
			rewriteManifest(t, dir, img, func(m *v1.Manifest) { m.Config.Size = 1 << 30 })
			return "oci:" + dir
		}, "refusing a config outside 1 byte to 8 MiB"},
		{"a config whose bytes are not its digest's", func(t *testing.T) string {
			dir, img := ociBase(t)
			m, _ := img.Manifest()
			p := blobFile(dir, m.Config.Digest)
			data, _ := os.ReadFile(p)
			data[len(data)-2] ^= 1
			os.WriteFile(p, data, 0o644)
			return "oci:" + dir
		}, "not what its digest says"},
		{"a config blob that is a link to another file", func(t *testing.T) string {
			dir, img := ociBase(t)
			m, _ := img.Manifest()
			p := blobFile(dir, m.Config.Digest)
			os.Rename(p, p+".real")
			os.Symlink(p+".real", p)
			return "oci:" + dir
		}, "is not a plain file"},
		{"501 layers", func(t *testing.T) string {
			dir, img := ociBase(t, hostileLayer(t))
			rewriteManifest(t, dir, img, func(m *v1.Manifest) {
				for len(m.Layers) < 501 {
					m.Layers = append(m.Layers, m.Layers[0])
				}
			})
			return "oci:" + dir
		}, "it has 501 layers, more than 500"},
		{"a layer whose bytes are not its digest's", func(t *testing.T) string {
			dir, img := ociBase(t, hostileLayer(t))
			m, _ := img.Manifest()
			p := blobFile(dir, m.Layers[0].Digest)
			data, _ := os.ReadFile(p)
			data[len(data)/2] ^= 0xff
			os.WriteFile(p, data, 0o644)
			return "oci:" + dir
		}, "not what its digest says; refusing it"},
		{"a digest that is no sha256", func(t *testing.T) string {
			dir, img := ociBase(t)
			rewriteManifest(t, dir, img, func(m *v1.Manifest) {
				m.Config.Digest = v1.Hash{Algorithm: "sha512", Hex: strings.Repeat("0", 128)}
			})
			return "oci:" + dir
		}, "only sha256 digests are read"},
		{"a layout with two images and no name", func(t *testing.T) string {
			dir, img := ociBase(t)
			p, _ := layout.FromPath(dir)
			p.AppendImage(img, layout.WithAnnotations(map[string]string{AnnotationRefName: "other"}))
			return "oci:" + dir
		}, "holds 2 images; name one"},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			req := minimal12("oci:" + out)
			req.Base = tc.setup(t)
			_, err := w.make(req)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				base, _ := layout.FromPath(strings.TrimPrefix(req.Base, "oci:"))
				ii, _ := base.ImageIndex()
				im, _ := ii.IndexManifest()
				bi, _ := ii.Image(im.Manifests[0].Digest)
				bl, _ := bi.Layers()
				want, _ := bl[0].Digest()
				got, _ := readLayout(t, out, "12.4.1").Layers()
				if d, _ := got[0].Digest(); d != want {
					t.Errorf("the base layer became %s, was %s", d, want)
				}
				for _, p := range []string{"/tmp/cudaenv-evil", "/etc/cudaenv-evil"} {
					if _, err := os.Lstat(p); err == nil {
						t.Errorf("%s exists", p)
					}
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error with %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("a multi-line error: %q", err)
			}
			if _, serr := os.Stat(filepath.Join(out, "index.json")); serr == nil && tc.want != "not what its digest says; refusing it" {
				t.Errorf("an image was written although the base was refused")
			}
		})
	}
}

func TestRegistriesThatLieAreRefused(t *testing.T) {
	w := newWorld(t, nil)
	reg := newRegistry(t)
	base := baseImage(t, "amd64")
	baseRef, _ := name.ParseReference(reg.host + "/distro:1")
	if err := remote.Write(baseRef, base); err != nil {
		t.Fatal(err)
	}
	cfgName, _ := base.ConfigName()
	tests := []struct {
		desc   string
		mangle func(w http.ResponseWriter, r *http.Request, next http.Handler) bool
		push   bool // the lie is told to a push, not to a base's pull
		stall  time.Duration
		want   string
	}{
		{"a base's config other than its digest", func(w http.ResponseWriter, r *http.Request, next http.Handler) bool {
			if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/blobs/"+cfgName.String()) {
				rec := &recorder{h: http.Header{}}
				next.ServeHTTP(rec, r)
				body := rec.body.Bytes()
				body[len(body)-2] ^= 1
				w.Write(body)
				return true
			}
			return false
		}, false, 0, "error verifying sha256 checksum"},
		{"a manifest of 5 MiB", func(w http.ResponseWriter, r *http.Request, next http.Handler) bool {
			if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/manifests/") {
				w.Header().Set("Content-Type", string(types.DockerManifestSchema2))
				w.Write(bytes.Repeat([]byte(" "), 5<<20))
				return true
			}
			return false
		}, false, 0, "sent a manifest larger than 4 MiB"},
		{"a registry that says nothing", func(w http.ResponseWriter, r *http.Request, next http.Handler) bool {
			if strings.Contains(r.URL.Path, "/manifests/") {
				// Until the client gives up: without the stall deadline,
				// until the test's (and the error is another one).
				select {
				case <-r.Context().Done():
				case <-testwait.After(t):
				}
				return true
			}
			return false
		}, false, 300 * time.Millisecond, "sent or took nothing for 300ms; giving up"},
		{"a push answered with another manifest digest", func(w http.ResponseWriter, r *http.Request, next http.Handler) bool {
			if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/manifests/") {
				w.Header().Set("Docker-Content-Digest", "sha256:"+strings.Repeat("0", 64))
				w.WriteHeader(http.StatusCreated)
				return true
			}
			return false
		}, true, 0, "refusing a registry that does not keep what it is given"},
		{"a registry that claims a blob under another digest", func(w http.ResponseWriter, r *http.Request, next http.Handler) bool {
			if r.Method == http.MethodHead && strings.Contains(r.URL.Path, "/blobs/sha256:") {
				w.Header().Set("Docker-Content-Digest", "sha256:"+strings.Repeat("1", 64))
				w.WriteHeader(http.StatusOK)
				return true
			}
			return false
		}, true, 0, "refusing a registry that does not keep what it is given"},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			reg.mangle = tc.mangle
			defer func() { reg.mangle = nil }()
			req := minimal12()
			if tc.push {
				req.Push = reg.host + "/cuda:lied-to"
			} else {
				req.Base = baseRef.String()
				req.Outputs = []string{"oci:" + filepath.Join(t.TempDir(), "out")}
			}
			req.Registry = &Registry{Stall: tc.stall}
			_, err := w.make(req)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error with %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("a multi-line error: %q", err)
			}
		})
	}
}

func TestPlainHTTPGoesOnlyToThisMachine(t *testing.T) {
	g := &guard{rt: http.DefaultTransport, stall: time.Second}
	for _, host := range []string{"10.1.2.3:5000", "registry.local:5000", "192.168.0.9"} {
		u, _ := url.Parse("http://" + host + "/v2/")
		_, err := g.RoundTrip(&http.Request{Method: http.MethodGet, URL: u, Header: http.Header{}})
		if err == nil || !strings.Contains(err.Error(), "plain HTTP is used only for registries on this machine") {
			t.Errorf("%s: %v", host, err)
		}
	}
}

// recorder keeps a handler's answer.
type recorder struct {
	h    http.Header
	code int
	body bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.h }
func (r *recorder) Write(p []byte) (int, error) { return r.body.Write(p) }
func (r *recorder) WriteHeader(c int)           { r.code = c }
