package pypi

// An opt-in check with NVIDIA's real CUDA 13 wheels, already downloaded
// (no network here): CUDAENV_PYPI_WHEELS names a folder holding the
// linux-x86_64 wheels of nvidia-cuda-nvcc, -cuda-runtime, -cuda-crt, -nvvm
// and -cuda-cccl, e.g. from
//
//	pip download --no-deps --only-binary=:all: --platform manylinux_2_17_x86_64 -d DIR \
//	  nvidia-cuda-nvcc==13.0.48 nvidia-cuda-runtime==13.0.48 nvidia-cuda-crt==13.0.48 \
//	  nvidia-nvvm==13.0.48 nvidia-cuda-cccl==13.0.50
//
// It extracts them with ExtractWheel, adds the targets/<arch>-linux and
// lib64 links the store adds to every Linux tree, and compiles a .cu file
// to an object with the tree's nvcc and the machine's host compiler (it
// compiles without those links too), then links a program when the wheels
// can (see below).

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestRealCUDA13WheelsCompileAfterExtraction(t *testing.T) {
	dir := os.Getenv("CUDAENV_PYPI_WHEELS")
	if dir == "" {
		t.Skip("set CUDAENV_PYPI_WHEELS to a folder of real CUDA 13 wheels")
	}
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("needs linux-x86_64")
	}
	wheels, _ := filepath.Glob(filepath.Join(dir, "nvidia_*-13.*manylinux*x86_64*.whl"))
	if len(wheels) < 5 {
		t.Fatalf("found %d CUDA 13 wheels in %s, want nvcc, runtime, crt, nvvm and cccl", len(wheels), dir)
	}
	tree := t.TempDir()
	for _, w := range wheels {
		f, err := os.Open(w)
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := f.Stat()
		err = ExtractWheel(f, fi.Size(), tree)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(w), err)
		}
	}
	// What the store adds to every Linux tree (REPORT §3).
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(tree, "targets/x86_64-linux"), 0o755))
	must(os.Symlink("../../include", filepath.Join(tree, "targets/x86_64-linux/include")))
	must(os.Symlink("../../lib", filepath.Join(tree, "targets/x86_64-linux/lib")))
	must(os.Symlink("lib", filepath.Join(tree, "lib64")))

	nvcc := filepath.Join(tree, "bin/nvcc")
	out, err := exec.Command(nvcc, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("nvcc --version: %v\n%s", err, out)
	}
	t.Logf("nvcc --version:\n%s", out)
	src := filepath.Join(t.TempDir(), "saxpy.cu")
	must(os.WriteFile(src, []byte(`#include <cuda_runtime.h>
#include <cuda/std/cstdint>
__global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
int launch(int n, float a, const float *x, float *y) {
  saxpy<<<(n + 255) / 256, 256>>>(n, a, x, y);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
`), 0o644))
	obj := strings.TrimSuffix(src, ".cu") + ".o"
	cmd := exec.Command(nvcc, "-c", src, "-o", obj)
	cmd.Env = append(os.Environ(), "PATH="+filepath.Join(tree, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nvcc -c: %v\n%s", err, out)
	}
	fi, err := os.Stat(obj)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("compiled %s: %d bytes", filepath.Base(obj), fi.Size())

	// Linking a program needs bin/crt/link.stub, which nvidia-cuda-nvcc
	// ships from 13.0.88 on but not in 13.0.48 (CUDA 13.0.0).
	if _, err := os.Stat(filepath.Join(tree, "bin/crt/link.stub")); err != nil {
		t.Logf("not linking: these wheels have no bin/crt/link.stub")
		return
	}
	mainSrc := filepath.Join(filepath.Dir(src), "main.cu")
	body, _ := os.ReadFile(src)
	must(os.WriteFile(mainSrc, append(body, "int main() { return launch(0, 1, 0, 0) == 0 ? 0 : 0; }\n"...), 0o644))
	exe := filepath.Join(filepath.Dir(src), "saxpy")
	cmd = exec.Command(nvcc, mainSrc, "-o", exe)
	cmd.Env = append(os.Environ(), "PATH="+filepath.Join(tree, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nvcc link: %v\n%s", err, out)
	}
	if fi, err := os.Stat(exe); err != nil || fi.Mode()&0o111 == 0 {
		t.Fatalf("no executable: %v", err)
	}
}
