package pypi_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/cudaenv/cudaenv/fetch/pypi"
	"github.com/cudaenv/cudaenv/fetch/pypi/pypitest"
)

// realWheels reads testdata/framework_requires.txt: the Requires-Dist of
// real wheels on pypi.org (torch 2.7.0, 2.7.1, 2.12.0, 2.14.0, jax 0.9.0
// and its CUDA plugins, tensorflow 2.19.1, vllm 0.34.0 (cp38-abi3),
// xformers 0.0.35 (py39-none), cuml-cu12 and cudf-cu12 (cp311-abi3),
// cupy, numba-cuda, cuda-toolkit 12.9.1, 13.0.2 and 13.0.3.0), each as a
// test wheel with its real file name's tags.
func realWheels(t *testing.T) map[string]pypitest.FrameworkWheel {
	t.Helper()
	data, err := os.ReadFile("testdata/framework_requires.txt")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]pypitest.FrameworkWheel{}
	var cur *pypitest.FrameworkWheel
	flush := func() {
		if cur != nil {
			out[cur.Project+"=="+cur.Version] = *cur
			cur = nil
		}
	}
	for _, line := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(line, "#! "):
			flush()
			f := strings.Fields(line[3:])
			name, _ := strings.CutSuffix(f[2], ".whl")
			parts := strings.Split(name, "-")
			n := len(parts)
			cur = &pypitest.FrameworkWheel{Project: f[0], Version: f[1], Python: parts[n-3], ABI: parts[n-2], Platform: parts[n-1], Serve: pypitest.ServeMetadata}
		case strings.HasPrefix(line, "#"), strings.TrimSpace(line) == "":
		case cur != nil:
			cur.Requires = append(cur.Requires, line)
		}
	}
	flush()
	return out
}

func wheelsOf(t *testing.T, names ...string) pypitest.Option {
	t.Helper()
	all := realWheels(t)
	var ws []pypitest.FrameworkWheel
	for _, n := range names {
		w, ok := all[n]
		if !ok {
			t.Fatalf("no real wheel %s in testdata", n)
		}
		ws = append(ws, w)
	}
	return pypitest.Frameworks(ws...)
}

// release125 is CUDA 12.5.1 as tensorflow 2.19.1 pins it (the catalog
// has no 12.5.1 manifest): its wheels are on the index.
var release125 = pypi.Release{Version: "12.5.1", Components: []pypi.Component{
	{ID: "libcublas", Version: "12.5.3.2"}, {ID: "cuda_cupti", Version: "12.5.82"}, {ID: "cuda_nvcc", Version: "12.5.82"},
	{ID: "cuda_nvrtc", Version: "12.5.82"}, {ID: "cuda_cudart", Version: "12.5.82"}, {ID: "libcufft", Version: "11.2.3.61"},
	{ID: "libcurand", Version: "10.3.6.82"}, {ID: "libcusolver", Version: "11.6.3.83"}, {ID: "libcusparse", Version: "12.5.1.3"},
	{ID: "libnvjitlink", Version: "12.5.82"}, {ID: "cuda_cccl", Version: "12.5.39"},
}}

// release135jit is release135 (CUDA 13.5.0, past the catalog) with its
// nvJitLink, as the real index has it.
var release135jit = pypi.Release{Version: "13.5.0", Components: append(slices.Clone(release135.Components), pypi.Component{ID: "libnvjitlink", Version: "13.5.37"})}

