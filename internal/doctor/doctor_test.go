package doctor

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/cudaenv/cudaenv/compat"
	"github.com/cudaenv/cudaenv/internal/detect"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

const tkDir = "/home/u/.cudaenv/versions/12.4.1"

// healthy is a machine where every check passes: CUDA 12.4.1 selected, two
// H200s on driver 550.54.15, cuDNN 9.5.1 (cuda12), g++ 13, torch cu124.
func healthy() Inputs {
	return Inputs{
		GOOS: "linux",
		Toolkit: Toolkit{
			Version: "12.4.1", Source: "set by /p/.cuda-version", Dir: tkDir, Installed: true, HasReceipt: true,
			Facts: detect.Toolkit{
				Dir: tkDir, Version: "12.4.1", VersionSource: "version.json", NVCC: tkDir + "/bin/nvcc", VersionFiles: []string{"version.json"},
				HostLimits:    compat.HostLimits{GCCMax: "13", ClangMin: "3.3", ClangMax: "17", MSVCMin: 1910, MSVCMax: 1949},
				HasHostLimits: true, HostConfig: tkDir + "/include/crt/host_config.h",
				Archs: compat.ArchsFor("12.4.1"), ArchSource: "nvcc --list-gpu-arch",
			},
		},
		Cudnn:  Cudnn{Version: "9.5.1", Dir: "/home/u/.cudaenv/cudnn/9.5.1-cuda12", VariantMajor: 12},
		Driver: detect.Driver{Version: "550.54.15", Source: detect.SysModuleVersion},
		GPUs: []detect.GPU{
			{Index: 0, Name: "NVIDIA H200", ComputeCap: "9.0", Driver: "550.54.15"},
			{Index: 1, Name: "NVIDIA H200", ComputeCap: "9.0", Driver: "550.54.15"},
		},
		Compilers: []detect.Compiler{
			{Kind: "gcc", Path: "/usr/bin/g++", Version: "13.2.0", Via: "PATH", Active: true},
			{Kind: "gcc", Path: "/usr/bin/gcc", Version: "13.2.0", Via: "PATH"},
		},
		Torch:         &detect.Torch{Version: "2.5.1+cu124", CUDA: "12.4", Path: "/home/u/.venv/lib/python3.11/site-packages/torch/version.py", Python: "/home/u/.venv/bin/python3"},
		Env:           map[string]string{"PATH": "/home/u/.cudaenv/shims:/usr/bin"},
		LDLibraryPath: []string{tkDir + "/lib", "/home/u/.cudaenv/cudnn/9.5.1-cuda12/lib"},
		NVCCOnPath:    []string{"/home/u/.cudaenv/shims/nvcc"},
		CudnnOnLDPath: []string{"/home/u/.cudaenv/cudnn/9.5.1-cuda12/lib"},
		OwnBinDirs:    []string{tkDir + "/bin", "/home/u/.cudaenv/shims"},
		CMake:         struct{ Path, Version string }{"/usr/bin/cmake", "4.1.0"},
	}
}

// cuda13 is healthy() with CUDA 13.0.0 from PyPI selected.
func cuda13(dir string) Inputs {
	in := healthy()
	in.Toolkit.Version, in.Toolkit.Dir, in.Toolkit.From = "13.0.0", dir, "pypi"
	in.Toolkit.Facts.Dir, in.Toolkit.Facts.Version, in.Toolkit.Facts.NVCC = dir, "13.0", dir+"/bin/nvcc"
	in.Toolkit.Facts.Archs = compat.ArchsFor("13.0.0")
	in.Driver.Version = "580.65.06"
	in.Cudnn, in.CudnnOnLDPath, in.Torch = Cudnn{}, nil, nil
	in.LDLibraryPath = []string{dir + "/lib"}
	in.OwnBinDirs = []string{dir + "/bin", "/home/u/.cudaenv/shims"}
	return in
}

