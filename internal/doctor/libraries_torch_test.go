package doctor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cudaenv/cudaenv/internal/detect"
)

// torchVenv is a venv as pip lays out torch's wheels: torch's dist-info
// (its version) requiring nvidia-nvjitlink-cu12 12.4.127 and (withCublas)
// nvidia-cublas-cu12 12.6.4.1, each wheel with its library.
func torchVenv(t testing.TB, root, torch string, withCublas bool) []string {
	t.Helper()
	site := filepath.Join(root, "venv", "lib", "python3.12", "site-packages")
	meta := "Metadata-Version: 2.1\nName: torch\nVersion: " + torch + "\nRequires-Dist: nvidia-nvjitlink-cu12==12.4.127; platform_system == \"Linux\"\n"
	files := map[string]string{
		"nvidia_nvjitlink_cu12-12.4.127.dist-info/METADATA": "Metadata-Version: 2.1\nName: nvidia-nvjitlink-cu12\nVersion: 12.4.127\n",
		"nvidia_nvjitlink_cu12-12.4.127.dist-info/RECORD":   "nvidia/nvjitlink/lib/libnvJitLink.so.12,sha256=x,1\n",
		"nvidia/nvjitlink/lib/libnvJitLink.so.12":           "",
	}
	if withCublas {
		meta += "Requires-Dist: nvidia-cublas-cu12==12.6.4.1; platform_system == \"Linux\"\n"
		files["nvidia_cublas_cu12-12.6.4.1.dist-info/METADATA"] = "Metadata-Version: 2.1\nName: nvidia-cublas-cu12\nVersion: 12.6.4.1\n"
		files["nvidia_cublas_cu12-12.6.4.1.dist-info/RECORD"] = "nvidia/cublas/lib/libcublas.so.12,sha256=x,1\n"
		files["nvidia/cublas/lib/libcublas.so.12"] = ""
	}
	files["torch-"+torch+".dist-info/METADATA"] = meta
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

// olderToolkit is CUDA 12.1.1's lib64 with NVIDIA's links: libcudart,
// and older libnvJitLink and libcublas than the wheels'.
func olderToolkit(t testing.TB, root string) []LibDir {
	t.Helper()
	lib := filepath.Join(root, "cuda", "12.1.1", "lib64")
	if err := os.MkdirAll(lib, 0o755); err != nil {
		t.Fatal(err)
	}
	for link, file := range map[string]string{"libnvJitLink.so.12": "libnvJitLink.so.12.1.105", "libcublas.so.12": "libcublas.so.12.1.3.1", "libcudart.so.12": "libcudart.so.12.1.105"} {
		if err := os.WriteFile(filepath.Join(lib, file), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(file, filepath.Join(lib, link)); err != nil {
			t.Fatal(err)
		}
	}
	return []LibDir{{Dir: lib, What: "CUDA 12.1.1"}}
}

// The prompt hook warns where doctor's check fails, and says nothing
// where importing torch works: torch takes its wheels' cuBLAS through its
// RPATH, ahead of LD_LIBRARY_PATH; a torch older than 2.6 takes
// LD_LIBRARY_PATH's older nvJitLink (what its wheel's cuSPARSE needs
// through a RUNPATH of its own), and names it; from 2.6 on torch loads
// nvJitLink by path first, as 2.7.0 does under CUDA 12.1.1 and 2.5.1 does
// not (scripts/e2e-pypi.sh step 9c). Its METADATA's version decides.
func TestTheHooksWarningFollowsWhatTorchLoadsFirst(t *testing.T) {
	const warning = `LD_LIBRARY_PATH loads CUDA 12.1.1's libnvJitLink.so.12 (12.1.105) before torch's nvidia-nvjitlink-cu12 12.4.127: importing torch fails with "undefined symbol"; see: cudaenv doctor`
	for _, tc := range []struct {
		desc, torch string
		cublas      bool
		warn        bool
	}{
		{"torch 2.5 takes the toolkit's older nvJitLink", "2.5.1", false, true},
		{"torch 2.5 takes the toolkit's older nvJitLink, not its cuBLAS", "2.5.1", true, true},
		{"torch 2.6 takes its wheel's first", "2.6.0+cu124", false, false},
		{"torch 2.7 takes its wheels' nvJitLink and cuBLAS first", "2.7.0+cu126", true, false},
		{"torch 2.10 takes its wheel's first", "2.10.0", false, false},
		{"a development build of 2.6 is 2.6", "2.6.0a0+gitabc", false, false},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			root := t.TempDir()
			sites := torchVenv(t, root, tc.torch, tc.cublas)
			dirs := olderToolkit(t, root)
			got := LibrariesWarning(detect.Host{}, sites, dirs)
			if tc.warn && got != warning || !tc.warn && got != "" {
				t.Errorf("warning %q, want one: %v", got, tc.warn)
			}
			// doctor's check (without torch's libraries to model the
			// import from), from the same files, fails exactly then.
			libs := detect.Host{}.WheelLibs(sites)
			c := CheckLibraries(GatherLibraries(detect.Host{}, Libraries{Python: root, Wheels: libs, Dirs: dirs}))
			if (c.Status == Fail) != tc.warn {
				t.Errorf("doctor: %s %q", c.Status, c.Message)
			}
			if !tc.warn && (c.Status != OK || !strings.Contains(c.Message, "torch "+strings.SplitN(tc.torch, "+", 2)[0]+" takes its nvidia-") || !strings.Contains(c.Message, "ahead of LD_LIBRARY_PATH (") || !strings.Contains(c.Message, "), so CUDA 12.1.1's lib")) {
				t.Errorf("doctor: %s %q", c.Status, c.Message)
			}
		})
	}
}

