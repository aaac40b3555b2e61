package fetch_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cudaenv/cudaenv/fetch"
	"github.com/cudaenv/cudaenv/fetch/fetchtest"
	"github.com/cudaenv/cudaenv/internal/testwait"
)

func TestReleasesParsesTheListingAndCachesItForADay(t *testing.T) {
	m := newMirror(t, fetchtest.Options{})
	c := newClient(t, m)
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	c.Now = func() time.Time { return now }
	vs, err := c.Releases(t.Context(), fetch.CUDA, false)
	if err != nil {
		t.Fatal(err)
	}
	want := m.Versions("cuda")
	if len(vs) != len(want) {
		t.Fatalf("got %v, want %v", vs, want)
	}
	for i := 1; i < len(vs); i++ {
		a, b := vs[i-1], vs[i]
		if a == b || !less(a, b) {
			t.Errorf("not sorted oldest first: %s before %s", a, b)
		}
	}
	listings := func() int { return m.Requests()["/cuda/redist/"] }
	if listings() != 1 {
		t.Fatalf("listing requests %d", listings())
	}
	now = now.Add(23 * time.Hour)
	if _, err := c.Releases(t.Context(), fetch.CUDA, false); err != nil || listings() != 1 {
		t.Errorf("within a day: %d requests, %v", listings(), err)
	}
	if _, err := c.Releases(t.Context(), fetch.CUDA, true); err != nil || listings() != 2 {
		t.Errorf("refresh: %d requests, %v", listings(), err)
	}
	now = now.Add(25 * time.Hour)
	if _, err := c.Releases(t.Context(), fetch.CUDA, false); err != nil || listings() != 3 {
		t.Errorf("after a day: %d requests, %v", listings(), err)
	}
	c.Offline = true
	now = now.Add(100 * 24 * time.Hour)
	if got, err := c.Releases(t.Context(), fetch.CUDA, false); err != nil || listings() != 3 || !slices.Equal(got, vs) {
		t.Errorf("offline: %v, %d requests, %v", got, listings(), err)
	}
	c.CacheDir = t.TempDir()
	if _, err := c.Releases(t.Context(), fetch.CUDA, false); !errors.Is(err, fetch.ErrOffline) {
		t.Errorf("offline without cache: %v", err)
	}
}

// less compares versions numerically, independently of the package.
func less(a, b string) bool {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		if len(as[i]) != len(bs[i]) {
			return len(as[i]) < len(bs[i])
		}
		if as[i] != bs[i] {
			return as[i] < bs[i]
		}
	}
	return len(as) < len(bs)
}

func TestReleasesReadsNVIDIAStyleListings(t *testing.T) {
	listing := `<html><head><title>Index of /compute/cuda/redist</title></head><body><pre>
<a href='../'>Parent Directory</a>
<a href='cuda_nvcc/'>cuda_nvcc/</a>
<a href='redistrib_12.10.0.json'>redistrib_12.10.0.json</a>   2025-01-01
<a href="redistrib_12.9.1.json">redistrib_12.9.1.json</a>
<a href='redistrib_11.8.0.json'>redistrib_11.8.0.json</a>
<a href='redistrib-v2.schema.json'>redistrib-v2.schema.json</a>
<a href='redistrib_latest.json'>redistrib_latest.json</a>
<a href='redistrib_12.4.1.json.sig'>x</a>
</pre></body></html>`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/cuda/redist/" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(listing))
	}))
	defer srv.Close()
	c := &fetch.Client{Base: srv.URL + "/"}
	vs, err := c.Releases(t.Context(), fetch.CUDA, false)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(vs, " ") != "11.8.0 12.4.1 12.9.1 12.10.0" {
		t.Errorf("got %v", vs)
	}
}

func TestManifestIsFetchedCachedAndKeptByteForByte(t *testing.T) {
	m := newMirror(t, fetchtest.Options{})
	c := newClient(t, m)
	now := time.Now()
	c.Now = func() time.Time { return now }
	man, err := c.Manifest(t.Context(), fetch.CUDA, "12.4.1")
	if err != nil {
		t.Fatal(err)
	}
	served, _ := m.Manifest("cuda", "12.4.1")
	sum := sha256.Sum256(served)
	if man.SHA256 != hex.EncodeToString(sum[:]) {
		t.Error("manifest sha256 is not that of the served bytes")
	}
	nvcc := man.Components["cuda_nvcc"].Platforms["linux-x86_64"].Artifact
	if nvcc.URL != m.URL()+"/cuda/redist/cuda_nvcc/linux-x86_64/cuda_nvcc-linux-x86_64-12.4.131-archive.tar.xz" {
		t.Errorf("URL %s", nvcc.URL)
	}
	path := "/cuda/redist/redistrib_12.4.1.json"
	if _, err := c.Manifest(t.Context(), fetch.CUDA, "12.4.1"); err != nil || m.Requests()[path] != 1 {
		t.Errorf("second call: %d requests, %v", m.Requests()[path], err)
	}
	now = now.Add(fetch.IndexTTL + time.Minute)
	if _, err := c.Manifest(t.Context(), fetch.CUDA, "12.4.1"); err != nil || m.Requests()[path] != 2 {
		t.Errorf("after the TTL: %d requests, %v", m.Requests()[path], err)
	}
	if _, err := c.Manifest(t.Context(), fetch.CUDA, "12.4.99"); err == nil || !strings.Contains(err.Error(), "no such release") {
		t.Errorf("unknown release: %v", err)
	}
	if _, err := c.Manifest(t.Context(), fetch.CUDA, "../12"); err == nil {
		t.Error("a hostile version was accepted")
	}
}

