package install

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cudaenv/cudaenv/fetch/pypi"
	"github.com/cudaenv/cudaenv/fetch/pypi/pypitest"
	"github.com/cudaenv/cudaenv/internal/version"
)

// cuda135 is a release the built-in table does not know, as the real index
// had it: the runtime and compiler wheels at 13.5.37, CCCL and cuBLAS on
// their own numbering.
var cuda135 = pypi.Release{Version: "13.5.0", Components: []pypi.Component{
	{ID: "cuda_cudart", Version: "13.5.37"}, {ID: "cuda_nvcc", Version: "13.5.37"},
	{ID: "cuda_crt", Version: "13.5.37"}, {ID: "libnvvm", Version: "13.5.37"},
	{ID: "cccl", Version: "13.3.5.0.6"}, {ID: "libcublas", Version: "13.10.0.20"},
}}

func pypiWorld(t *testing.T, opts ...pypitest.Option) (*world, *Installer) {
	t.Helper()
	w := newWorld(t)
	ix := pypitest.New(t, opts...)
	return w, w.installer(t, func(o *Options) { o.PyPIIndex = ix.URL() })
}

func TestPyPISpecsMeanTheNewestReleaseTheIndexHas(t *testing.T) {
	_, in := pypiWorld(t, pypitest.Releases("13.0.0", "13.0.1", "13.0.2", "12.4.1"))
	for s, want := range map[string]string{"13.0": "13.0.2", "13": "13.0.2", "12": "12.4.1"} {
		p, err := in.Plan(context.Background(), spec(t, s), Target{Source: "pypi", Platform: "linux-x86_64", Profile: "default"})
		if err != nil || p.Name != want {
			t.Errorf("%s: %v, %v; want %s", s, p, err, want)
		}
	}
}

