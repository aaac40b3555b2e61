package doctor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cudaenv/cudaenv/internal/detect"
	"github.com/cudaenv/cudaenv/internal/venv/venvtest"
)

// torchVenv is a venv as pip lays out torch's: torch's dist-info (its
// version) and, unless init is "", torch/__init__.py; the nvJitLink wheel
// (12.4.127, which torch requires) and the runtime wheel's library.
func torchVenv(t testing.TB, root, torch, init string) []string {
	t.Helper()
	site := filepath.Join(root, "venv", "lib", "python3.12", "site-packages")
	files := map[string]string{
		"torch-" + torch + ".dist-info/METADATA":               "Metadata-Version: 2.1\nName: torch\nVersion: " + torch + "\nRequires-Dist: nvidia-nvjitlink-cu12==12.4.127; platform_system == \"Linux\"\n",
		"nvidia_nvjitlink_cu12-12.4.127.dist-info/METADATA":    "Metadata-Version: 2.1\nName: nvidia-nvjitlink-cu12\nVersion: 12.4.127\n",
		"nvidia_nvjitlink_cu12-12.4.127.dist-info/RECORD":      "nvidia/nvjitlink/lib/libnvJitLink.so.12,sha256=x,1\n",
		"nvidia/nvjitlink/lib/libnvJitLink.so.12":              "",
		"nvidia/cuda_runtime/lib/libcudart.so.12":              "",
		"nvidia_cuda_runtime_cu12-12.4.127.dist-info/METADATA": "Metadata-Version: 2.1\nName: nvidia-cuda-runtime-cu12\nVersion: 12.4.127\n",
	}
	if init != "" {
		files["torch/__init__.py"] = init
	}
	for rel, body := range files {
		p := filepath.Join(site, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return detect.Host{}.SitePackages(filepath.Join(root, "venv"))
}

// olderToolkit is CUDA 12.1.1's lib64 with NVIDIA's links: an older
// libnvJitLink.so.12, and (withRuntime) libcudart.so.12.
func olderToolkit(t testing.TB, root string, withRuntime bool) []LibDir {
	t.Helper()
	lib := filepath.Join(root, "cuda", "12.1.1", "lib64")
	if err := os.MkdirAll(lib, 0o755); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{"libnvJitLink.so.12": "libnvJitLink.so.12.1.105"}
	if withRuntime {
		links["libcudart.so.12"] = "libcudart.so.12.1.105"
	}
	for link, file := range links {
		if err := os.WriteFile(filepath.Join(lib, file), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(file, filepath.Join(lib, link)); err != nil {
			t.Fatal(err)
		}
	}
	return []LibDir{{Dir: lib, What: "CUDA 12.1.1"}}
}

// The prompt hook warns where doctor's check fails: a torch older than
// 2.6 takes LD_LIBRARY_PATH's older nvJitLink; from 2.6 on torch loads
// its wheel's by path first, under the condition its __init__.py says
// (2.6 to 2.8: only with its own wheel's runtime loaded, which a
// toolkit's libcudart on LD_LIBRARY_PATH displaces).
func TestTheHooksWarningFollowsWhatTorchLoadsByPath(t *testing.T) {
	const warning = `LD_LIBRARY_PATH loads CUDA 12.1.1's libnvJitLink.so.12 (12.1.105) before torch's nvidia-nvjitlink-cu12 12.4.127: importing torch fails with "undefined symbol"; see: cudaenv doctor`
	for _, tc := range []struct {
		desc, torch, init string
		runtime           bool // the toolkit has libcudart.so.12
		warn              bool
	}{
		{"torch 2.5 takes the toolkit's older nvJitLink", "2.5.1", venvtest.TorchInit25, true, true},
		{"torch 2.9 loads its wheel's nvJitLink by path first", "2.9.0", venvtest.TorchInitGated(venvtest.Gate29), true, false},
		{"torch 2.10 does, whatever runtime is loaded", "2.10.0+cu128", venvtest.TorchInitGated(venvtest.Gate29), false, false},
		{"torch 2.6 does with its wheel's runtime", "2.6.0+cu124", venvtest.TorchInitGated(venvtest.Gate26), false, false},
		{"torch 2.6 does not when the toolkit's runtime loads first", "2.6.0+cu124", venvtest.TorchInitGated(venvtest.Gate26), true, true},
		{"a torch of 2.6 whose __init__.py says nothing is not trusted to", "2.7.0", "", true, true},
		{"nor is one whose METADATA says 2.5 (its __init__.py is not read)", "2.5.1", venvtest.TorchInitGated(venvtest.Gate29), true, true},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			root := t.TempDir()
			sites := torchVenv(t, root, tc.torch, tc.init)
			dirs := olderToolkit(t, root, tc.runtime)
			got := LibrariesWarning(detect.Host{}, sites, dirs)
			if tc.warn && got != warning || !tc.warn && got != "" {
				t.Errorf("warning %q, want one: %v", got, tc.warn)
			}
			// doctor's check, from the same files, fails exactly then.
			libs := detect.Host{}.WheelLibs(sites)
			c := CheckLibraries(GatherLibraries(detect.Host{}, Libraries{Python: root, Wheels: libs, Dirs: dirs}))
			if (c.Status == Fail) != tc.warn {
				t.Errorf("doctor: %s %q", c.Status, c.Message)
			}
			if !tc.warn && (c.Status != OK || !strings.Contains(c.Message, "torch "+strings.SplitN(tc.torch, "+", 2)[0]+" loads its nvidia-nvjitlink-cu12 12.4.127 by path before LD_LIBRARY_PATH is searched, so CUDA 12.1.1's copy (12.1.105) is not taken")) {
				t.Errorf("doctor: %s %q", c.Status, c.Message)
			}
		})
	}
}

func TestReleaseAtLeast(t *testing.T) {
	for v, want := range map[string]bool{"2.6.0": true, "2.5.1+cu124": false, "2.10.0a0+git": true, "3.0": true, "2": false, "1.13.1": false, "": false} {
		if got := releaseAtLeast(v, 2, 6); got != want {
			t.Errorf("releaseAtLeast(%q, 2, 6) = %v", v, got)
		}
	}
}

// The hook's cost when a toolkit becomes active in a venv whose torch
// (2.9, the shape of its __init__.py) requires an nvJitLink wheel that
// the toolkit's older copy collides with: the dist-info files, torch's
// __init__.py (padded to the ~100 KB of PyTorch's), one stat. No warning.
func BenchmarkLibrariesWarningWithACollisionTorchLoadsByPath(b *testing.B) {
	root := b.TempDir()
	init := strings.Repeat("# padding as long as PyTorch's own __init__.py\n", 2200) + venvtest.TorchInitGated(venvtest.Gate29)
	sites := torchVenv(b, root, "2.9.0", init)
	dirs := olderToolkit(b, root, true)
	h := detect.Host{}
	b.ResetTimer()
	for range b.N {
		if w := LibrariesWarning(h, sites, dirs); w != "" {
			b.Fatal(w)
		}
	}
}

// The same collision with torch 2.5: decided by its METADATA, as before.
func BenchmarkLibrariesWarningWithACollisionTorch25(b *testing.B) {
	root := b.TempDir()
	sites := torchVenv(b, root, "2.5.1", venvtest.TorchInit25)
	dirs := olderToolkit(b, root, true)
	h := detect.Host{}
	b.ResetTimer()
	for range b.N {
		if w := LibrariesWarning(h, sites, dirs); w == "" {
			b.Fatal("no warning")
		}
	}
}
