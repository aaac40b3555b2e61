package detect

import (
	"context"
	"os"
	"reflect"
	"testing"
)

func hostConfig(t *testing.T, version string) string {
	t.Helper()
	b, err := os.ReadFile("../../compat/testdata/host_config_" + version + ".h")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestToolkit(t *testing.T) {
	const dir = "/home/u/.cudaenv/versions/12.6.3"
	full := map[string]string{
		dir + "/version.json":              `{"cuda": {"name": "CUDA SDK", "version": "12.6.3"}, "cuda_nvcc": {"version": "12.6.85"}}`,
		dir + "/bin/nvcc*":                 "",
		dir + "/nvvm/bin/cicc*":            "",
		dir + "/include/cuda_runtime.h":    "",
		dir + "/include/crt/host_config.h": hostConfig(t, "12.6"),
		dir + "/lib/libcudart.so.12.6.77":  "",
		dir + "/include/cuda.h":            "#define CUDA_VERSION 12060\n",
		dir + "/bin/crt/link.stub":         "",
		dir + "/bin/crt/prelink.stub":      "",
		dir + "/lib/libcudart_static.a":    "",
	}
	t.Run("a toolkit missing what nvcc links with says which files", func(t *testing.T) {
		files := map[string]string{}
		for k, v := range full {
			files[k] = v
		}
		// As CUDA 13.0.0 from PyPI: nvcc without its stubs.
		delete(files, dir+"/bin/crt/link.stub")
		delete(files, dir+"/bin/crt/prelink.stub")
		delete(files, dir+"/lib/libcudart_static.a")
		h := Host{Root: fakeRoot(t, files)}
		tk, _ := h.Toolkit(context.Background(), dir)
		if want := []string{"bin/crt/link.stub", "bin/crt/prelink.stub", "lib64/libcudart_static.a"}; !reflect.DeepEqual(tk.LinkMissing, want) || tk.Missing != nil {
			t.Errorf("LinkMissing = %v, Missing = %v", tk.LinkMissing, tk.Missing)
		}
		// Without nvcc there is nothing to link with, and nothing is asked.
		delete(files, dir+"/bin/nvcc*")
		tk, _ = Host{Root: fakeRoot(t, files)}.Toolkit(context.Background(), dir)
		if tk.LinkMissing != nil || tk.NVCC != "" {
			t.Errorf("libraries only: %+v", tk)
		}
	})
	t.Run("a toolkit without the library headers names those ATen's CUDA headers include", func(t *testing.T) {
		files := map[string]string{}
		for k, v := range full {
			files[k] = v
		}
		// As a minimal install: cudart's header, none of the libraries'.
		files[dir+"/include/cuda_runtime_api.h"] = ""
		files[dir+"/targets/x86_64-linux/include/cublas_v2.h"] = ""
		tk, _ := Host{Root: fakeRoot(t, files)}.Toolkit(context.Background(), dir)
		want := []string{"include/cublasLt.h", "include/cusparse.h", "include/cusolverDn.h", "include/cusolver_common.h"}
		if !reflect.DeepEqual(tk.MissingExtensionHeaders, want) {
			t.Errorf("MissingExtensionHeaders = %v, want %v", tk.MissingExtensionHeaders, want)
		}
		for _, h := range []string{"cublasLt.h", "cusparse.h", "cusolverDn.h", "cusolver_common.h"} {
			files[dir+"/include/"+h] = ""
		}
		if tk, _ = (Host{Root: fakeRoot(t, files)}).Toolkit(context.Background(), dir); tk.MissingExtensionHeaders != nil {
			t.Errorf("with every header: MissingExtensionHeaders = %v", tk.MissingExtensionHeaders)
		}
	})
	t.Run("a complete toolkit asks nvcc for its architectures", func(t *testing.T) {
		f := &fakeRunner{answers: map[string]result{dir + "/bin/nvcc --list-gpu-arch": {out: "compute_50\ncompute_52\ncompute_53\ncompute_60\ncompute_61\ncompute_62\ncompute_70\ncompute_72\ncompute_75\ncompute_80\ncompute_86\ncompute_87\ncompute_89\ncompute_90\n"}}}
		h := Host{Root: fakeRoot(t, full), Run: f.run}
		tk, err := h.Toolkit(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		if tk.Version != "12.6.3" || tk.VersionSource != "version.json" || tk.NVCC != dir+"/bin/nvcc" || tk.Missing != nil || tk.LinkMissing != nil {
			t.Errorf("Toolkit = %+v", tk)
		}
		if !tk.HasHostLimits || tk.HostLimits.GCCMax != "13" || tk.HostConfig != dir+"/include/crt/host_config.h" {
			t.Errorf("host limits = %+v (%v)", tk.HostLimits, tk.HasHostLimits)
		}
		if tk.ArchSource != "nvcc --list-gpu-arch" || tk.Archs[0] != "5.0" || tk.Archs[len(tk.Archs)-1] != "9.0" {
			t.Errorf("archs = %v from %s", tk.Archs, tk.ArchSource)
		}
	})
	t.Run("a redist tree without version.json reads cuda.h and falls back to the arch table", func(t *testing.T) {
		files := map[string]string{}
		for k, v := range full {
			files[k] = v
		}
		delete(files, dir+"/version.json")
		f := &fakeRunner{answers: map[string]result{dir + "/bin/nvcc --list-gpu-arch": {err: true, out: "nvcc fatal   : Unknown option '--list-gpu-arch'\n"}}}
		h := Host{Root: fakeRoot(t, files), Run: f.run}
		tk, err := h.Toolkit(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		if tk.Version != "12.6" || tk.VersionSource != "include/cuda.h" || tk.ArchSource != "table" || len(tk.Archs) == 0 {
			t.Errorf("Toolkit = %+v", tk)
		}
	})
	t.Run("nvcc --version is the last resort for the version", func(t *testing.T) {
		files := map[string]string{dir + "/bin/nvcc*": ""}
		f := &fakeRunner{answers: map[string]result{dir + "/bin/nvcc --version": {out: "nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2024 NVIDIA Corporation\nBuilt on Thu_Mar_28_02:18:24_PDT_2024\nCuda compilation tools, release 12.4, V12.4.131\nBuild cuda_12.4.r12.4/compiler.34097967_0\n"}}}
		h := Host{Root: fakeRoot(t, files), Run: f.run}
		tk, _ := h.Toolkit(context.Background(), dir)
		if tk.Version != "12.4" || tk.VersionSource != "nvcc --version" {
			t.Errorf("Toolkit = %+v", tk)
		}
		want := []string{"nvvm/bin/cicc", "include/cuda_runtime.h", "include/crt/host_config.h", "lib/libcudart"}
		if !reflect.DeepEqual(tk.Missing, want) {
			t.Errorf("Missing = %v, want %v", tk.Missing, want)
		}
	})
	t.Run("a directory that does not exist is an error", func(t *testing.T) {
		h := Host{Root: t.TempDir()}
		if _, err := h.Toolkit(context.Background(), "/nope"); err == nil {
			t.Error("want an error")
		}
	})
}

func TestParseGPUArchList(t *testing.T) {
	got := ParseGPUArchList([]byte("sm_75 sm_80 sm_90 sm_90a sm_100 sm_100a sm_100f sm_120\n"))
	if want := []string{"7.5", "8.0", "9.0", "10.0", "12.0"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ParseGPUArchList = %v, want %v", got, want)
	}
}

func TestCudnnVersion(t *testing.T) {
	h := Host{Root: fakeRoot(t, map[string]string{
		"c9/include/cudnn_version.h": "#ifndef CUDNN_VERSION_H_\n#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 5\n#define CUDNN_PATCHLEVEL 1\n#define CUDNN_VERSION (CUDNN_MAJOR * 10000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)\n",
		"c7/include/cudnn.h":         "#define CUDNN_MAJOR 7\n#define CUDNN_MINOR 6\n#define CUDNN_PATCHLEVEL 5\n",
		"empty/include/":             "",
	})}
	for dir, want := range map[string]string{"/c9": "9.5.1", "/c7": "7.6.5"} {
		if got, err := h.CudnnVersion(dir); err != nil || got != want {
			t.Errorf("CudnnVersion(%s) = %q, %v", dir, got, err)
		}
	}
	if _, err := h.CudnnVersion("/empty"); err == nil {
		t.Error("want an error")
	}
}

func TestLookPathAllAndDirsWithFile(t *testing.T) {
	h := Host{Root: fakeRoot(t, map[string]string{
		"usr/local/cuda/bin/nvcc*": "", "opt/cuda/bin/nvcc": "", "home/u/.cudaenv/shims/nvcc*": "",
		"usr/local/cuda/lib64/libcudnn.so.8": "", "home/u/cudnn/lib/libcudnn.so.9": "", "home/u/other/lib/libfoo.so": "",
	}), Env: map[string]string{"PATH": "/usr/local/cuda/bin:/opt/cuda/bin::/home/u/.cudaenv/shims:/usr/local/cuda/bin"}}
	if got, want := h.LookPathAll("nvcc"), []string{"/usr/local/cuda/bin/nvcc", "/home/u/.cudaenv/shims/nvcc"}; !reflect.DeepEqual(got, want) {
		t.Errorf("LookPathAll = %v, want %v (non-executables and repeats skipped)", got, want)
	}
	dirs := []string{"/home/u/other/lib", "/usr/local/cuda/lib64", "/missing", "/home/u/cudnn/lib"}
	if got, want := h.DirsWithFile(dirs, "libcudnn.so"), []string{"/usr/local/cuda/lib64", "/home/u/cudnn/lib"}; !reflect.DeepEqual(got, want) {
		t.Errorf("DirsWithFile = %v, want %v", got, want)
	}
}
