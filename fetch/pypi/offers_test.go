package pypi_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/cudaenv/cudaenv/fetch/pypi"
	"github.com/cudaenv/cudaenv/fetch/pypi/pypitest"
	"github.com/cudaenv/cudaenv/internal/version"
)

// The runtime versions the real index had (pip index versions
// nvidia-cuda-runtime-cu12 and nvidia-cuda-runtime, 2026-12).
var realRuntimes = strings.Fields(`
12.9.79 12.9.37 12.8.90 12.8.57 12.6.77 12.6.68 12.6.37 12.5.82 12.5.39 12.4.127 12.4.99
12.3.101 12.3.52 12.2.140 12.2.128 12.2.53 12.1.105 12.1.55 12.0.146 12.0.107
13.5.37 13.4.92 13.4.49 13.3.29 13.2.86 13.2.75 13.2.51 13.1.80 13.0.96 13.0.88 13.0.48`)

func names(offers []pypi.Offer) []string {
	var out []string
	for _, o := range offers {
		out = append(out, o.Name())
	}
	return out
}

func TestOffersAreTheIndexsReleasesNamedByTheTable(t *testing.T) {
	offers := pypi.Offers(pypi.CatalogReleases(), realRuntimes)
	// Each once, by its full version: 12.5.82 is 12.5.1, after the table's
	// 12.5.0 (issue #22, item 7); 12.2.140 is 12.2.2, after two older 12.2
	// runtimes.
	want := strings.Fields(`12.0.1 12.1.1 12.2.2 12.3.1 12.4.0 12.4.1 12.5.0 12.5.1 12.6.1 12.6.2 12.6.3 12.8.1 12.8.2 12.9.0 12.9.2
		13.0.0 13.0.1 13.0.2 13.0.3 13.1.1 13.1.2 13.2.0 13.2.1 13.2.2 13.3.0 13.4.1 13.4.2 13.5.0`)
	if got := names(offers); !slices.Equal(got, want) {
		t.Fatalf("offers:\n got %v\nwant %v", got, want)
	}
	for _, o := range offers {
		switch {
		case o.Name() == "13.5.0" && (o.Known || o.Runtime != "13.5.37" || !strings.Contains(o.Note(), "not in cudaenv's table: the runtime is nvidia-cuda-runtime 13.5.37")):
			t.Errorf("13.5.0: %+v, note %q", o, o.Note())
		case o.Name() == "13.0.0" && !strings.Contains(o.Note(), "cannot link programs"):
			t.Errorf("13.0.0 note = %q", o.Note())
		case o.Name() == "13.0.2" && o.Note() != "":
			t.Errorf("13.0.2 note = %q", o.Note())
		}
	}
	// Releases whose runtime the index lacks are not offered.
	if got := names(pypi.Offers(pypi.CatalogReleases(), []string{"12.4.127.post1", "0.0.1.dev5"})); !slices.Equal(got, []string{"12.4.1"}) {
		t.Errorf("offers = %v", got)
	}
}

func TestEveryCatalogReleaseHasARuntimeOfItsMajorMinor(t *testing.T) {
	for _, r := range pypi.CatalogReleases() {
		c, ok := r.Component("cuda_cudart")
		if !ok || !strings.HasPrefix(c.Version+".", strings.Join(strings.SplitN(r.Version, ".", 3)[:2], ".")+".") {
			t.Errorf("CUDA %s: cudart %q does not name its major.minor; the release listing relies on it", r.Version, c.Version)
		}
	}
}