func scenarios() map[string]Inputs {
	s := map[string]Inputs{}

	s["all-good"] = healthy()

	in := healthy()
	in.Driver.Version = "470.82.01"
	s["old-driver"] = in

	in = healthy()
	in.Driver.Version = "535.104.05"
	s["driver-minor-compat"] = in

	in = healthy()
	in.Driver = detect.Driver{Detail: "no NVIDIA kernel module loaded and no nvidia-smi found"}
	in.GPUs = nil
	s["no-gpu"] = in

	in = healthy()
	in.NVCCOnPath = []string{"/usr/local/cuda/bin/nvcc", "/home/u/.cudaenv/shims/nvcc"}
	in.LDLibraryPath = []string{"/usr/local/cuda/lib64", tkDir + "/lib", "/home/u/.cudaenv/cudnn/9.5.1-cuda12/lib"}
	in.CudnnOnLDPath = []string{"/usr/local/cuda/lib64", "/home/u/.cudaenv/cudnn/9.5.1-cuda12/lib"}
	s["shadowed-nvcc"] = in

	in = healthy()
	in.Cudnn = Cudnn{Version: "9.5.1", Dir: "/home/u/.cudaenv/cudnn/9.5.1-cuda11", VariantMajor: 11}
	in.LDLibraryPath = []string{tkDir + "/lib", "/home/u/.cudaenv/cudnn/9.5.1-cuda11/lib"}
	in.CudnnOnLDPath = []string{"/home/u/.cudaenv/cudnn/9.5.1-cuda11/lib"}
	s["wrong-cudnn-variant"] = in

	in = healthy()
	in.Compilers = []detect.Compiler{
		{Kind: "gcc", Path: "/usr/bin/g++", Version: "14.2.0", Via: "PATH", Active: true},
		{Kind: "gcc", Path: "/usr/bin/g++-12", Version: "12.3.0", Via: "PATH"},
		{Kind: "gcc", Path: "/usr/bin/gcc", Version: "14.2.0", Via: "PATH"},
		{Kind: "gcc", Path: "/usr/bin/gcc-12", Version: "12.3.0", Via: "PATH"},
		{Kind: "clang", Path: "/usr/bin/clang++-18", Version: "18.1.3", Via: "PATH"},
	}
	s["unsupported-gcc"] = in

	in = healthy()
	in.Compilers = []detect.Compiler{{Kind: "gcc", Path: "/usr/bin/g++", Version: "14.2.0", Via: "PATH", Active: true}}
	s["unsupported-gcc-no-alternative"] = in

	in = healthy()
	in.Torch = &detect.Torch{Version: "2.5.1+cu118", CUDA: "11.8", Path: "/usr/lib/python3/dist-packages/torch/version.py", Python: "/usr/bin/python3"}
	s["torch-cu118"] = in

	in = healthy()
	in.Env = map[string]string{"CUDA_LAUNCH_BLOCKING": "1"}
	s["launch-blocking"] = in

	in = healthy()
	in.Env = map[string]string{"CUDA_VISIBLE_DEVICES": ""}
	s["empty-visible-devices"] = in

	in = healthy()
	in.GPUs = []detect.GPU{{Index: 0, Name: "NVIDIA GeForce RTX 5090", ComputeCap: "12.0", Driver: "550.54.15"}}
	s["gpu-newer-than-toolkit"] = in

	in = healthy()
	in.Toolkit = Toolkit{}
	in.Cudnn = Cudnn{}
	s["nothing-selected"] = in

	// CUDA 12 from PyPI: no nvcc on its own, another one on PATH, no
	// CUDACXX; a note, not a failure.
	in = healthy()
	in.Toolkit.From, in.Toolkit.LibrariesOnly = "pypi", true
	in.Toolkit.Facts.NVCC = ""
	in.Toolkit.Facts.Missing = []string{"bin/nvcc", "nvvm/bin/cicc"}
	in.NVCCOnPath = []string{"/usr/local/cuda-12.6/bin/nvcc"}
	s["libraries-only"] = in

	// The same tree installed before cudaenv wrote version files and link
	// stubs: CMake cannot find it, -lcuda does not link.
	in = healthy()
	in.Toolkit.From, in.Toolkit.LibrariesOnly = "pypi", true
	in.Toolkit.Facts.NVCC = ""
	in.Toolkit.Facts.Missing = []string{"bin/nvcc", "nvvm/bin/cicc"}
	in.Toolkit.Facts.VersionFiles = nil
	in.Toolkit.Facts.MissingStubs = []string{"lib/stubs/libcuda.so", "lib/stubs/libnvidia-ml.so"}
	s["libraries-only-old-install"] = in

	// CMake from PyPI reads the environment's CUDAToolkit_ROOT.
	in = healthy()
	in.Toolkit.From, in.Toolkit.LibrariesOnly = "pypi", true
	in.Toolkit.Facts.NVCC = ""
	in.Toolkit.Facts.Missing = []string{"bin/nvcc", "nvvm/bin/cicc"}
	in.CMake.Version, in.CMake.Path = "4.4.5", "/home/u/.local/bin/cmake"
	in.Env = map[string]string{"CUDAToolkit_ROOT": in.Toolkit.Dir}
	s["libraries-only-cmake4"] = in

	// CUDA 13.0.0 from PyPI: nvcc without the stubs it links with.
	in = cuda13("/home/u/.cudaenv/versions/13.0.0")
	in.Toolkit.Facts.LinkMissing = []string{"bin/crt/link.stub", "bin/crt/prelink.stub"}
	s["cannot-link"] = in

	// CUDA 13 with Debian 12's CMake.
	in = cuda13("/home/u/.cudaenv/versions/13.0.0")
	in.CMake.Version = "3.25.1"
	s["old-cmake"] = in

	in = healthy()
	in.Toolkit.Installed = false
	in.Toolkit.Facts = detect.Toolkit{}
	s["toolkit-not-installed"] = in

	return s
}

func TestGolden(t *testing.T) {
	for name, in := range scenarios() {
		t.Run(name, func(t *testing.T) {
			r := Run(in)
			var txt, js bytes.Buffer
			if err := WriteText(&txt, r, Plain); err != nil {
				t.Fatal(err)
			}
			if err := WriteJSON(&js, r); err != nil {
				t.Fatal(err)
			}
			golden(t, name+".txt", txt.Bytes())
			golden(t, name+".json", js.Bytes())
		})
	}
}

func TestFancyText(t *testing.T) {
	var b bytes.Buffer
	r := Run(scenarios()["unsupported-gcc"])
	if err := WriteText(&b, r, Fancy); err != nil {
		t.Fatal(err)
	}
	golden(t, "unsupported-gcc.fancy.txt", b.Bytes())
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the output:\n--- got\n%s--- want\n%s", path, got, want)
	}
}
