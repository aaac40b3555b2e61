package pypi_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/cudaenv/cudaenv/fetch/pypi"
	"github.com/cudaenv/cudaenv/fetch/pypi/pypitest"
)

// testdata/cuda_toolkit-13.0.2.METADATA is the METADATA of PyPI's
// cuda_toolkit-13.0.2-py2.py3-none-any.whl (sha256 b198824cf2f54003f50d64ada3a0f184b42ca0846c1c94192fa269ecd97a66eb,
// pip download --no-deps cuda-toolkit==13.0.2, 2026-12).
func TestToolkitReleaseOfTheRealMetaPackageIsTheTablesRelease(t *testing.T) {
	data, err := os.ReadFile("testdata/cuda_toolkit-13.0.2.METADATA")
	if err != nil {
		t.Fatal(err)
	}
	meta, err := pypi.ParseMetadata(data)
	if err != nil {
		t.Fatal(err)
	}
	rel, ok, err := pypi.ToolkitRelease("13.0.2", meta.RequiresDist)
	if err != nil || !ok {
		t.Fatalf("ToolkitRelease: %v, %v", ok, err)
	}
	table, _ := pypi.CatalogRelease("13.0.2")
	if len(rel.Components) < 20 {
		t.Fatalf("only %d components: %+v", len(rel.Components), rel.Components)
	}
	for _, c := range rel.Components {
		tc, ok := table.Component(c.ID)
		if !ok || tc.Version != c.Version {
			t.Errorf("%s %s: the table has %+v, %v", c.ID, c.Version, tc, ok)
		}
	}
	if c, _ := rel.Component("libcufile"); !slices.Equal(c.Platforms, []string{pypi.LinuxX86_64, pypi.LinuxSBSA}) {
		t.Errorf("cuFile is for Linux only, got %v", c.Platforms)
	}
	if c, _ := rel.Component("cuda_nvcc"); len(c.Platforms) != 4 {
		t.Errorf("nvcc platforms = %v", c.Platforms)
	}
}

// CUDA 13.5.0 as the real index had it, and a newer cuBLAS that its
// meta-package does not pin.
var release135 = pypi.Release{Version: "13.5.0", Components: []pypi.Component{
	{ID: "cuda_cudart", Version: "13.5.37"}, {ID: "cuda_nvcc", Version: "13.5.37"},
	{ID: "cuda_crt", Version: "13.5.37"}, {ID: "libnvvm", Version: "13.5.37"},
	{ID: "cccl", Version: "13.3.5.0.6"}, {ID: "libcublas", Version: "13.10.0.20"},
}}

func toolkitIndex(t *testing.T, opts ...pypitest.Option) (*pypitest.Index, *pypi.Index) {
	t.Helper()
	r1341, _ := pypi.CatalogRelease("13.4.1")
	rc := release135
	rc.Version = "13.6.0"
	base := []pypitest.Option{
		pypitest.Releases("13.4.1", "13.4.2"),
		pypitest.ExtraRelease(release135),
		pypitest.ExtraRelease(pypi.Release{Version: "13.5.9", Components: []pypi.Component{{ID: "libcublas", Version: "13.11.0.1"}}}),
		pypitest.Frameworks(
			pypitest.ToolkitWheel(release135, "13.5.0"),
			pypitest.ToolkitWheel(r1341, "13.4.1.0"), // four parts
			pypitest.ToolkitWheel(rc, "13.6.0rc1"),   // a pre-release
			pypitest.ToolkitWheel(rc, "13.6.0.dev3"), // a dev build
		),
		pypitest.Sdist(pypi.ToolkitProject, "13.7.0"), // no wheel
	}
	ix := pypitest.New(t, append(base, opts...)...)
	idx, err := pypi.NewIndex(ix.URL())
	if err != nil {
		t.Fatal(err)
	}
	return ix, idx
}

