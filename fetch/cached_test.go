package fetch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/cudaenv/cudaenv/fetch/fetchtest"
)

func TestCachedReleasesReadsEveryMirrorsIndexWithoutAsking(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "a cache with 'quotes' and $dollar")
	m := fetchtest.NewMirror(t, fetchtest.Options{})
	c := &Client{Base: m.URL(), CacheDir: cache}
	want, err := c.Releases(context.Background(), CUDA, false)
	if err != nil {
		t.Fatal(err)
	}
	// A second mirror's index, and files that are not indexes.
	other := filepath.Join(cache, "index", "othermirror")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(other, "cuda.json"), []byte(`{"base": 7, "releases": ["99.1.0"]}`), 0o644)
	os.WriteFile(filepath.Join(other, "cudnn.json"), []byte(`not json`), 0o644)
	m.Close() // nothing may be asked from here on

	got := CachedReleases(cache, CUDA)
	for _, r := range append(want, "99.1.0") {
		if !slices.Contains(got, r) {
			t.Errorf("CachedReleases(cuda) lacks %s", r)
		}
	}
	if len(got) != len(want)+1 {
		t.Errorf("CachedReleases(cuda) has %d releases, want %d", len(got), len(want)+1)
	}
	if got := CachedReleases(cache, CUDNN); len(got) != 0 {
		t.Errorf("CachedReleases(cudnn) = %v, want none (no cuDNN index was cached, the other is not JSON)", got)
	}
	if got := CachedReleases("", CUDA); got != nil {
		t.Errorf("CachedReleases with no cache = %v", got)
	}
	if got := CachedReleases(cache, Product("../index")); got != nil {
		t.Errorf("CachedReleases(../index) = %v, want nothing for a product that is no name", got)
	}
}

func TestCachedIndexReadIsBounded(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "index", "k", "cuda.json")
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte(`{"releases": ["12.4.1"`+strings.Repeat(`, "12.4.1"`, maxCachedIndex/10)+`]}`), 0o644)
	if got := CachedReleases(dir, CUDA); got != nil {
		t.Errorf("a %d-byte index gave %d releases, want none (read is bounded)", maxCachedIndex, len(got))
	}
}

// A manifest another user left in a shared cache is not believed: it
// names the archives and the sha256 they are checked against.
func TestAManifestAnotherUserCachedIsNotBelieved(t *testing.T) {
	if runtime.GOOS == "windows" || os.Getuid() != 0 {
		t.Skip("needs root to give a file to another user")
	}
	cache := t.TempDir()
	c := &Client{Base: "http://127.0.0.1:9", CacheDir: cache, Offline: true}
	cp := c.manifestPath(CUDA, "12.4.1")
	if err := os.MkdirAll(filepath.Dir(cp), 0o777); err != nil {
		t.Fatal(err)
	}
	manifest := `{"release_label":"12.4.1","cuda_nvcc":{"name":"x","version":"12.4.131","linux-x86_64":{"relative_path":"evil.tar.xz","sha256":"` + strings.Repeat("0", 64) + `","size":"1"}}}`
	if err := os.WriteFile(cp, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Manifest(t.Context(), CUDA, "12.4.1"); err != nil {
		t.Fatalf("this user's own cached manifest: %v", err)
	}
	if err := os.Chown(cp, 65534, 65534); err != nil {
		t.Skip(err)
	}
	if _, err := c.Manifest(t.Context(), CUDA, "12.4.1"); !errors.Is(err, ErrOffline) {
		t.Errorf("another user's cached manifest was used (err %v)", err)
	}
}
