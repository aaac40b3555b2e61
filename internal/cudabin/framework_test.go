package cudabin

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fakeSite lays out a site-packages folder with the fixtures standing in
// for a framework's libraries.
func fakeSite(t *testing.T, files map[string]string) string {
	t.Helper()
	site := filepath.Join(t.TempDir(), "lib", "python3.12", "site-packages")
	for rel, src := range files {
		p := filepath.Join(site, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		data := []byte(src)
		if strings.HasPrefix(src, "testdata/") {
			data = must(os.ReadFile(src))
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return site
}

// torchInit is the part of torch 2.15's __init__.py that loads its
// libraries: the global deps library, then (once it loaded) the wheels'
// CUDA libraries by path.
const torchInit = `
def _preload_cuda_deps(err=None, required=True):
    cuda_libs = [
        ("nvjitlink", "libnvJitLink.so.*[0-9]"),
        ("cusparse", "libcusparse.so.*[0-9]"),
    ]

def _load_global_deps() -> None:
    try:
        ctypes.CDLL(global_deps_lib_path, mode=ctypes.RTLD_GLOBAL)
        try:
            with open("/proc/self/maps") as f:
                _maps = f.read()
            _preload_cuda_deps(required=False)
        except Exception:
            pass
    except OSError as err:
        _preload_cuda_deps(err)
        ctypes.CDLL(global_deps_lib_path, mode=ctypes.RTLD_GLOBAL)

def other():
    pass
`

// An older torch's (2.5's): only when the global deps library fails to
// load, from a dict.
const torchInitOld = `
def _load_global_deps() -> None:
    try:
        ctypes.CDLL(global_deps_lib_path, mode=ctypes.RTLD_GLOBAL)
    except OSError as err:
        cuda_libs: Dict[str, str] = {
            "nvjitlink": "libnvJitLink.so.*[0-9]",
        }
        for lib_folder, lib_name in cuda_libs.items():
            _preload_cuda_deps(lib_folder, lib_name)
        ctypes.CDLL(global_deps_lib_path, mode=ctypes.RTLD_GLOBAL)
`

func torchSite(t *testing.T, init string) string {
	return fakeSite(t, map[string]string{
		"torch/__init__.py":                         init,
		"torch/version.py":                          "__version__ = '2.15.0+cu124'\ncuda: Optional[str] = '12.4'\n",
		"torch/lib/libtorch_global_deps.so":         "testdata/cudart/libcudart.so.13", // needs nothing
		"torch/lib/libtorch_cuda.so":                "testdata/libkernel.so",
		"torch/_C.cpython-312-x86_64-linux-gnu.so":  "testdata/sparse_plain/libcusparse.so.12", // needs libnvJitLink.so.12, no RUNPATH
		"nvidia/nvjitlink/lib/libnvJitLink.so.12":   "testdata/jit124/libnvJitLink.so.12",
		"jax_plugins/xla_cuda12/xla_cuda_plugin.so": "testdata/app",
	})
}

func TestTorchLoadingItsWheelsByPathIsModeled(t *testing.T) {
	opt := Options{LibraryPath: []string{"testdata/jit121"}, DefaultDirs: []string{}, GPU: "8.0"}
	site := torchSite(t, torchInit)
	fws := Frameworks(context.Background(), []string{site}, opt)
	if len(fws) != 2 || fws[0].Name != "torch" || fws[1].Name != "jax" {
		t.Fatalf("frameworks %+v", fws)
	}
	torch := fws[0]
	if torch.Version != "2.15.0+cu124" {
		t.Errorf("torch version %q", torch.Version)
	}
	if !torch.Modeled || torch.Kernels == nil || filepath.Base(torch.Kernels.Path) != "libtorch_cuda.so" || !slices.Equal(torch.Kernels.SASS, []string{"sm_75", "sm_90"}) {
		t.Errorf("torch: modeled %v kernels %+v", torch.Modeled, torch.Kernels)
	}
	if v := torch.Kernels.Verdict; v == nil || v.Status != "no-kernel" {
		t.Errorf("torch on sm_80: %+v", v)
	}
	// Preloaded by path: LD_LIBRARY_PATH's 12.1 is not picked.
	if len(torch.Import.Undefined) != 0 || len(torch.Import.Needs) != 1 || torch.Import.Needs[0].Via != "already loaded" || !strings.HasPrefix(torch.Import.Needs[0].Path, site) {
		t.Errorf("torch import: needs %+v undefined %+v", torch.Import.Needs, torch.Import.Undefined)
	}
	if jax := fws[1]; jax.Kernels == nil || jax.Kernels.Verdict.Status != "runs" {
		t.Errorf("jax kernels %+v", jax.Kernels)
	}

	// An older torch preloads only when its global deps fail to load:
	// here they load, so LD_LIBRARY_PATH's 12.1 is picked and 12.4's
	// symbol is missing.
	site = torchSite(t, torchInitOld)
	torch = Frameworks(context.Background(), []string{site}, opt)[0]
	if len(torch.Import.Undefined) != 1 || torch.Import.Undefined[0].Symbol != "__nvJitLinkComplete_12_4@libnvJitLink.so.12" || torch.Import.Undefined[0].Picked != "testdata/jit121/libnvJitLink.so.12" {
		t.Errorf("old torch import: needs %+v undefined %+v", torch.Import.Needs, torch.Import.Undefined)
	}
	// When its global deps do not load (their library is found nowhere),
	// it preloads its dict's libraries by path and loads again.
	site = torchSite(t, torchInitOld)
	os.WriteFile(filepath.Join(site, "torch", "lib", "libtorch_global_deps.so"), must(os.ReadFile("testdata/sparse_plain/libcusparse.so.12")), 0o644) // needs libnvJitLink.so.12
	torch = Frameworks(context.Background(), []string{site}, Options{DefaultDirs: []string{}})[0]
	if len(torch.Import.Undefined) != 0 || len(torch.Import.Needs) != 1 || !strings.HasPrefix(torch.Import.Needs[0].Path, site) {
		t.Errorf("old torch, deps preloaded: needs %+v undefined %+v", torch.Import.Needs, torch.Import.Undefined)
	}
}
