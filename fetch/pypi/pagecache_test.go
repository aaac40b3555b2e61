package pypi_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cudaenv/cudaenv/fetch/pypi"
	"github.com/cudaenv/cudaenv/fetch/pypi/pypitest"
)

const runtimePage = "/simple/nvidia-cuda-runtime/"

// A page is read once per Index, kept in the cache as pip and uv keep it
// (used as is for the index's max-age, then asked for with its ETag), and
// what is in the cache is data like any answer: a kept page that does not
// read, or that is not one, is asked for again.
func TestPagesAreKeptAsPipKeepsThem(t *testing.T) {
	srv := pypitest.New(t, pypitest.Cacheable(), pypitest.Releases("13.0.2"))
	cache := t.TempDir()
	open := func(refresh bool) *pypi.Index {
		ix, err := pypi.NewIndex(srv.URL(), pypi.WithHTTPClient(srv.Client()), pypi.WithRetries(0, 0), pypi.WithPageCache(cache, refresh))
		if err != nil {
			t.Fatal(err)
		}
		return ix
	}
	read := func(ix *pypi.Index) []string {
		t.Helper()
		vs, err := ix.Versions(context.Background(), "nvidia-cuda-runtime")
		if err != nil {
			t.Fatal(err)
		}
		return vs
	}
	ix := open(false)
	first := read(ix)
	read(ix)
	if n := srv.Hits(runtimePage); n != 1 {
		t.Fatalf("one Index asked %d times", n)
	}
	if ix.BytesRead() == 0 {
		t.Error("no bytes counted")
	}
	fresh := open(false)
	if got := read(fresh); strings.Join(got, " ") != strings.Join(first, " ") || srv.Hits(runtimePage) != 1 || fresh.BytesRead() != 0 {
		t.Errorf("a fresh page was asked for again (%d asks, %d bytes): %v", srv.Hits(runtimePage), fresh.BytesRead(), got)
	}
	refresh := open(true)
	if got := read(refresh); strings.Join(got, " ") != strings.Join(first, " ") || srv.Hits(runtimePage) != 2 || refresh.BytesRead() != 0 {
		t.Errorf("--refresh: %d asks, %d bytes (want one answered 304): %v", srv.Hits(runtimePage), refresh.BytesRead(), got)
	}

	files, _ := filepath.Glob(filepath.Join(cache, "index", "pypi-*-nvidia-cuda-runtime.page.json"))
	if len(files) != 1 {
		t.Fatalf("kept pages: %v", files)
	}
	for _, hostile := range []string{
		`not json`,
		// Fresh, but not a page of an http(s) URL.
		`{"url":"file:///etc/passwd","content_type":"application/vnd.pypi.simple.v1+json","fetched":"` + time.Now().UTC().Format(time.RFC3339) + `","max_age":600000000000,"body":"e30="}`,
		// Kept in the future, or longer than any index says.
		`{"url":"` + srv.URL() + `nvidia-cuda-runtime/","content_type":"application/vnd.pypi.simple.v1+json","fetched":"2999-01-01T00:00:00Z","max_age":600000000000,"body":"e30="}`,
		`{"url":"` + srv.URL() + `nvidia-cuda-runtime/","content_type":"application/vnd.pypi.simple.v1+json","fetched":"2020-01-01T00:00:00Z","max_age":999999999999999,"body":"e30="}`,
	} {
		if err := os.WriteFile(files[0], []byte(hostile), 0o600); err != nil {
			t.Fatal(err)
		}
		before := srv.Hits(runtimePage)
		if got := read(open(false)); strings.Join(got, " ") != strings.Join(first, " ") || srv.Hits(runtimePage) != before+1 {
			t.Errorf("kept %.40q: %v, %d asks", hostile, got, srv.Hits(runtimePage)-before)
		}
	}
}

