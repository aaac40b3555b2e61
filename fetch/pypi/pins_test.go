package pypi_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cudaenv/cudaenv/fetch/pypi"
	"github.com/cudaenv/cudaenv/fetch/pypi/pypitest"
)

// Requirement lines below are copied from the real wheels' METADATA as
// recorded in the research data in shared/nvidia/compat (torch_pins.tsv for torch 2.10.0
// build 3, framework_cuda_pins.tsv for jax-cuda13-plugin 0.9.0 and
// tensorflow 2.21.0); torch 2.15.0 is torch215 in metadata_test.go.

var torch210 = pypitest.FrameworkWheel{Project: "torch", Version: "2.10.0", Build: "3", Serve: pypitest.ServeRanges, Padding: 5 << 20, Requires: linuxX86(
	"cuda-bindings==12.9.4", "nvidia-cuda-nvrtc-cu12==12.8.93", "nvidia-cuda-runtime-cu12==12.8.90", "nvidia-cuda-cupti-cu12==12.8.90",
	"nvidia-cudnn-cu12==9.10.2.21", "nvidia-cublas-cu12==12.8.4.1", "nvidia-cufft-cu12==11.3.3.83", "nvidia-curand-cu12==10.3.9.90",
	"nvidia-cusolver-cu12==11.7.3.90", "nvidia-cusparse-cu12==12.5.8.93", "nvidia-cusparselt-cu12==0.7.1", "nvidia-nccl-cu12==2.27.5",
	"nvidia-nvshmem-cu12==3.4.5", "nvidia-nvtx-cu12==12.8.90", "nvidia-nvjitlink-cu12==12.8.93", "nvidia-cufile-cu12==1.13.1.3", "triton==3.6.0")}

func linuxX86(reqs ...string) []string {
	for i, r := range reqs {
		reqs[i] = r + `; platform_system == "Linux" and platform_machine == "x86_64"`
	}
	return reqs
}

func withExtra(extra string, reqs ...string) []string {
	for i, r := range reqs {
		reqs[i] = r + `; extra == "` + extra + `"`
	}
	return reqs
}

var jaxPlugin = pypitest.FrameworkWheel{Project: "jax-cuda13-plugin", Version: "0.9.0", Serve: pypitest.ServeMetadata,
	Requires: append([]string{"jax-cuda13-pjrt==0.9.0"}, withExtra("with-cuda",
		"nvidia-cublas>=13.0.0.19", "nvidia-cuda-cupti>=13.0.48", "nvidia-cuda-nvcc>=13.0.48", "nvidia-cuda-runtime>=13.0.48",
		"nvidia-cudnn-cu13<10.0,>=9.12.0.46", "nvidia-cufft>=12.0.0.15", "nvidia-cusolver>=12.0.3.29", "nvidia-cusparse>=12.6.2.49",
		"nvidia-nccl-cu13>=2.27.7", "nvidia-nvjitlink>=13.0.39", "nvidia-cuda-nvrtc>=13.0.48", "nvidia-nvshmem-cu13>=3.3.20", "nvidia-nvvm")...),
	ProvidesExtra: []string{"with-cuda"}}

var jax = pypitest.FrameworkWheel{Project: "jax", Version: "0.9.0", Python: "py3", Platform: "any", Serve: pypitest.ServeWhole,
	Requires:      append([]string{"jaxlib<=0.9.0,>=0.9.0", "numpy>=2.0"}, withExtra("cuda13", "jax-cuda13-plugin[with-cuda]==0.9.0", "jaxlib==0.9.0")...),
	ProvidesExtra: []string{"cuda13", "cuda12"}}

var tensorflow = pypitest.FrameworkWheel{Project: "tensorflow", Version: "2.21.0", Serve: pypitest.ServeMetadata,
	Requires: append([]string{"numpy>=1.26.0"}, withExtra("and-cuda",
		"nvidia-cublas-cu12<13.0,>=12.5.3.2", "nvidia-cuda-cupti-cu12<13.0,>=12.5.82", "nvidia-cuda-nvcc-cu12<13.0,>=12.5.82",
		"nvidia-cuda-nvrtc-cu12<13.0,>=12.5.82", "nvidia-cuda-runtime-cu12<13.0,>=12.5.82", "nvidia-cudnn-cu12<10.0,>=9.3.0.75",
		"nvidia-cufft-cu12<12.0,>=11.2.3.61", "nvidia-curand-cu12<11.0,>=10.3.6.82", "nvidia-cusolver-cu12<12.0,>=11.6.3.83",
		"nvidia-cusparse-cu12<13.0,>=12.5.1.3", "nvidia-nccl-cu12<3.0,>=2.27.7", "nvidia-nvjitlink-cu12<13.0,>=12.5.82")...),
	ProvidesExtra: []string{"and-cuda"}}

