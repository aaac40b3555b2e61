package doctor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cudaenv/cudaenv/internal/detect"
)

func TestCheckLibrariesJudgesWhatLoadsFirst(t *testing.T) {
	jit := detect.WheelLib{Soname: "libnvJitLink.so.12", Wheel: "nvidia-nvjitlink-cu12", Version: "12.4.127", Framework: "torch"}
	cudnn := detect.WheelLib{Soname: "libcudnn.so.9", Wheel: "nvidia-cudnn-cu12", Version: "9.1.0.70"}
	cuda121 := LibDir{Dir: "/s/cuda/12.1.1/lib64", What: "CUDA 12.1.1"}
	tests := []struct {
		desc   string
		in     Libraries
		status Status
		msg    string // a part of the message
		hint   string // a part of the hint
	}{
		{desc: "an older copy of a wheel's library fails, naming both versions",
			in:     Libraries{Python: "/v", Wheels: []detect.WheelLib{jit}, Selected: "12.1", TorchCUDA: "12.4", InstalledCUDA: []string{"12.4.0", "12.4.1", "12.1.1"}, Shadows: []Shadow{{Lib: jit, Dir: cuda121, Version: "12.1.105"}}},
			status: Fail, msg: `LD_LIBRARY_PATH loads CUDA 12.1.1's libnvJitLink.so.12 (12.1.105) before torch's nvidia-nvjitlink-cu12 12.4.127: importing torch fails with "undefined symbol"`,
			hint: "(cudaenv use 12.4.1; 12.4 in .cuda-version), or leave the libraries to torch and use the toolkit for building only (cudaenv use --libraries=off 12.1;"},
		{desc: "a copy of unknown version warns",
			in:     Libraries{Python: "/v", Wheels: []detect.WheelLib{jit}, Shadows: []Shadow{{Lib: jit, Dir: cuda121}}},
			status: Warn, msg: "(of a version its file names do not say) before torch's nvidia-nvjitlink-cu12 12.4.127; if it is older", hint: "cudaenv install 12.4 && cudaenv use 12.4"},
		{desc: "cuDNN's shorter version is the same release, not an older one",
			in:     Libraries{Python: "/v", Wheels: []detect.WheelLib{cudnn}, Shadows: []Shadow{{Lib: cudnn, Dir: LibDir{Dir: "/s/cudnn/lib", What: "cuDNN 9.1.0"}, Version: "9.1.0"}}},
			status: OK, msg: "as new as the wheels'"},
		{desc: "a folder that is not the selection's is named by its path",
			in:     Libraries{Python: "/v", Wheels: []detect.WheelLib{jit}, Shadows: []Shadow{{Lib: jit, Dir: LibDir{Dir: "/usr/local/cuda-12.1/lib64"}, Version: "12.1.105"}}},
			status: Fail, msg: "loads /usr/local/cuda-12.1/lib64's libnvJitLink.so.12", hint: "take /usr/local/cuda-12.1/lib64 off LD_LIBRARY_PATH"},
		{desc: "libraries=off passes",
			in:     Libraries{Python: "/v", Wheels: []detect.WheelLib{jit}, NoLibraries: true},
			status: OK, msg: "libraries=off: LD_LIBRARY_PATH is left to torch's nvidia-* wheels (1 library)"},
		{desc: "no shared sonames pass",
			in:     Libraries{Python: "/v", Wheels: []detect.WheelLib{cudnn}},
			status: OK, msg: "nothing on LD_LIBRARY_PATH shadows the environment's nvidia-* wheels"},
		{desc: "no wheels is nothing to judge", in: Libraries{Python: "/v"}, status: Skip, msg: "no nvidia-* wheel libraries in /v"},
		{desc: "no Python is nothing to judge", in: Libraries{}, status: Skip, msg: "no Python environment"},
		{desc: "wheels too slow to read are nothing to judge, said so", in: Libraries{Python: "/v", ReadErr: "the Python environment's wheels were not read within 10s"}, status: Skip, msg: "not read within 10s"},
		{desc: "Windows is nothing to judge", in: Libraries{GOOS: "windows", Python: "/v"}, status: Skip},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			c := CheckLibraries(tt.in)
			if c.ID != IDLibraries || c.Status != tt.status || !strings.Contains(c.Message, tt.msg) || !strings.Contains(c.Hint, tt.hint) {
				t.Errorf("got %s %q\nhint %q\nwant %s with %q, hint with %q", c.Status, c.Message, c.Hint, tt.status, tt.msg, tt.hint)
			}
		})
	}
}