func TestToolkitReleasesNameTheIndexsReleasesByTheirFullVersion(t *testing.T) {
	_, idx := toolkitIndex(t)
	ctx := context.Background()
	cache := t.TempDir()
	tk, err := idx.ToolkitReleases(ctx, cache)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range tk {
		got = append(got, r.Version)
	}
	// 13.4.1.0 is 13.4.1; the rc, the dev build and the sdist are left out.
	if !slices.Equal(got, []string{"13.4.1", "13.5.0"}) {
		t.Fatalf("toolkit releases = %v", got)
	}
	known := pypi.WithToolkit(pypi.CatalogReleases(), tk)
	var runtime []string
	for _, p := range pypi.RuntimeProjects() {
		vs, err := idx.Versions(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		runtime = append(runtime, vs...)
	}
	offers := pypi.Offers(known, runtime)
	if got := names(offers); !slices.Equal(got, []string{"13.4.1", "13.4.2", "13.5.0"}) {
		t.Fatalf("offers = %v, want each release once by its full version", got)
	}
	o := offers[2]
	if !o.Known || !o.Release.FromToolkit || o.Note() != "not in cudaenv's table: its wheels as the index's cuda-toolkit 13.5.0 pins them" {
		t.Fatalf("13.5.0: known %v, from toolkit %v, note %q", o.Known, o.Release.FromToolkit, o.Note())
	}
	if o.Release.FromToolkit == offers[0].Release.FromToolkit {
		t.Error("13.4.1 is the table's release, the meta-package only over it")
	}
	// Its wheels are the ones the meta-package pins, not the newest.
	reqs, err := pypi.Plan(o.Release, pypi.LinuxX86_64, pypi.Selection{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := idx.Resolve(ctx, pypi.LinuxX86_64, reqs)
	if err != nil || len(res.Skipped) != 0 {
		t.Fatalf("resolve: %v, skipped %v", err, res.Skipped)
	}
	have := map[string]string{}
	for _, a := range res.Artifacts {
		have[a.Component] = a.Version
	}
	want := map[string]string{"cuda_cudart": "13.5.37", "cuda_nvcc": "13.5.37", "cuda_crt": "13.5.37", "libnvvm": "13.5.37", "cccl": "13.3.5.0.6", "libcublas": "13.10.0.20"}
	if !mapsEqual(have, want) {
		t.Fatalf("wheels %v, want %v", have, want)
	}
	// A second listing reads the metadata from the cache.
	tk2, err := idx.ToolkitReleases(ctx, cache)
	if err != nil || len(tk2) != 2 {
		t.Fatalf("cached: %v, %v", tk2, err)
	}
}

func TestAnIndexWithoutTheMetaPackageKeepsTheTable(t *testing.T) {
	ix := pypitest.New(t, pypitest.Releases("13.4.2"))
	idx, err := pypi.NewIndex(ix.URL())
	if err != nil {
		t.Fatal(err)
	}
	tk, err := idx.ToolkitReleases(context.Background(), "")
	if err != nil || len(tk) != 0 {
		t.Fatalf("got %v, %v", tk, err)
	}
}

func TestAHostileMetaPackageIsRefused(t *testing.T) {
	rt := "nvidia-cuda-runtime==13.5.37.*; extra == 'all'"
	tests := []struct {
		name     string
		requires []string
		want     string
	}{
		{"a pin on a project that is not NVIDIA's", []string{rt, "evil-nvcc==13.5.37; extra == 'all'"}, `requires "evil-nvcc", which is not an NVIDIA wheel`},
		{"a range that names no build", []string{rt, "nvidia-cuda-nvcc<14; extra == 'all'"}, "nvidia-cuda-nvcc<14, not one exact version"},
		{"a range that excludes builds", []string{rt, "nvidia-cuda-nvcc>=13.5.37,!=13.5.38; extra == 'all'"}, "not one exact version"},
		{"another major's wheel", []string{rt, "nvidia-cuda-nvcc-cu12==12.9.86.*; extra == 'all'"}, "a CUDA 12 wheel, for CUDA 13.5.0"},
		{"a version that is not digits and dots", []string{"nvidia-cuda-runtime==13.5.37.post1; extra == 'all'"}, "is not digits and dots"},
		{"one component twice", []string{rt, "nvidia-cuda-runtime==13.5.38.*; extra == 'all'"}, "requires nvidia-cuda-runtime twice"},
		{"more pins than a meta-package has", slices.Repeat([]string{rt}, 300), "300 requirements, more than the 256"},
		{"a line that is not a requirement", []string{rt, "nvidia-cuda-nvcc ==13.5.37 $(rm -rf ~); extra == 'all'"}, "cannot read version clause"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := pypi.ToolkitRelease("13.5.0", tt.requires)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
	// A meta-package whose "all" extra pins no runtime (an old or partial
	// one) is not a release list: the table decides.
	if _, ok, err := pypi.ToolkitRelease("13.2.2", []string{"nvidia-cublas==13.3.0.5; extra == 'cublas'"}); ok || err != nil {
		t.Errorf("partial meta-package: %v, %v", ok, err)
	}
}

// From 12.9.2 on NVIDIA pins nvJitLink as a range (nvidia-nvjitlink<14,>=13.4.52
// for 13.4.1.0, the research data in shared/nvidia/compat/cuda_toolkit_pypi.tsv): its lower
// bound is the release's own build.
func TestAMetaPackageRangeMeansItsLowerBound(t *testing.T) {
	rel, ok, err := pypi.ToolkitRelease("13.4.1", []string{
		"nvidia-cuda-runtime==13.4.60.*; (sys_platform == 'linux' or sys_platform == 'win32') and extra == 'all'",
		"nvidia-nvjitlink<14,>=13.4.52; (sys_platform == 'linux' or sys_platform == 'win32') and extra == 'all'",
		"nvidia-nvjitlink<14,>=13.4.52; (sys_platform == 'linux' or sys_platform == 'win32') and extra == 'nvjitlink'",
	})
	if err != nil || !ok {
		t.Fatalf("%v, %v", ok, err)
	}
	table, _ := pypi.CatalogRelease("13.4.1")
	want, _ := table.Component("libnvjitlink")
	if c, _ := rel.Component("libnvjitlink"); c.Version != "13.4.52" || want.Version != c.Version {
		t.Fatalf("nvJitLink %+v; the table's %+v", c, want)
	}
}

func TestAHostileMetaPackageOnTheIndexFailsTheListing(t *testing.T) {
	tests := []struct {
		name string
		w    pypitest.FrameworkWheel
		want string
	}{
		{"pins naming another project", pypitest.FrameworkWheel{Project: "cuda-toolkit", Version: "13.5.0", Python: "py3", Platform: "any",
			Requires: []string{"nvidia-cuda-runtime==13.5.37.*; extra == 'all'", "totally-nvidia==1.0; extra == 'all'"}},
			`cuda-toolkit 13.5.0 (cuda_toolkit-13.5.0-py3-none-any.whl): its "all" extra requires "totally-nvidia", which is not an NVIDIA wheel`},
		{"huge metadata", pypitest.FrameworkWheel{Project: "cuda-toolkit", Version: "13.5.0", Python: "py3", Platform: "any",
			Metadata: "Metadata-Version: 2.1\nName: cuda-toolkit\nVersion: 13.5.0\nSummary: " + strings.Repeat("x", 5<<20) + "\n\n"},
			"larger than 4194304 bytes"},
		{"metadata of another project", pypitest.FrameworkWheel{Project: "cuda-toolkit", Version: "13.5.0", Python: "py3", Platform: "any",
			Metadata: "Metadata-Version: 2.1\nName: cuda-toolkit-evil\nVersion: 13.5.0\nRequires-Dist: nvidia-cuda-runtime==13.5.37.*; extra == 'all'\n\n"},
			"cuda-toolkit 13.5.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ix := pypitest.New(t, pypitest.Releases("13.4.2"), pypitest.ExtraRelease(release135), pypitest.Frameworks(tt.w))
			idx, err := pypi.NewIndex(ix.URL())
			if err != nil {
				t.Fatal(err)
			}
			tk, err := idx.ToolkitReleases(context.Background(), t.TempDir())
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, err = %v, want %q", tk, err, tt.want)
			}
			// Installing the release reads that one wheel, as hostile.
			rel, _, err := idx.ToolkitReleaseNamed(context.Background(), "13.5.0", t.TempDir())
			if err == nil || !strings.Contains(err.Error(), strings.TrimSuffix(strings.Split(tt.want, " (")[0], ":")) {
				t.Fatalf("named: got %v, err = %v, want %q", rel, err, tt.want)
			}
		})
	}
}

func TestWithToolkitPinsTheTablesReleaseAsTheMetaPackageDoes(t *testing.T) {
	table, _ := pypi.CatalogRelease("13.4.2")
	c, _ := table.Component("cuda_nvcc")
	tk := []pypi.Release{{Version: "13.4.2", Components: []pypi.Component{{ID: "cuda_nvcc", Version: c.Version + ".1"}}}}
	merged := pypi.WithToolkit(pypi.CatalogReleases(), tk)
	i := slices.IndexFunc(merged, func(r pypi.Release) bool { return r.Version == "13.4.2" })
	got, _ := merged[i].Component("cuda_nvcc")
	if got.Version != c.Version+".1" || merged[i].FromToolkit || merged[i].ManifestSHA256 != table.ManifestSHA256 || len(merged[i].Components) != len(table.Components) {
		t.Fatalf("merged 13.4.2: %+v", merged[i])
	}
	if len(merged) != len(pypi.CatalogReleases()) {
		t.Errorf("%d releases, want the table's %d", len(merged), len(pypi.CatalogReleases()))
	}
	// The table itself is untouched.
	again, _ := pypi.CatalogRelease("13.4.2")
	if n, _ := again.Component("cuda_nvcc"); n.Version != c.Version {
		t.Errorf("the catalog changed: %v", n)
	}
}

// testdata/cuda_toolkit_pypi.tsv is the research data in shared/nvidia/compat/cuda_toolkit_pypi.tsv:
// the "all" pins of every cuda-toolkit release on PyPI. Each reads as a
// release (pre-releases aside), and where the table has the release, the
// meta-package pins the table's versions.
func TestEveryRealMetaPackageReadsAsItsRelease(t *testing.T) {
	data, err := os.ReadFile("testdata/cuda_toolkit_pypi.tsv")
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string][]string{}
	var order []string
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Split(l, "\t")
		if strings.HasPrefix(l, "#") || len(f) < 5 || f[0] == "cuda_toolkit" {
			continue
		}
		systems := "sys_platform == 'linux'"
		if strings.Contains(f[4], "windows") {
			systems += " or sys_platform == 'win32'"
		}
		if _, ok := lines[f[0]]; !ok {
			order = append(order, f[0])
		}
		lines[f[0]] = append(lines[f[0]], f[2]+f[3]+"; ("+systems+") and extra == 'all'")
	}
	if len(order) < 15 {
		t.Fatalf("only %d releases in the TSV", len(order))
	}
	for _, v := range order {
		if strings.Contains(v, "rc") {
			continue
		}
		name := v
		if p := strings.Split(v, "."); len(p) == 4 && p[3] == "0" {
			name = strings.Join(p[:3], ".")
		}
		rel, ok, err := pypi.ToolkitRelease(name, lines[v])
		if err != nil || !ok {
			t.Errorf("%s: %v, %v", v, ok, err)
			continue
		}
		table, known := pypi.CatalogRelease(name)
		if !known {
			continue
		}
		for _, c := range rel.Components {
			if tc, ok := table.Component(c.ID); !ok || tc.Version != c.Version {
				t.Errorf("%s: %s %s, the table's %+v", v, c.ID, c.Version, tc)
			}
		}
	}
}
