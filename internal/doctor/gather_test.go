package doctor

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cudaenv/cudaenv/internal/detect"
)

// TestGatherFeedsRun builds a fake machine (files under a temp root, canned
// command output) and checks that Gather finds what Run needs.
func TestGatherFeedsRun(t *testing.T) {
	const tk = "/home/u/.cudaenv/versions/12.6.3"
	const cudnn = "/home/u/.cudaenv/cudnn/9.5.1-cuda12"
	hostConfig, err := os.ReadFile("../../compat/testdata/host_config_12.6.h")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	files := map[string]string{
		tk + "/version.json":                  `{"cuda": {"version": "12.6.3"}}`,
		tk + "/bin/nvcc":                      "",
		tk + "/nvvm/bin/cicc":                 "",
		tk + "/include/cuda_runtime.h":        "",
		tk + "/include/crt/host_config.h":     string(hostConfig),
		tk + "/lib/libcudart.so.12":           "",
		tk + "/lib/libcudart_static.a":        "",
		tk + "/lib/stubs/libcuda.so":          "",
		tk + "/bin/crt/link.stub":             "",
		tk + "/bin/crt/prelink.stub":          "",
		"/usr/bin/cmake":                      "",
		cudnn + "/include/cudnn_version.h":    "#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 5\n#define CUDNN_PATCHLEVEL 1\n",
		cudnn + "/lib/libcudnn.so.9":          "",
		"/usr/local/cuda/bin/nvcc":            "",
		"/usr/local/cuda/lib64/libcudnn.so.8": "",
		"/usr/bin/g++":                        "",
		"/usr/bin/nvidia-smi":                 "",
		"/usr/bin/python3":                    "",
		"/sys/module/nvidia/version":          "560.35.05\n",
	}
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	answers := map[string]string{
		tk + "/bin/nvcc --list-gpu-arch":             "compute_50\ncompute_75\ncompute_80\ncompute_89\ncompute_90\n",
		"/usr/bin/g++ -dumpfullversion -dumpversion": "13.2.0\n",
		"/usr/bin/cmake --version":                   "cmake version 3.25.1\n\nCMake suite maintained and supported by Kitware (kitware.com/cmake).\n",
		"/usr/bin/nvidia-smi --query-gpu=driver_version,name,compute_cap --format=csv,noheader": "560.35.05, NVIDIA L40S, 8.9\n",
	}
	run := func(_ context.Context, name string, args ...string) ([]byte, error) {
		key := strings.Join(append([]string{name}, args...), " ")
		if out, ok := answers[key]; ok {
			return []byte(out), nil
		}
		if name == "/usr/bin/python3" {
			return []byte("/usr/lib/python3/dist-packages\n"), nil
		}
		return nil, errors.New("not found")
	}
	h := detect.Host{Root: root, Run: run, GOOS: "linux", Env: map[string]string{
		"PATH":            "/usr/local/cuda/bin:/usr/bin:" + tk + "/bin",
		"LD_LIBRARY_PATH": "/usr/local/cuda/lib64:" + cudnn + "/lib",
	}}
	in := Gather(context.Background(), h, Selection{
		Toolkit: Toolkit{Version: "12.6.3", Source: "set by CUDAENV_VERSION", Dir: tk, HasReceipt: true},
		Cudnn:   Cudnn{Dir: cudnn, VariantMajor: 12},
	})
	if !in.Toolkit.Installed || in.Toolkit.Facts.HostLimits.GCCMax != "13" || in.Cudnn.Version != "9.5.1" ||
		in.Driver.Version != "560.35.05" || len(in.GPUs) != 1 || len(in.Compilers) != 1 || in.Torch != nil ||
		in.CMake.Path != "/usr/bin/cmake" || in.CMake.Version != "3.25.1" {
		t.Fatalf("Gather = %+v", in)
	}
	got := map[string]Status{}
	for _, c := range Run(in).Checks {
		got[c.ID] = c.Status
	}
	want := map[string]Status{
		IDToolkit: OK, IDDriver: OK, IDGPUArch: OK, IDCudnn: OK, IDHostCompiler: OK, IDCMake: OK, // 3.25 is fine for CUDA 12
		IDPath:  Fail, // /usr/local/cuda/bin/nvcc comes first, and its lib64 carries a libcudnn
		IDTorch: Skip, IDEnv: OK,
	}
	for id, s := range want {
		if got[id] != s {
			t.Errorf("%s = %s, want %s", id, got[id], s)
		}
	}
}

// Python is asked (the python3 on PATH, for PyTorch) only when a
// virtualenv or conda environment is active: otherwise python3 is often a
// pyenv or conda shim that costs half a second on a busy machine (issue
// #36), for a Python the user may not mean. The torch check then says so.
func TestGatherAsksPythonOnlyInAVirtualOrCondaEnvironment(t *testing.T) {
	root := t.TempDir()
	site := "/home/u/proj/.venv/lib/python3.12/site-packages"
	for name, body := range map[string]string{
		"/home/u/proj/.venv/bin/python3": "",
		site + "/torch/version.py":       "__version__ = '2.5.1+cu124'\ncuda = '12.4'\n",
	} {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name  string
		env   map[string]string
		asked bool
	}{
		{"no environment active", map[string]string{}, false},
		{"a virtualenv", map[string]string{"VIRTUAL_ENV": "/home/u/proj/.venv"}, true},
		{"a conda environment", map[string]string{"CONDA_PREFIX": "/home/u/proj/.venv"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var ran []string
			run := func(_ context.Context, name string, args ...string) ([]byte, error) {
				mu.Lock()
				ran = append(ran, name)
				mu.Unlock()
				if strings.HasSuffix(name, "/python3") {
					return []byte(site + "\n#python 3.12\n"), nil
				}
				return nil, errors.New("not found")
			}
			tc.env["PATH"] = "/home/u/proj/.venv/bin"
			in := Gather(context.Background(), detect.Host{Root: root, Run: run, GOOS: "linux", Env: tc.env}, Selection{})
			asked := slices.Contains(ran, "/home/u/proj/.venv/bin/python3")
			if asked != tc.asked || (in.Torch != nil) != tc.asked {
				t.Fatalf("python asked: %v, torch %+v; want asked %v", asked, in.Torch, tc.asked)
			}
			c := checkTorch(in)
			if !tc.asked && (c.Status != Skip || c.Message != "no PyTorch in the active Python (no virtualenv or conda environment is active; doctor asks Python only in one: activate it, or run doctor with uv run)") {
				t.Errorf("torch check: %s %q", c.Status, c.Message)
			}
			if tc.asked && in.Torch.Version != "2.5.1+cu124" {
				t.Errorf("torch %+v", in.Torch)
			}
		})
	}
}