func TestGatherLibrariesTakesTheFirstFolderThatHasTheSoname(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b b")
	for _, f := range []string{filepath.Join(a, "libcusparse.so.12"), filepath.Join(b, "libnvJitLink.so.12"), filepath.Join(b, "libnvJitLink.so.12.6.85"), filepath.Join(a, "libnvJitLink.so.12")} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	jit := detect.WheelLib{Soname: "libnvJitLink.so.12", Version: "12.4.127"}
	sp := detect.WheelLib{Soname: "libcusparse.so.12", Version: "12.3.1.170"}
	got := GatherLibraries(detect.Host{}, Libraries{
		Wheels: []detect.WheelLib{jit, sp, {Soname: "libcufft.so.11"}},
		Dirs:   []LibDir{{Dir: a, What: "CUDA 12.1.1", Components: map[string]string{"libnvjitlink": "12.1.105", "libcusparse": "12.1.0.106"}}, {Dir: b}},
	}).Shadows
	if len(got) != 2 || got[0].Dir.Dir != a || got[0].Version != "12.1.105" || got[1].Version != "12.1.0.106" || !got[0].older() || !got[1].older() {
		t.Errorf("shadows = %+v", got)
	}
}

// A toolkit from NVIDIA's wheels names no version in its library files:
// its receipt gives it, read only for a soname that collides; and a
// library entry's folder (NCCL's, cuSPARSELt's) is judged by its own
// version.
func TestGatherLibrariesAsksTheReceiptOnlyForACollision(t *testing.T) {
	root := t.TempDir()
	cuda, nccl := filepath.Join(root, "cuda", "lib"), filepath.Join(root, "nccl", "lib")
	for _, f := range []string{filepath.Join(cuda, "libcublas.so.12"), filepath.Join(nccl, "libnccl.so.2")} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	reads := 0
	receipt := func() map[string]string { reads++; return map[string]string{"libcublas": "12.4.2.65"} }
	dirs := []LibDir{{Dir: cuda, What: "CUDA 12.4.0", Components: map[string]string{}, Receipt: receipt}, {Dir: nccl, What: "NCCL 2.20.5", Components: map[string]string{"nccl": "2.20.5"}}}
	got := GatherLibraries(detect.Host{}, Libraries{Wheels: []detect.WheelLib{{Soname: "libcufft.so.11", Version: "11.2.1.3"}}, Dirs: dirs}).Shadows
	if len(got) != 0 || reads != 0 {
		t.Fatalf("no collision: shadows %+v, receipt read %d times", got, reads)
	}
	got = GatherLibraries(detect.Host{}, Libraries{Wheels: []detect.WheelLib{
		{Soname: "libcublas.so.12", Version: "12.4.5.8"}, {Soname: "libnccl.so.2", Version: "2.21.5"},
	}, Dirs: dirs}).Shadows
	if len(got) != 2 || got[0].Version != "12.4.2.65" || !got[0].older() || got[1].Version != "2.20.5" || !got[1].older() || reads != 1 {
		t.Errorf("shadows %+v, receipt read %d times", got, reads)
	}
	for soname, want := range map[string]string{"libcusparseLt.so.0": "cusparselt", "libcusparse.so.12": "libcusparse", "libnvshmem_host.so.3": "nvshmem", "libcutensor.so.2": "cutensor", "libcudss.so.0": "cudss"} {
		if got := componentOf(soname); got != want {
			t.Errorf("componentOf(%s) = %s, want %s", soname, got, want)
		}
	}
}

// The prompt hook's cost when a toolkit becomes active in a venv holding
// torch's nvidia-* wheels (17 packages) and nothing collides: folder
// listings and stats, no dist-info read.
func BenchmarkLibrariesWarningInAVenvWithoutCollisions(b *testing.B) {
	root := b.TempDir()
	site := filepath.Join(root, "venv", "lib", "python3.12", "site-packages")
	pkgs := []string{"cublas", "cuda_cupti", "cuda_nvrtc", "cuda_runtime", "cudnn", "cufft", "curand", "cusolver", "cusparse", "cusparselt", "nccl", "nvjitlink", "nvtx", "cufile", "nvshmem", "cuda_nvcc", "cccl"}
	for i, p := range pkgs {
		dir := filepath.Join(site, "nvidia", p, "lib")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "lib"+p+".so."+string(rune('1'+i%9))), nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	lib := filepath.Join(root, "cuda", "lib64")
	if err := os.MkdirAll(lib, 0o755); err != nil {
		b.Fatal(err)
	}
	h := detect.Host{}
	sites := h.SitePackages(filepath.Join(root, "venv"))
	dirs := []LibDir{{Dir: lib, What: "CUDA 12.1.1"}}
	b.ResetTimer()
	for range b.N {
		if w := LibrariesWarning(h, sites, dirs); w != "" {
			b.Fatal(w)
		}
	}
}