func TestTheMirrorRewritesOnlyHashesAndSizes(t *testing.T) {
	if _, err := os.Stat(manifests); err != nil {
		t.Skip("no real manifests")
	}
	m := newMirror(t, fetchtest.Options{})
	hexRE := regexp.MustCompile(`"sha256": "[0-9a-f]{64}"`)
	sizeRE := regexp.MustCompile(`"size": "[0-9]+"`)
	for _, product := range []string{"cuda", "cudnn"} {
		for _, v := range m.Versions(product) {
			orig, err := os.ReadFile(filepath.Join(manifests, product, "redistrib_"+v+".json"))
			if err != nil {
				t.Fatal(err)
			}
			served, err := m.Manifest(product, v)
			if err != nil {
				t.Fatal(err)
			}
			norm := func(b []byte) []byte {
				b = hexRE.ReplaceAll(b, []byte(`"sha256": "H"`))
				return sizeRE.ReplaceAll(b, []byte(`"size": "S"`))
			}
			if !bytes.Equal(norm(orig), norm(served)) {
				t.Errorf("%s %s: served manifest differs beyond sha256/size", product, v)
			}
			if bytes.Equal(orig, served) {
				t.Errorf("%s %s: nothing was rewritten", product, v)
			}
			if !json.Valid(served) {
				t.Errorf("%s %s: invalid JSON", product, v)
			}
		}
	}
}

func TestStalledTransfersAreRetried(t *testing.T) {
	m := newMirror(t, fetchtest.Options{Synthetic: true})
	c := newClient(t, m)
	arts := minimal124(t, c)
	var hits atomic.Int32
	var abandoned atomic.Bool
	firstDone := make(chan struct{})
	// A proxy that hangs on the first archive request until the client
	// gives it up.
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, ".tar.xz") && hits.Add(1) == 1 {
			w.Header().Set("Content-Length", strconv.FormatInt(arts[0].Size, 10))
			w.Write([]byte{0xfd, '7', 'z'})
			w.WriteHeader(200)
			w.(http.Flusher).Flush()
			defer close(firstDone)
			select {
			case <-r.Context().Done():
				abandoned.Store(true)
			case <-testwait.After(t):
			}
			return
		}
		resp, err := http.Get(m.URL() + r.URL.Path)
		if err != nil {
			http.Error(w, err.Error(), 502)
			return
		}
		defer resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		buf := new(bytes.Buffer)
		buf.ReadFrom(resp.Body)
		w.Write(buf.Bytes())
	}))
	defer proxy.Close()
	for i := range arts {
		arts[i].URL = strings.Replace(arts[i].URL, m.URL(), proxy.URL, 1)
	}
	c.StallTimeout = 200 * time.Millisecond
	c.Jobs = 1
	if _, err := c.Fetch(t.Context(), arts[:1], t.TempDir()); err != nil {
		t.Fatal(err)
	}
	<-firstDone
	if !abandoned.Load() {
		t.Error("the stalled transfer was not given up by the client")
	}
	if hits.Load() != 2 {
		t.Errorf("%d archive requests, want 2", hits.Load())
	}
}

func TestLinkLinuxLayout(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "lib"), 0o755)
	os.MkdirAll(filepath.Join(dir, "include"), 0o755)
	os.WriteFile(filepath.Join(dir, "lib", "libx.so"), nil, 0o644)
	for i := 0; i < 2; i++ { // idempotent
		if err := fetch.LinkLinuxLayout(dir, "linux-sbsa"); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[string]string{
		"lib64":                      "lib",
		"targets/sbsa-linux/include": "../../include",
		"targets/sbsa-linux/lib":     "../../lib",
		"targets/sbsa-linux/lib64":   "../../lib",
	} {
		if got, err := os.Readlink(filepath.Join(dir, name)); err != nil || got != want {
			t.Errorf("%s → %q, %v; want %q", name, got, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "targets/sbsa-linux/lib/libx.so")); err != nil {
		t.Error(err)
	}
	if err := fetch.LinkLinuxLayout(dir, "windows-x86_64"); err == nil {
		t.Error("windows accepted")
	}
	t.Run("an existing lib64 directory is left alone", func(t *testing.T) {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "lib"), 0o755)
		os.MkdirAll(filepath.Join(dir, "lib64"), 0o755)
		if err := fetch.LinkLinuxLayout(dir, "linux-x86_64"); err != nil {
			t.Fatal(err)
		}
		if st, err := os.Lstat(filepath.Join(dir, "lib64")); err != nil || !st.IsDir() {
			t.Errorf("lib64 changed: %v", err)
		}
	})
}

func TestTheMirrorWorksWithSyntheticManifests(t *testing.T) {
	m := fetchtest.NewMirror(t, fetchtest.Options{Synthetic: true})
	c := newClient(t, m)
	vs, err := c.Releases(context.Background(), fetch.CUDNN, false)
	if err != nil || strings.Join(vs, ",") != "9.5.1" {
		t.Fatalf("%v %v", vs, err)
	}
	arts := selectFrom(t, c, fetch.CUDA, "13.0.0", fetch.Selection{Platform: "linux-x86_64", Profile: "minimal"})
	if got := strings.Join(ids(arts), ","); got != "cuda_cccl,cuda_crt,cuda_cudart,cuda_nvcc,libnvvm" {
		t.Errorf("minimal 13.0.0: %s", got)
	}
	if _, err := c.Fetch(t.Context(), arts, t.TempDir()); err != nil {
		t.Fatal(err)
	}
}

func ids(arts []fetch.Artifact) []string {
	var out []string
	for _, a := range arts {
		out = append(out, a.Component)
	}
	return out
}