// cupy pins a range of the cuda-toolkit meta-package; the index has a
// four-part upload, a final and a pre-release of it.
var cupy = pypitest.FrameworkWheel{Project: "cupy-cuda13x", Version: "14.0.0", Serve: pypitest.ServeMetadata,
	Requires:      append([]string{"cuda-pathfinder==1.*,>=1.3.3"}, withExtra("ctk", "cuda-toolkit[cublas,cudart,cufft,curand,cusolver,cusparse,nvrtc]==13.*")...),
	ProvidesExtra: []string{"ctk"}}

// toolkit is the cuda-toolkit meta-package of a catalog release, uploaded
// as v: each extra pins one library (shape from the research data in
// shared/nvidia/compat/cuda_toolkit_pypi.tsv).
func toolkit(release, v string) pypitest.FrameworkWheel {
	rel, ok := pypi.CatalogRelease(release)
	if !ok {
		panic("no release " + release)
	}
	w := pypitest.ToolkitWheel(rel, v)
	w.Serve = pypitest.ServeWhole
	return w
}

func TestFrameworkPinsNameTheCUDAReleaseAndCudnnBuild(t *testing.T) {
	srv := pypitest.New(t,
		pypitest.Frameworks(torch215(pypitest.ServeMetadata), torch210, jaxPlugin, jax, tensorflow, cupy,
			toolkit("13.0.3", "13.0.3.0"), toolkit("13.2.2", "13.2.2"), toolkit("13.4.2", "13.5.0rc1")),
		pypitest.ExtraCudnn("9.26.0.51", 13), pypitest.ExtraCudnn("9.10.2.21", 12), pypitest.ExtraCudnn("9.99.0.1rc1", 12, 13))
	ix, err := pypi.NewIndex(srv.URL(), pypi.WithHTTPClient(srv.Client()), pypi.WithRetries(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	newestCudnn := func(major int) string { // what the index has, pre-releases left out
		v, _ := ix.Versions(context.Background(), "nvidia-cudnn-cu"+map[int]string{12: "12", 13: "13"}[major])
		return v[len(v)-1]
	}
	tests := []struct {
		name, arg, platform string
		cuda, cudnn         string
		exact               bool
		from, extra         string
	}{
		{"torch 2.15 pins cuda-toolkit exactly, a release no table has", "torch==2.15.0", pypi.LinuxX86_64, "13.2.2", "9.26.0.51", true, "nvidia-cuda-runtime==13.2.86.* (cuda-toolkit 13.2.2)", ""},
		{"torch 2.10 pins each library; its runtime and cuBLAS make it 12.8.1, not 12.8.2", "torch==2.10.0", pypi.LinuxX86_64, "12.8.1", "9.10.2.21", true, "nvidia-cuda-runtime-cu12==12.8.90", ""},
		{"the jax plugin's ranges take the newest release the index has, with its CUDA extra turned on", "jax-cuda13-plugin==0.9.0", pypi.LinuxX86_64, "13.4.2", newestCudnn(13), false, "nvidia-cuda-runtime>=13.0.48 (newest on the index: 13.4.92)", "with-cuda"},
		{"jax[cuda13] follows its exact pin of the plugin", "jax[cuda13]==0.9.0", pypi.LinuxX86_64, "13.4.2", newestCudnn(13), false, "nvidia-cuda-runtime>=13.0.48 (jax-cuda13-plugin 0.9.0; newest on the index: 13.4.92)", ""},
		{"tensorflow's ranges below 13 take the newest CUDA 12", "tensorflow[and-cuda]==2.21.0", pypi.LinuxX86_64, "12.9.2", newestCudnn(12), false, "nvidia-cuda-runtime-cu12<13.0,>=12.5.82 (newest on the index: 12.9.79)", ""},
		{"cupy's cuda-toolkit range takes the newest final toolkit, not the pre-release", "cupy-cuda13x[ctk]==14.0.0", pypi.LinuxX86_64, "13.2.2", "", true, "nvidia-cuda-runtime==13.2.86.* (cuda-toolkit 13.2.2)", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fw, err := pypi.ParseFramework(tt.arg)
			if err != nil {
				t.Fatal(err)
			}
			p, err := ix.FrameworkPins(context.Background(), fw, tt.platform, "3.12", "")
			if err != nil {
				t.Fatal(err)
			}
			if p.CUDA != tt.cuda || p.Cudnn != tt.cudnn || p.CUDAExact != tt.exact || p.CUDAFrom != tt.from || p.Extra != tt.extra {
				t.Errorf("got CUDA %s (exact %v, from %q), cuDNN %s, extra %q; want CUDA %s (exact %v, from %q), cuDNN %s, extra %q",
					p.CUDA, p.CUDAExact, p.CUDAFrom, p.Cudnn, p.Extra, tt.cuda, tt.exact, tt.from, tt.cudnn, tt.extra)
			}
			if strings.Contains(p.Cudnn, "rc") {
				t.Errorf("a range took the pre-release %s", p.Cudnn)
			}
		})
	}
	t.Run("the cuda-toolkit pin's extras name each library's build", func(t *testing.T) {
		p, err := ix.FrameworkPins(context.Background(), pypi.Framework{Project: "torch", Version: "2.15.0"}, pypi.LinuxX86_64, "3.12", "")
		if err != nil {
			t.Fatal(err)
		}
		c, ok := p.Toolkit.Component("libcublas")
		if !ok || c.Version != "13.4.1.3" || !c.Exact || p.Toolkit.Toolkit != "13.2.2" || len(p.Differs) != 0 {
			t.Errorf("cuBLAS = %+v (toolkit %s), want the meta-package's exact 13.4.1.3", c, p.Toolkit.Toolkit)
		}
		if _, ok := p.Toolkit.Component("libcurand"); ok {
			t.Errorf("cuRAND is pinned, but torch asks for no curand extra: %+v", p.Toolkit.Components)
		}
	})
	t.Run("pins for another platform do not apply", func(t *testing.T) {
		_, err := ix.FrameworkPins(context.Background(), pypi.Framework{Project: "torch", Version: "2.10.0"}, pypi.LinuxSBSA, "3.12", "")
		if err == nil || !strings.Contains(err.Error(), "has no wheel of 2.10.0 for linux-sbsa") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("a release the index lacks says what it has", func(t *testing.T) {
		_, err := ix.FrameworkPins(context.Background(), pypi.Framework{Project: "torch", Version: "2.16.0"}, pypi.LinuxX86_64, "3.12", "")
		if err == nil || !strings.Contains(err.Error(), "newest there: 2.10.0, 2.15.0") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestDependencyAllows(t *testing.T) {
	tests := []struct {
		req, version string
		want         bool
	}{
		{"nvidia-cudnn-cu13<10.0,>=9.12.0.46", "9.26.0.51", true},
		{"nvidia-cudnn-cu13<10.0,>=9.12.0.46", "10.0.0.1", false},
		{"nvidia-cudnn-cu13<10.0,>=9.12.0.46", "9.30.0.1rc1", false},
		{"nvidia-cudnn-cu13>=9.30.0.1rc1", "9.30.0.1rc1", true},
		{"cuda-toolkit==13.*", "13.0.3.0", true},
		{"cuda-toolkit==13.*", "12.9.1", false},
		{"cuda-toolkit (==13.0.2)", "13.0.2", true},
		{"torch==2.15.0", "2.15.0+cu132", true},
		{"nvidia-cublas>=13.1.0.3,<=13.1.1.3", "13.1.1.3", true},
		{"nvidia-cublas>=13.1.0.3,<=13.1.1.3", "13.2.0.1", false},
		{"foo~=2.1", "2.9", true},
		{"foo~=2.1", "3.0", false},
		{"foo!=1.*", "1.5", false},
	}
	for _, tt := range tests {
		d, err := pypi.ParseDependency(tt.req)
		if err != nil {
			t.Fatalf("%s: %v", tt.req, err)
		}
		if got := d.Allows(tt.version); got != tt.want {
			t.Errorf("%s allows %s = %v, want %v", tt.req, tt.version, got, tt.want)
		}
	}
}

func TestMarkers(t *testing.T) {
	linux, _ := pypi.PythonEnv(pypi.LinuxX86_64, "3.12", "and-cuda")
	win, _ := pypi.PythonEnv(pypi.WindowsX86_64, "3.9")
	tests := []struct {
		marker     string
		env        pypi.MarkerEnv
		want       bool
		errContain string
	}{
		{`platform_system == "Linux" and platform_machine == "x86_64"`, linux, true, ""},
		{`platform_system == "Linux" and platform_machine == "x86_64"`, win, false, ""},
		{`sys_platform == 'win32' or (python_version >= "3.10" and extra == "and_cuda")`, linux, true, ""},
		{`python_version < "3.10"`, win, true, ""},
		{`"3.11" <= python_version`, linux, true, ""},
		{`extra == "ctk"`, linux, false, ""},
		{`platform_machine in "x86_64 aarch64"`, linux, true, ""},
		{`os_name not in "nt"`, win, false, ""},
		{`python_versio == "3.12"`, linux, false, "unknown variable"},
		{`platform_system == Linux`, linux, false, "unknown variable"},
		{`platform_system == "Linux" and`, linux, false, "ends early"},
		{`(platform_system == "Linux"`, linux, false, "missing )"},
		{`platform_system < "Linux"`, linux, false, "not versions"},
		{`platform_system == "Linux`, linux, false, "unterminated"},
		{`"a" == "a"`, linux, false, "one variable"},
	}
	for _, tt := range tests {
		d, err := pypi.ParseDependency("nvidia-foo; " + tt.marker)
		var got bool
		if err == nil {
			got, err = d.Applies(tt.env)
		}
		if tt.errContain != "" {
			if err == nil || !strings.Contains(err.Error(), tt.errContain) {
				t.Errorf("%s: err = %v, want %q", tt.marker, err, tt.errContain)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s = %v, %v; want %v", tt.marker, got, err, tt.want)
		}
	}
}