func realIndex(t *testing.T, opts ...pypitest.Option) *pypi.Index {
	t.Helper()
	srv := pypitest.New(t, append([]pypitest.Option{pypitest.Platforms(pypi.LinuxX86_64)}, opts...)...)
	ix, err := pypi.NewIndex(srv.URL(), pypi.WithHTTPClient(srv.Client()), pypi.WithRetries(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

var py312 = pypi.WheelTarget{Platform: pypi.LinuxX86_64, Python: "3.12"}

// resolveToolkit resolves reqs and names the toolkit against the catalog.
func resolveToolkit(t *testing.T, ix *pypi.Index, reqs ...string) (*pypi.Resolved, *pypi.Pins) {
	t.Helper()
	res, err := ix.ResolveRequirements(context.Background(), reqs, py312, "")
	if err != nil {
		t.Fatalf("resolve %v: %v", reqs, err)
	}
	pins, err := ix.PinsOf(context.Background(), res, pypi.CatalogReleases())
	if err != nil {
		t.Fatalf("pins of %v: %v", reqs, err)
	}
	return res, pins
}

func versionOf(t *testing.T, res *pypi.Resolved, project string) string {
	t.Helper()
	p, ok := res.Project(project)
	if !ok {
		t.Fatalf("%s is not in the resolution (NVIDIA: %v)", project, res.NVIDIA)
	}
	return p.Version
}

func differs(p *pypi.Pins) string {
	var s []string
	for _, d := range p.Differs {
		s = append(s, d.ID+" "+d.Version)
	}
	return strings.Join(s, ", ")
}

func TestResolveJaxFollowsItsPluginPinnedAsARange(t *testing.T) {
	ix := realIndex(t, wheelsOf(t, "jax==0.9.0", "jaxlib==0.9.0", "jax-cuda13-plugin==0.9.0", "jax-cuda12-plugin==0.9.0", "jax-cuda13-pjrt==0.9.0", "jax-cuda12-pjrt==0.9.0"),
		pypitest.ExtraLibrary("nccl", "2.28.9", 12, 13), pypitest.ExtraLibrary("nvshmem", "3.4.5", 12, 13))
	t.Run("jax[cuda13]==0.9.0 pins jax-cuda13-plugin[with-cuda]<=0.9.0,>=0.9.0", func(t *testing.T) {
		res, pins := resolveToolkit(t, ix, "jax[cuda13]==0.9.0")
		if pins.CUDA != "13.4.2" || len(pins.Differs) != 0 {
			t.Errorf("CUDA %s (differs: %s), want the newest release the index has, 13.4.2, as it is", pins.CUDA, differs(pins))
		}
		for project, want := range map[string]string{"nvidia-cublas": "13.8.0.4", "nvidia-cuda-nvcc": "13.4.92", "nvidia-nvvm": "13.4.92", "nvidia-nccl-cu13": "2.28.9", "jax-cuda13-plugin": "0.9.0"} {
			if got := versionOf(t, res, project); got != want {
				t.Errorf("%s %s, want %s", project, got, want)
			}
		}
		if _, ok := res.Project("jax-cuda12-plugin"); ok {
			t.Error("the cuda12 extra's plugin was followed for [cuda13]")
		}
		if pins.Cudnn == "" || pins.Toolkit.Major != 13 {
			t.Errorf("cuDNN %q, major %d", pins.Cudnn, pins.Toolkit.Major)
		}
	})
	t.Run("jax[cuda12]==0.9.0 takes the newest CUDA 12 wheels its ranges allow", func(t *testing.T) {
		res, pins := resolveToolkit(t, ix, "jax[cuda12]==0.9.0")
		if pins.CUDA != "12.9.2" || versionOf(t, res, "nvidia-cuda-nvcc-cu12") != "12.9.86" {
			t.Errorf("CUDA %s, nvcc %s", pins.CUDA, versionOf(t, res, "nvidia-cuda-nvcc-cu12"))
		}
	})
}

func TestResolveMixedReleasePinsMakeOneToolkit(t *testing.T) {
	ix := realIndex(t, wheelsOf(t, "torch==2.7.0", "torch==2.7.1"),
		pypitest.ExtraLibrary("nccl", "2.26.2", 12), pypitest.ExtraLibrary("cusparselt", "0.6.3", 12))
	for _, v := range []string{"2.7.0", "2.7.1"} {
		t.Run("torch "+v+" pins nvrtc from 12.6.2 and cuBLAS, nvJitLink from 12.6.3", func(t *testing.T) {
			res, pins := resolveToolkit(t, ix, "torch=="+v)
			if pins.CUDA != "12.6.3" || differs(pins) != "cuda_nvrtc 12.6.77" {
				t.Errorf("CUDA %s, differs %q; want 12.6.3 with its nvrtc 12.6.77 (12.6.2's)", pins.CUDA, differs(pins))
			}
			if got := versionOf(t, res, "nvidia-cublas-cu12"); got != "12.6.4.1" {
				t.Errorf("cuBLAS %s", got)
			}
			if pins.Cudnn != "9.5.1.17" || len(pins.Products) != 2 {
				t.Errorf("cuDNN %s, products %+v", pins.Cudnn, pins.Products)
			}
		})
	}
}

func TestResolveAcceptsEveryTagPipAccepts(t *testing.T) {
	ix := realIndex(t, wheelsOf(t, "vllm==0.34.0", "xformers==0.0.35", "torch==2.14.0", "torch==2.12.0", "cuda-toolkit==13.0.3.0", "cuda-toolkit==13.0.2",
		"cuml-cu12==26.10.0", "cudf-cu12==26.10.2", "cupy-cuda12x==14.2.0", "numba-cuda==0.30.4", "cuda-toolkit==12.9.1"),
		pypitest.Frameworks(toolkit("12.9.2", "12.9.2.0")),
		pypitest.ExtraRelease(release135jit),
		pypitest.ExtraCudnn("9.24.0.43", 13), pypitest.ExtraCudnn("9.20.0.48", 13),
		pypitest.ExtraLibrary("nccl", "2.30.7", 13), pypitest.ExtraLibrary("nccl", "2.29.7", 13),
		pypitest.ExtraLibrary("cusparselt", "0.8.1", 13), pypitest.ExtraLibrary("nvshmem", "3.4.5", 13))
	t.Run("vllm's cp38-abi3 wheel pins torch 2.14.0, whose meta-package lets nvJitLink reach 13.5", func(t *testing.T) {
		res, pins := resolveToolkit(t, ix, "vllm==0.34.0")
		if res.Top[0].File.Filename != "vllm-0.34.0-cp38-abi3-manylinux_2_28_x86_64.whl" || versionOf(t, res, "torch") != "2.14.0" {
			t.Fatalf("read %s, torch %s", res.Top[0].File.Filename, versionOf(t, res, "torch"))
		}
		if pins.CUDA != "13.0.3" || differs(pins) != "libnvjitlink 13.5.37" {
			t.Errorf("CUDA %s, differs %q; want 13.0.3 with nvJitLink 13.5.37, the newest <14", pins.CUDA, differs(pins))
		}
		if pins.Cudnn != "9.24.0.43" {
			t.Errorf("cuDNN %s", pins.Cudnn)
		}
	})
	t.Run("xformers' py39-none wheel takes the newest torch it allows", func(t *testing.T) {
		res, _ := resolveToolkit(t, ix, "xformers==0.0.35")
		if res.Top[0].File.Filename != "xformers-0.0.35-py39-none-manylinux_2_28_x86_64.whl" || versionOf(t, res, "torch") != "2.14.0" {
			t.Errorf("read %s, torch %s", res.Top[0].File.Filename, versionOf(t, res, "torch"))
		}
	})
	for _, fw := range []string{"cuml-cu12==26.10.0", "cudf-cu12==26.10.2"} {
		t.Run(fw+"'s cp311-abi3 wheel reaches cuda-toolkit==12.* through its own and cupy's extras", func(t *testing.T) {
			res, pins := resolveToolkit(t, ix, fw)
			if got := versionOf(t, res, "cuda-toolkit"); got != "12.9.2.0" {
				t.Errorf("cuda-toolkit %s, want the newest 12.*", got)
			}
			if pins.Toolkit.Major != 12 || pins.CUDA != "12.9.2" {
				t.Errorf("CUDA %s (major %d)", pins.CUDA, pins.Toolkit.Major)
			}
			if _, ok := pins.Toolkit.Component("libcublas"); !ok {
				t.Errorf("no cuBLAS: %+v", pins.Toolkit.Components)
			}
		})
	}
	t.Run("torch 2.12's cuBLAS range takes 13.1.1.3, the newest it allows: CUDA 13.0.3's own set", func(t *testing.T) {
		res, pins := resolveToolkit(t, ix, "torch==2.12.0")
		if got := versionOf(t, res, "nvidia-cublas"); got != "13.1.1.3" {
			t.Errorf("cuBLAS %s", got)
		}
		if pins.CUDA != "13.0.3" || len(pins.Differs) != 0 {
			t.Errorf("CUDA %s, differs %q", pins.CUDA, differs(pins))
		}
	})
	t.Run("two targets that agree make one toolkit", func(t *testing.T) {
		res, pins := resolveToolkit(t, ix, "vllm==0.34.0", "xformers==0.0.35")
		if len(res.Top) != 2 || pins.CUDA != "13.0.3" {
			t.Errorf("tops %d, CUDA %s", len(res.Top), pins.CUDA)
		}
	})
	t.Run("two targets that conflict name the project and both specifiers, before any download", func(t *testing.T) {
		_, err := ix.ResolveRequirements(context.Background(), []string{"vllm==0.34.0", "torch==2.12.0"}, py312, "")
		var ce *pypi.ConflictError
		if !errors.As(err, &ce) || ce.Project != "torch" {
			t.Fatalf("err = %v", err)
		}
		for _, want := range []string{"torch: ", "vllm 0.34.0 requires ==2.14.0", "--for requires ==2.12.0", "satisfies both"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%q lacks %q", err, want)
			}
		}
	})
}

func TestResolveExactPinsOfAReleaseTheTableLacks(t *testing.T) {
	bogus := pypitest.ToolkitWheel(mustCatalog(t, "12.5.0"), "12.5.1") // PyPI's cuda-toolkit 12.5.1 pins 12.5.0's wheels
	ix := realIndex(t, wheelsOf(t, "tensorflow==2.19.1"), pypitest.ExtraRelease(release125), pypitest.Frameworks(bogus),
		pypitest.ExtraCudnn("9.3.0.75", 12), pypitest.ExtraLibrary("nccl", "2.23.4", 12))
	res, pins := resolveToolkit(t, ix, "tensorflow[and-cuda]==2.19.1")
	if pins.CUDA != "12.5.1" || !pins.CUDAExact {
		t.Errorf("CUDA %s (exact %v), want 12.5.1 from its runtime", pins.CUDA, pins.CUDAExact)
	}
	for project, want := range map[string]string{"nvidia-cuda-runtime-cu12": "12.5.82", "nvidia-cublas-cu12": "12.5.3.2", "nvidia-cuda-nvcc-cu12": "12.5.82"} {
		if got := versionOf(t, res, project); got != want {
			t.Errorf("%s %s, want %s", project, got, want)
		}
	}
	if _, ok := res.Project("cuda-toolkit"); ok {
		t.Error("the meta-package was read; tensorflow does not require it")
	}
	t.Run("without the extra, the one extra that pulls the CUDA wheels is turned on", func(t *testing.T) {
		res, pins := resolveToolkit(t, ix, "tensorflow==2.19.1")
		if pins.CUDA != "12.5.1" || !slices.Equal(res.Extras, []string{"tensorflow[and-cuda]"}) {
			t.Errorf("CUDA %s, extras %v", pins.CUDA, res.Extras)
		}
	})
}

func mustCatalog(t *testing.T, v string) pypi.Release {
	t.Helper()
	r, ok := pypi.CatalogRelease(v)
	if !ok {
		t.Fatalf("no catalog release %s", v)
	}
	return r
}

func TestResolveYankedAndPreReleases(t *testing.T) {
	ix := realIndex(t,
		pypitest.ExtraCudnn("9.25.0.15", 12), pypitest.Yanked("nvidia-cudnn-cu12", "9.25.0.15"),
		pypitest.ExtraCudnn("9.30.0.1rc1", 12),
		pypitest.ExtraLibrary("nccl", "3.0.0rc1", 12))
	tests := []struct {
		name, req, project, want, note string
	}{
		{"a range passes over a yanked version", "nvidia-cudnn-cu12>=9.20", "nvidia-cudnn-cu12", "9.20.0.48", ""},
		{"an exact pin takes a yanked version, and says so", "nvidia-cudnn-cu12==9.25.0.15", "nvidia-cudnn-cu12", "9.25.0.15", "nvidia-cudnn-cu12 9.25.0.15 is yanked on the index"},
		{"=== is exact too", "nvidia-cudnn-cu12===9.25.0.15", "nvidia-cudnn-cu12", "9.25.0.15", "is yanked"},
		{"a wildcard is not exact", "nvidia-cudnn-cu12==9.*", "nvidia-cudnn-cu12", "9.20.0.48", ""},
		{"a pre-release only when a specifier names one", "nvidia-cudnn-cu12>=9.30.0.1rc1", "nvidia-cudnn-cu12", "9.30.0.1rc1", ""},
		{"a project with only pre-releases takes one", "nvidia-nccl-cu12", "nvidia-nccl-cu12", "3.0.0rc1", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := ix.ResolveRequirements(context.Background(), []string{tt.req}, py312, "")
			if err != nil {
				t.Fatal(err)
			}
			if got := versionOf(t, res, tt.project); got != tt.want {
				t.Errorf("%s, want %s", got, tt.want)
			}
			notes := strings.Join(res.Notes, "\n")
			if tt.note != "" && !strings.Contains(notes, tt.note) || tt.note == "" && strings.Contains(notes, "yanked") {
				t.Errorf("notes %q, want %q", notes, tt.note)
			}
		})
	}
	t.Run("an exact pin of a version the index lacks names what it has", func(t *testing.T) {
		_, err := ix.ResolveRequirements(context.Background(), []string{"torch==2.7.1", "nvidia-cublas-cu12==12.4.5.9"}, py312, "")
		if err == nil || !strings.Contains(err.Error(), "nvidia-cublas-cu12") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestResolveFollowsExtrasThroughAnyDepthAndCutsCycles(t *testing.T) {
	// gpu-a[x] → gpu-b[y] → gpu-c → nvidia-cublas; gpu-b[y] → gpu-a[x]
	// again; gpu-a without x pulls nothing of NVIDIA's.
	ws := []pypitest.FrameworkWheel{
		{Project: "gpu-a", Version: "1.0", Python: "py3", Platform: "any", Requires: []string{`gpu-b[y]>=1; extra == "x"`, "numpy"}},
		{Project: "gpu-b", Version: "1.0", Python: "py3", Platform: "any", Requires: []string{`gpu-a[x]==1.0; extra == "y"`, `gpu-c; extra == "y"`}},
		{Project: "gpu-c", Version: "2.0", Python: "py3", Platform: "any", Requires: []string{`nvidia-cublas-cu12<=12.4.5.8`, `gpu-c[z]; extra == "never"`}},
	}
	ix := realIndex(t, pypitest.Frameworks(ws...))
	res, err := ix.ResolveRequirements(context.Background(), []string{"gpu-a[x]==1.0"}, py312, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := versionOf(t, res, "nvidia-cublas-cu12"); got != "12.4.5.8" {
		t.Errorf("cuBLAS %s", got)
	}
	if p, _ := res.Project("gpu-b"); !slices.Equal(p.Extras, []string{"y"}) {
		t.Errorf("gpu-b extras %v", p.Extras)
	}
}

func TestResolveNamesAToolkitByTheBuildsItPins(t *testing.T) {
	ix := realIndex(t)
	_, pins := resolveToolkit(t, ix, "nvidia-cublas-cu12==12.4.5.8")
	if pins.CUDA != "12.4.1" || len(pins.Differs) != 0 {
		t.Errorf("CUDA %s, differs %q; want 12.4.1, the release that shipped cuBLAS 12.4.5.8", pins.CUDA, differs(pins))
	}
	res, pins := resolveToolkit(t, ix, "nvidia-cuda-runtime>=13", "nvidia-cublas<13.5")
	if pins.CUDA != "13.4.2" || differs(pins) != "libcublas 13.4.1.3" || versionOf(t, res, "nvidia-cublas") != "13.4.1.3" {
		t.Errorf("CUDA %s, differs %q", pins.CUDA, differs(pins))
	}
}

func TestResolveReachesReleasesPastTheCatalog(t *testing.T) {
	ix := realIndex(t, pypitest.ExtraRelease(release135jit), wheelsOf(t, "jax-cuda13-plugin==0.9.0", "jax-cuda13-pjrt==0.9.0"),
		pypitest.ExtraLibrary("nccl", "2.28.9", 13), pypitest.ExtraLibrary("nvshmem", "3.4.5", 13))
	_, pins := resolveToolkit(t, ix, "jax-cuda13-plugin[with-cuda]==0.9.0")
	if pins.CUDA != "13.5.0" {
		t.Errorf("CUDA %s, want 13.5.0 (the index's, past the catalog)", pins.CUDA)
	}
	if c, _ := pins.Toolkit.Component("libcublas"); c.Version != "13.10.0.20" {
		t.Errorf("cuBLAS %+v", c)
	}
}

func TestResolveRefusesWhatItCannotRead(t *testing.T) {
	ix := realIndex(t)
	for _, req := range []string{"torch @ https://example.com/torch.whl", "torch==2.7.1; python_version <", "torch[x=1", "torch===", "torch~=2"} {
		if _, err := ix.ResolveRequirements(context.Background(), []string{req}, py312, ""); err == nil {
			t.Errorf("%q: no error", req)
		}
	}
	_, err := ix.ResolveRequirements(context.Background(), []string{"torch==2.7.1"}, pypi.WheelTarget{Platform: pypi.LinuxX86_64, Python: "3"}, "")
	if err == nil {
		t.Error("python 3: no error")
	}
}