func TestPickOfferTakesTheNewestThatWorks(t *testing.T) {
	offers := pypi.Offers(pypi.CatalogReleases(), realRuntimes)
	tests := []struct {
		name, spec string
		compiler   bool
		want, err  string
	}{
		{"a minor means its newest patch", "13.0", true, "13.0.3", ""},
		{"a major means its newest release, known or not", "13", true, "13.5.0", ""},
		{"12.4 is 12.4.1", "12.4", false, "12.4.1", ""},
		{"a minor the table lacks", "12.2", false, "12.2.2", ""},
		{"an exact broken release is refused with the nearest that works", "13.0.0", true, "",
			"CUDA 13.0.0 from PyPI cannot link programs: its nvidia-cuda-nvcc 13.0.48 wheel lacks bin/crt/link.stub and bin/crt/prelink.stub, so nvcc compiles objects but links no program (CMake's compiler check fails too); install the nearest release whose wheels work instead: cudaenv install 13.0.1 --source pypi"},
		{"libraries only may take the broken release", "13.0.0", false, "13.0.0", ""},
		{"nothing matches", "12.7", false, "",
			"no CUDA release matching 12.7 has wheels on https://idx/simple/; it has 12.0.1, 12.1.1, 12.2.2, 12.3.1, 12.4.0, 12.4.1, 12.5.0, 12.5.1, 12.6.1, 12.6.2, 12.6.3, 12.8.1, 12.8.2, 12.9.0, 12.9.2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sp, err := version.ParseSpec(tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			o, err := pypi.PickOffer(offers, sp, tt.compiler, "https://idx/simple/")
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("err =\n %v\nwant\n %s", err, tt.err)
				}
				return
			}
			if err != nil || o.Name() != tt.want {
				t.Fatalf("got %q, %v; want %s", o.Name(), err, tt.want)
			}
		})
	}
	// When the index has only the broken 13.0 release, 13.0 is refused too.
	only := pypi.Offers(pypi.CatalogReleases(), []string{"13.0.48"})
	_, err := pypi.PickOffer(only, version.Spec{Tool: version.CUDA, Prefix: version.MustParse("13.0")}, true, "x")
	var be *pypi.BrokenError
	if !errors.As(err, &be) || be.Nearest != "" || !strings.HasSuffix(err.Error(), "the index has no other release of this CUDA major whose wheels work (see: cudaenv ls-remote --source pypi)") {
		t.Fatalf("err = %v", err)
	}
}

func TestPickVersionMatchesWholeParts(t *testing.T) {
	vs := []string{"9.1.0.70", "9.1.1.17", "9.10.2.21", "9.13.0.50", "8.9.7.29"}
	for spec, want := range map[string]string{"cudnn@9.1": "9.1.1.17", "cudnn@9.1.0.70": "9.1.0.70", "cudnn@9": "9.13.0.50", "cudnn@9.10": "9.10.2.21", "cudnn@9.2": ""} {
		sp, _ := version.ParseSpec(spec)
		got, ok := pypi.PickVersion(vs, sp)
		if got != want || ok != (want != "") {
			t.Errorf("%s: got %q, %v; want %q", spec, got, ok, want)
		}
	}
}

// A release the table does not know (a CUDA 13.5 on the index) is offered
// under its full version (13.5.0) and installable: its components come from the
// newest known release of the major, at the versions the index has.
func TestCompleteFillsInAReleaseTheTableDoesNotKnow(t *testing.T) {
	next := pypi.Release{Version: "13.5.0", Components: []pypi.Component{
		{ID: "cuda_cudart", Version: "13.5.37"}, {ID: "cuda_nvcc", Version: "13.5.37"},
		{ID: "cuda_crt", Version: "13.5.37"}, {ID: "libnvvm", Version: "13.5.37"},
		{ID: "cccl", Version: "13.3.5.0.6"}, {ID: "libcublas", Version: "13.10.0.20"},
	}}
	ix := pypitest.New(t, pypitest.Releases("13.4.2"), pypitest.ExtraRelease(next))
	idx, err := pypi.NewIndex(ix.URL())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var runtime []string
	for _, p := range pypi.RuntimeProjects() {
		vs, err := idx.Versions(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		runtime = append(runtime, vs...)
	}
	offers := pypi.Offers(pypi.CatalogReleases(), runtime)
	if got := names(offers); !slices.Equal(got, []string{"13.4.2", "13.5.0"}) {
		t.Fatalf("offers = %v", got)
	}
	rel, err := idx.Complete(ctx, offers[1], pypi.CatalogReleases(), pypi.Selection{Profile: pypi.ProfileMinimal})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range rel.Components {
		got[c.ID] = c.Version
	}
	want := map[string]string{"cuda_cudart": "13.5.37", "cuda_nvcc": "13.5.37", "cuda_crt": "13.5.37", "libnvvm": "13.5.37", "cccl": "13.3.5.0.6"}
	if rel.Version != "13.5.0" || !mapsEqual(got, want) {
		t.Fatalf("release %s: %v, want %v", rel.Version, got, want)
	}
	reqs, err := pypi.Plan(rel, pypi.LinuxX86_64, pypi.Selection{Profile: pypi.ProfileMinimal})
	if err != nil || len(reqs) != 5 {
		t.Fatalf("plan: %v, %v", reqs, err)
	}
	if _, err := idx.Resolve(ctx, pypi.LinuxX86_64, reqs); err != nil {
		t.Fatalf("resolve: %v", err)
	}
	// The default profile takes cuBLAS at the newest version after 13.4.2's.
	rel, err = idx.Complete(ctx, offers[1], pypi.CatalogReleases(), pypi.Selection{})
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := rel.Component("libcublas"); !ok || c.Version != "13.10.0.20" {
		t.Errorf("libcublas = %+v, %v", c, ok)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