// A plan reads only the meta-package wheels it needs (#35): none to list
// the releases or plan one the table has, the one of a release it lacks.
func TestOnlyTheMetaPackageNeededIsRead(t *testing.T) {
	r1301, _ := pypi.CatalogRelease("13.0.1")
	r1342, _ := pypi.CatalogRelease("13.4.2")
	srv := pypitest.New(t, pypitest.Releases("13.0.1", "13.4.2"), pypitest.ExtraRelease(release135jit),
		pypitest.Frameworks(pypitest.ToolkitWheel(r1301, "13.0.1"), pypitest.ToolkitWheel(r1342, "13.4.2"), pypitest.ToolkitWheel(release135jit, "13.5.0")))
	ix, err := pypi.NewIndex(srv.URL(), pypi.WithHTTPClient(srv.Client()), pypi.WithRetries(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	names, err := ix.ToolkitVersions(context.Background())
	if err != nil || strings.Join(names, " ") != "13.0.1 13.4.2 13.5.0" {
		t.Fatalf("names %v, %v", names, err)
	}
	metaReads := func() int {
		n := 0
		for _, v := range []string{"13.0.1", "13.4.2", "13.5.0"} {
			f := "/files/cuda_toolkit-" + v + "-py2.py3-none-any.whl"
			n += srv.Hits(f) + srv.Hits(f+".metadata")
		}
		return n
	}
	if n := metaReads(); n != 0 {
		t.Fatalf("listing read %d meta-package files", n)
	}
	rel, ok, err := ix.ToolkitReleaseNamed(context.Background(), "13.5.0", "")
	if err != nil || !ok || !rel.FromToolkit {
		t.Fatalf("13.5.0: %+v %v %v", rel, ok, err)
	}
	if c, _ := rel.Component("libcublas"); c.Version != "13.10.0.20" {
		t.Errorf("cuBLAS %+v", c)
	}
	if n := metaReads(); n != 1 {
		t.Errorf("%d meta-package files read for one release", n)
	}
	if _, ok, err := ix.ToolkitReleaseNamed(context.Background(), "13.9.9", ""); ok || err != nil {
		t.Errorf("a release the meta-package lacks: %v %v", ok, err)
	}
}

// PyPI's cuda-toolkit 12.5.1 pins 12.5.0's runtime, while the index's
// runtime wheels name 12.5.1 by 12.5.82: the meta-package renames nothing,
// and no "12.5.2" appears.
func TestAMetaPackageThatDisagreesRenamesNothing(t *testing.T) {
	r1250, _ := pypi.CatalogRelease("12.5.0")
	offers := pypi.Offers(pypi.CatalogReleases(), []string{"12.5.39", "12.5.82", "13.4.92"})
	offers = pypi.WithToolkitNames(offers, []string{"12.5.1", "13.4.3", "13.0.2"}, pypi.CatalogReleases())
	var names []string
	for _, o := range offers {
		if o.Release.Major() == 12 && strings.HasPrefix(o.Name(), "12.5") || strings.HasPrefix(o.Name(), "13.4") {
			names = append(names, o.Name())
		}
	}
	if got := strings.Join(names, " "); got != "12.5.0 12.5.1 13.4.2 13.4.3" {
		t.Errorf("offers %s, want 12.5.0 12.5.1 13.4.2 13.4.3", got)
	}
	// 13.0.2 is in the table, and its runtime is not on this index.
	if slices.ContainsFunc(offers, func(o pypi.Offer) bool { return o.Name() == "13.0.2" }) {
		t.Error("13.0.2 is offered: the meta-package named it, but its runtime is not on the index")
	}
	var o1251 pypi.Offer
	for _, o := range offers {
		if o.Name() == "12.5.1" {
			o1251 = o
		}
	}
	bogus := r1250
	bogus.Version = "12.5.1"
	if _, ok := pypi.AdoptToolkit(o1251, bogus); ok {
		t.Error("the meta-package pinning 12.5.0's runtime was adopted for 12.5.1 (runtime 12.5.82)")
	}
	if !strings.Contains(o1251.Note(), "12.5.82") {
		t.Errorf("note %q", o1251.Note())
	}
}

// A wheel's metadata read by ranges costs little more than its zip
// directory and METADATA entry: NVIDIA's wheels on PyPI have no
// .metadata file, and a resolution reads a dozen of them.
func TestMetadataByRangesReadsLittle(t *testing.T) {
	big := pypitest.FrameworkWheel{Project: "torch", Version: "2.15.0", Serve: pypitest.ServeRanges, Padding: 8 << 20,
		Requires: []string{"nvidia-cublas==13.4.1.3"}}
	mid := pypitest.FrameworkWheel{Project: "gpu-mid", Version: "1.0", Serve: pypitest.ServeRanges, Padding: 2 << 20}
	srv := pypitest.New(t, pypitest.Frameworks(big, mid))
	for _, w := range []pypitest.FrameworkWheel{big, mid} {
		ix, err := pypi.NewIndex(srv.URL(), pypi.WithHTTPClient(srv.Client()), pypi.WithRetries(0, 0))
		if err != nil {
			t.Fatal(err)
		}
		page, err := ix.Project(context.Background(), w.Project)
		if err != nil {
			t.Fatal(err)
		}
		before := ix.BytesRead()
		m, err := ix.WheelMetadata(context.Background(), page.Files[0], "")
		if err != nil || m.Via != "range" {
			t.Fatalf("%s: %+v, %v", w.Project, m, err)
		}
		if n := ix.BytesRead() - before; n > 128<<10 {
			t.Errorf("%s (%d MiB): %d bytes read for its metadata", w.Project, w.Padding>>20, n)
		}
		if n := srv.Hits("/files/" + w.Filename()); n > 2 {
			t.Errorf("%s: %d requests", w.Project, n)
		}
	}
}