// 13.0.0's nvcc wheel cannot link: 13.0 never picks it, 13.0.0 is refused
// with the reason and the nearest release that works, and libraries alone
// may still come from it.
func TestPyPIKnownBrokenWheelsAreNeverPicked(t *testing.T) {
	w, in := pypiWorld(t, pypitest.Releases("13.0.0", "13.0.1"))
	ctx := context.Background()
	minimal := Target{Source: "pypi", Platform: "linux-x86_64", Profile: "minimal"}
	p, err := in.Plan(ctx, spec(t, "13.0"), minimal)
	if err != nil || p.Name != "13.0.1" {
		t.Fatalf("13.0: %v, %v", p, err)
	}
	_, err = in.Plan(ctx, spec(t, "13.0.0"), minimal)
	var be *pypi.BrokenError
	if !errors.As(err, &be) || !strings.Contains(err.Error(), "CUDA 13.0.0 from PyPI cannot link programs: its nvidia-cuda-nvcc 13.0.48 wheel lacks bin/crt/link.stub") ||
		!strings.HasSuffix(err.Error(), "install the nearest release whose wheels work instead: cudaenv install 13.0.1 --source pypi") || strings.Contains(err.Error(), "--source nvidia") {
		t.Fatalf("err = %v", err)
	}
	if _, err := in.Plan(ctx, spec(t, "13.0.0"), Target{Source: "pypi", Platform: "linux-x86_64", Components: []string{"cuda_nvcc", "cuda_cudart"}}); !errors.As(err, &be) {
		t.Errorf("nvcc by component: err = %v", err)
	}
	p, err = in.Plan(ctx, spec(t, "13.0.0"), Target{Source: "pypi", Platform: "linux-x86_64", Components: []string{"cuda_cudart", "libcublas"}})
	if err != nil || p.Name != "13.0.0" {
		t.Errorf("libraries of 13.0.0: %v, %v", p, err)
	}

	// What is installed from 13.0.1 links: the stubs are there.
	res, err := in.Install(ctx, Request{Args: []string{"13.0"}, Source: "pypi", Profile: "minimal"})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"bin/nvcc", "bin/crt/link.stub", "bin/crt/prelink.stub", "nvvm/bin/cicc", "lib/libcudart_static.a"} {
		if _, err := os.Stat(filepath.Join(res[0].Entry.Dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if res[0].Entry.Receipt.LibrariesOnly {
		t.Error("a toolkit with nvcc is recorded as libraries only")
	}
	if len(w.mirror.Requests()) != 0 {
		t.Errorf("NVIDIA's server was asked: %v", w.mirror.Requests())
	}
}

// A release the index has and the table does not know is installable,
// named by its full version (13.5.0, issue #22 item 7), with a note.
func TestPyPIInstallsAReleaseTheTableDoesNotKnow(t *testing.T) {
	w, in := pypiWorld(t, pypitest.Releases("13.4.2"), pypitest.ExtraRelease(cuda135))
	res, err := in.Install(context.Background(), Request{Args: []string{"13"}, Source: "pypi", Profile: "minimal"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Label != "CUDA 13.5.0" || res[0].Entry.Name != "13.5.0" || res[0].Components != 5 {
		t.Fatalf("results = %+v", res)
	}
	var notes []UnlistedRelease
	for _, e := range w.rec.events {
		if u, ok := e.(UnlistedRelease); ok {
			notes = append(notes, u)
		}
	}
	if len(notes) != 1 || notes[0].Release != "13.5.0" || !strings.Contains(notes[0].Note, "not in cudaenv's table: the runtime is nvidia-cuda-runtime 13.5.37") {
		t.Errorf("notes = %+v", notes)
	}
	got := map[string]string{}
	for _, c := range res[0].Entry.Receipt.Components {
		got[c.ID] = c.Version
	}
	if got["cuda_nvcc"] != "13.5.37" || got["cccl"] != "13.3.5.0.6" || got["cuda_cudart"] != "13.5.37" {
		t.Errorf("components = %v", got)
	}
	// Adding a component to it completes the unknown release again.
	res, err = in.Install(context.Background(), Request{Args: []string{"13.5.0"}, Source: "pypi", Components: []string{"libcublas"}})
	if err != nil || res[0].Outcome != Installed || len(res[0].Entry.Receipt.Components) != 6 {
		t.Fatalf("adding cuBLAS: %+v, %v", res, err)
	}
}

func TestPyPIListsReleasesAndCachesThemForCompletion(t *testing.T) {
	w, in := pypiWorld(t, pypitest.Releases("13.0.0", "13.0.1", "13.4.2", "12.4.1"), pypitest.ExtraRelease(cuda135))
	got, err := in.Releases(context.Background(), version.CUDA, nil, "pypi")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range got {
		names = append(names, r.Release)
		switch r.Release {
		case "13.0.0":
			if !strings.HasPrefix(r.Note, "cannot link programs:") {
				t.Errorf("13.0.0 note = %q", r.Note)
			}
		case "13.5.0":
			if r.Note != "wheels: runtime 13.5.37, the rest the newest that fit" && r.Note != "wheels as cuda-toolkit pins them" {
				t.Errorf("13.5.0 note = %q", r.Note)
			}
		default:
			if r.Note != "" {
				t.Errorf("%s note = %q", r.Release, r.Note)
			}
		}
	}
	if want := []string{"12.4.1", "13.0.0", "13.0.1", "13.4.2", "13.5.0"}; !slices.Equal(names, want) {
		t.Errorf("releases = %v, want %v", names, want)
	}
	if len(w.mirror.Requests()) != 0 {
		t.Errorf("NVIDIA's server was asked: %v", w.mirror.Requests())
	}
	cached := CachedReleases(w.cache, version.CUDA)
	if len(cached) == 0 || cached[0].String() != "13.5.0" {
		t.Errorf("completion sees %v, want 13.5.0 first", cached)
	}

	cudnn, err := in.Releases(context.Background(), version.Cudnn, version.MustParse("9.5"), "pypi")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(cudnn, Remote{Release: "9.5.1.17", Note: "for CUDA 11 and 12"}) {
		t.Errorf("cudnn 9.5 = %+v", cudnn)
	}

	// Offline, the built-in table stands in.
	off := w.installer(t, func(o *Options) { o.Offline = true })
	got, err = off.Releases(context.Background(), version.CUDA, version.MustParse("13.0"), "pypi")
	if err != nil || len(got) == 0 || got[0].Release != "13.0.0" || !strings.Contains(got[0].Note, "offline") {
		t.Errorf("offline: %+v, %v", got, err)
	}
}

func TestAutoListingFallsBackToPyPIOnce(t *testing.T) {
	w, in := pypiWorld(t, pypitest.Releases("12.4.1"))
	w.mirror.Close()
	got, err := in.Releases(context.Background(), version.CUDA, nil, "auto")
	if err != nil || len(got) != 1 || got[0].Release != "12.4.1" {
		t.Fatalf("releases = %+v, %v", got, err)
	}
	if _, err := in.Releases(context.Background(), version.CUDA, nil, "auto"); err != nil {
		t.Fatal(err)
	}
	if len(w.rec.events) != 1 {
		t.Errorf("events = %+v, want one FallbackToPyPI", w.rec.events)
	}
	if _, err := in.Releases(context.Background(), version.CUDA, nil, "conda"); err == nil || !strings.Contains(err.Error(), `unknown source "conda"`) {
		t.Errorf("err = %v", err)
	}
}

// install --for torch==2.5.1 --source pypi, with an index that lacks
// torch, takes what PyPI's build of it pins from cudaenv's tables: CUDA
// 12.4.1, its very cuDNN build (9.1.0.70) and NCCL from the index, and
// never asks NVIDIA's server.
func TestForTorchFromPyPIInstallsWhatPyTorchPins(t *testing.T) {
	w, in := pypiWorld(t, pypitest.Releases("12.4.1"), pypitest.ExtraCudnn("9.1.0.70", 11, 12), pypitest.ExtraCudnn("9.1.1.17", 11, 12), pypitest.ExtraLibrary("nccl", "2.21.5", 12))
	w.mirror.Close()
	res, err := in.Install(context.Background(), Request{For: []string{"torch==2.5.1"}, Source: "pypi", Components: []string{"cuda_cudart", "libcublas"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 3 || res[0].Label != "CUDA 12.4.1" || res[1].Label != "cuDNN 9.1.0.70-cuda12" || res[2].Label != "NCCL 2.21.5-cuda12" {
		t.Fatalf("results = %+v", res)
	}
	if !slices.ContainsFunc(w.rec.events, func(e Event) bool {
		f, ok := e.(FrameworkFromTables)
		return ok && f.Variant == "cu124" && f.Cudnn == "9.1.0.70"
	}) {
		t.Errorf("events = %+v, want the answer from the tables", w.rec.events)
	}
	if !res[0].Entry.Receipt.LibrariesOnly {
		t.Error("CUDA 12.4.1 libraries are not recorded as libraries only")
	}

	// auto with NVIDIA unreachable does the same, saying so once.
	w2, in2 := pypiWorld(t, pypitest.Releases("12.4.1"), pypitest.ExtraCudnn("9.1.0.70", 12), pypitest.ExtraLibrary("nccl", "2.21.5", 12))
	w2.mirror.Close()
	specs, err := in2.Specs(context.Background(), Request{For: []string{"torch==2.5.1"}, Source: "auto"})
	if err != nil || len(specs) != 3 || specs[1].String() != "cudnn@9.1.0.70" {
		t.Fatalf("specs = %v, %v", specs, err)
	}
	if !slices.ContainsFunc(w2.rec.events, func(e Event) bool { _, ok := e.(FallbackToPyPI); return ok }) {
		t.Errorf("events = %+v", w2.rec.events)
	}
}

func TestReleasesShippingNamesTheReleaseOfABuild(t *testing.T) {
	for _, tt := range []struct {
		component, build string
		want             []string
	}{
		{"cuda_nvcc", "13.0.48", []string{"13.0.0"}},
		{"cuda_cudart", "13.0.96", []string{"13.0.2", "13.0.3"}},
		{"cuda_cudart", "12.4.127", []string{"12.4.1"}},
		{"cuda_nvcc", "13.5.37", nil},
	} {
		if got := ReleasesShipping(tt.component, tt.build); !slices.Equal(got, tt.want) {
			t.Errorf("%s %s: %v, want %v", tt.component, tt.build, got, tt.want)
		}
	}
}

// #36: install 13.1 is the newest release on the index, 13.1.2, for every
// profile; where the index lacks some of its wheels they are left out,
// said in one line with the older release that has them. 13.1.1 and
// 13.1.2 share their runtime: the meta-package naming 13.1.2 (or a wheel
// of a build only 13.1.2 ships) is what puts it on the index.
func TestPyPISpecIsTheNewestReleaseForEveryProfile(t *testing.T) {
	r1312, _ := pypi.CatalogRelease("13.1.2")
	cublas, _ := r1312.Component("libcublas")
	for _, profile := range []string{"minimal", "extensions", "default"} {
		t.Run(profile, func(t *testing.T) {
			_, in := pypiWorld(t, pypitest.Releases("13.1.1", "13.1.2"), pypitest.WithoutVersion("nvidia-cublas", cublas.Version),
				pypitest.Frameworks(pypitest.ToolkitWheel(r1312, "13.1.2.0")))
			p, err := in.Plan(context.Background(), spec(t, "13.1"), Target{Source: "pypi", Platform: "linux-x86_64", Profile: profile, applySkips: true})
			if err != nil || p.Name != "13.1.2" {
				t.Fatalf("%v, %v; want 13.1.2", p, err)
			}
			if profile == "minimal" {
				if len(p.skipped) != 0 {
					t.Errorf("skipped %v", p.skipped)
				}
				return
			}
			if len(p.skipped) != 1 || p.skipped[0].Component != "libcublas" || p.skippedOlder != "CUDA 13.1.1 has them: cudaenv install 13.1.1 --source pypi" {
				t.Errorf("skipped %v, older %q", p.skipped, p.skippedOlder)
			}
		})
	}
	t.Run("a release sharing its runtime with an older one, none of its own wheels there and unnamed, is not on the index", func(t *testing.T) {
		_, in := pypiWorld(t, pypitest.Releases("13.1.1", "13.1.2"), pypitest.WithoutVersion("nvidia-cublas", cublas.Version))
		p, err := in.Plan(context.Background(), spec(t, "13.1"), Target{Source: "pypi", Platform: "linux-x86_64", Profile: "default"})
		if err != nil || p.Name != "13.1.1" {
			t.Fatalf("%v, %v; want 13.1.1", p, err)
		}
	})
}