// An older cuBLAS alone is no trap for any torch: its RPATH finds its
// wheel's first.
func TestAnOlderCublasIsNoTrapForTorch(t *testing.T) {
	root := t.TempDir()
	site := torchVenv(t, root, "2.5.1", true)
	if err := os.Remove(filepath.Join(site[0], "nvidia", "nvjitlink", "lib", "libnvJitLink.so.12")); err != nil {
		t.Fatal(err)
	}
	dirs := olderToolkit(t, root)
	if w := LibrariesWarning(detect.Host{}, site, dirs); w != "" {
		t.Errorf("warning %q", w)
	}
	c := CheckLibraries(GatherLibraries(detect.Host{}, Libraries{Python: root, Wheels: detect.Host{}.WheelLibs(site), Dirs: dirs}))
	if c.Status != OK || c.Message != "torch 2.5.1 takes its nvidia-cublas-cu12 12.6.4.1 ahead of LD_LIBRARY_PATH (through its RPATH), so CUDA 12.1.1's libcublas.so.12 (12.1.3.1) is not loaded in its place" {
		t.Errorf("doctor: %s %q", c.Status, c.Message)
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
// requires nvJitLink and cuBLAS wheels that the toolkit's older copies
// collide with: the dist-info files and a stat per folder; no warning
// from 2.6 on (torch 2.7 here), one before (2.5).
func BenchmarkLibrariesWarningWithACollisionTorch27(b *testing.B) {
	benchCollision(b, "2.7.0+cu126", false)
}

func BenchmarkLibrariesWarningWithACollisionTorch25(b *testing.B) {
	benchCollision(b, "2.5.1", true)
}

func benchCollision(b *testing.B, torch string, warns bool) {
	root := b.TempDir()
	sites := torchVenv(b, root, torch, true)
	dirs := olderToolkit(b, root)
	h := detect.Host{}
	b.ResetTimer()
	for range b.N {
		if w := LibrariesWarning(h, sites, dirs); (w != "") != warns {
			b.Fatal(w)
		}
	}
}
