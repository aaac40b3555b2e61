package envpins

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var linux312 = Target{Platform: "linux-x86_64", Python: "3.12"}

// What uv itself installs on Linux x86_64 with CPython 3.12 for these
// projects: its requirements export, markers evaluated by packaging.
var (
	torch290  = []string{"nvidia-cublas-cu12==12.8.4.1", "nvidia-cuda-cupti-cu12==12.8.90", "nvidia-cuda-nvrtc-cu12==12.8.93", "nvidia-cuda-runtime-cu12==12.8.90", "nvidia-cudnn-cu12==9.10.2.21", "nvidia-cufft-cu12==11.3.3.83", "nvidia-cufile-cu12==1.13.1.3", "nvidia-curand-cu12==10.3.9.90", "nvidia-cusolver-cu12==11.7.3.90", "nvidia-cusparse-cu12==12.5.8.93", "nvidia-cusparselt-cu12==0.7.1", "nvidia-nccl-cu12==2.27.5", "nvidia-nvjitlink-cu12==12.8.93", "nvidia-nvshmem-cu12==3.3.20", "nvidia-nvtx-cu12==12.8.90"}
	torch2150 = []string{"nvidia-cublas==13.4.1.3", "nvidia-cuda-cccl==13.3.5.0.6", "nvidia-cuda-cupti==13.2.86", "nvidia-cuda-nvrtc==13.2.86", "nvidia-cuda-runtime==13.2.86", "nvidia-cudnn-cu13==9.26.0.51", "nvidia-cufft==12.2.0.57", "nvidia-cufile==1.17.1.22", "nvidia-cusolver==12.2.0.11", "nvidia-cusparse==12.7.10.12", "nvidia-cusparselt-cu13==0.8.1", "nvidia-nccl-cu13==2.30.7", "nvidia-nvjitlink==13.5.37", "nvidia-nvshmem-cu13==3.7.2", "nvidia-nvtx==13.2.86"}
)

func TestLocksGiveTheVersionsUvInstalls(t *testing.T) {
	for _, tt := range []struct {
		dir       string
		want      []string
		framework string
	}{
		{"torch-2.9.0", torch290, "torch 2.9.0"},
		// torch 2.15 pins its CUDA wheels through cuda-toolkit's extras,
		// which a walk of the lock follows.
		{"torch-2.15.0", torch2150, "torch 2.15.0"},
	} {
		for _, file := range []string{"uv.lock", "pylock.toml", "requirements.txt"} {
			t.Run(tt.dir+"/"+file, func(t *testing.T) {
				p, err := Read(context.Background(), filepath.Join("testdata", tt.dir, file), linux312)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(p.Requirements, tt.want) {
					t.Errorf("requirements\n got %q\nwant %q", p.Requirements, tt.want)
				}
				if !slices.Contains(p.Frameworks, tt.framework) || p.Python != "3.12" || p.Kind != file {
					t.Errorf("frameworks %q, python %q, kind %q", p.Frameworks, p.Python, p.Kind)
				}
			})
		}
	}
}

func TestLocksEvaluateMarkersForTheTarget(t *testing.T) {
	// torch 2.9.0 pins its CUDA wheels on Linux x86_64 only.
	for _, target := range []Target{{"linux-sbsa", "3.12"}, {"windows-x86_64", "3.12"}} {
		for _, file := range []string{"uv.lock", "pylock.toml", "requirements.txt"} {
			_, err := Read(context.Background(), filepath.Join("testdata", "torch-2.9.0", file), target)
			if err == nil || !strings.Contains(err.Error(), "names no NVIDIA CUDA wheel for "+target.Platform+" and Python 3.12") {
				t.Errorf("%s on %s: err = %v", file, target.Platform, err)
			}
		}
	}
	// torch 2.15.0's pins hold on aarch64 too.
	p, err := Read(context.Background(), filepath.Join("testdata", "torch-2.15.0", "uv.lock"), Target{"linux-sbsa", "3.12"})
	if err != nil || !slices.Equal(p.Requirements, torch2150) {
		t.Errorf("2.15.0 on linux-sbsa: %q, %v", p.Requirements, err)
	}
	// A bad target is refused before anything is read.
	if _, err := Read(context.Background(), filepath.Join("testdata", "torch-2.9.0", "uv.lock"), Target{"linux-x86_64", "three"}); err == nil {
		t.Error("a Python version that is not one was accepted")
	}
}

func TestAFolderMeansItsEnvironmentOrItsLock(t *testing.T) {
	// A project folder without a venv: its pylock.toml.
	p, err := Read(context.Background(), filepath.Join("testdata", "torch-2.9.0"), linux312)
	if err != nil || p.Kind != KindPylock || !slices.Equal(p.Requirements, torch290) {
		t.Fatalf("%+v, %v", p, err)
	}
	empty := t.TempDir()
	if _, err := Read(context.Background(), empty, linux312); err == nil || !strings.Contains(err.Error(), "is neither a virtual environment or conda prefix") {
		t.Errorf("err = %v", err)
	}
	if _, err := Read(context.Background(), filepath.Join(empty, "missing"), linux312); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("err = %v", err)
	}
	odd := filepath.Join(empty, "Pipfile.lock")
	os.WriteFile(odd, []byte("{}"), 0o644)
	if _, err := Read(context.Background(), odd, linux312); err == nil || !strings.Contains(err.Error(), "cudaenv reads a venv or conda prefix, a uv.lock, a pylock.toml") {
		t.Errorf("err = %v", err)
	}
}

// venvWith makes a virtual environment (or, with conda, a conda prefix)
// holding the dist-infos given as name-version, with python's site-packages.
func venvWith(t *testing.T, kind, python string, dists ...string) string {
	t.Helper()
	prefix := filepath.Join(t.TempDir(), `my "venv" $x`)
	site := filepath.Join(prefix, "lib", "python"+python, "site-packages")
	must(t, os.MkdirAll(site, 0o755))
	switch kind {
	case KindVenv:
		must(t, os.WriteFile(filepath.Join(prefix, "pyvenv.cfg"), []byte("home = /usr/bin\n"), 0o644))
	case KindConda:
		must(t, os.MkdirAll(filepath.Join(prefix, "conda-meta"), 0o755))
	}
	for _, d := range dists {
		name, version, _ := strings.Cut(d, "==")
		distInfo(t, site, name, version)
	}
	return prefix
}

func distInfo(t *testing.T, site, name, version string) string {
	t.Helper()
	dir := filepath.Join(site, strings.ReplaceAll(name, "-", "_")+"-"+version+".dist-info")
	must(t, os.MkdirAll(dir, 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "METADATA"), []byte(fmt.Sprintf("Metadata-Version: 2.1\nName: %s\nVersion: %s\n\n", name, version)), 0o644))
	return dir
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestAVenvGivesTheVersionsInstalledThere(t *testing.T) {
	for _, kind := range []string{KindVenv, KindConda, KindSitePackages} {
		t.Run(kind, func(t *testing.T) {
			prefix := venvWith(t, kind, "3.11", "torch==2.9.0", "nvidia-cublas-cu12==12.8.4.1", "nvidia-cudnn-cu12==9.10.2.21",
				"cutensor-cu12==2.3.1", "numpy==2.3.0", "nvidia-ml-py==13.580.65")
			// The target's Python does not matter: the venv's own is 3.11.
			p, err := Read(context.Background(), prefix, linux312)
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"cutensor-cu12==2.3.1", "nvidia-cublas-cu12==12.8.4.1", "nvidia-cudnn-cu12==9.10.2.21"}
			if !slices.Equal(p.Requirements, want) || p.Kind != kind || p.Python != "3.11" || !slices.Equal(p.Frameworks, []string{"torch 2.9.0"}) {
				t.Errorf("%+v", p)
			}
			// NVML's Python bindings are not a CUDA library: passed over, said.
			if len(p.Passed) != 1 || !strings.HasPrefix(p.Passed[0], "nvidia-ml-py 13.580.65: not a CUDA library wheel") {
				t.Errorf("passed %q", p.Passed)
			}
		})
	}
	// A venv without NVIDIA's wheels (a CPU torch) is an error that says so.
	cpu := venvWith(t, KindVenv, "3.12", "torch==2.9.0+cpu")
	if _, err := Read(context.Background(), cpu, linux312); err == nil || !strings.Contains(err.Error(), "has no NVIDIA CUDA wheels installed") {
		t.Errorf("err = %v", err)
	}
}

// --for .venv, as a user types it in the project: a path relative to the
// working folder is that environment (site-packages were looked for only
// under an absolute prefix, so a relative one was "no environment").
func TestARelativePathIsTheEnvironmentHere(t *testing.T) {
	prefix := venvWith(t, KindVenv, "3.11", "nvidia-cublas-cu12==12.8.4.1")
	t.Chdir(filepath.Dir(prefix))
	for _, rel := range []string{filepath.Base(prefix), "./" + filepath.Base(prefix)} {
		p, err := Read(context.Background(), rel, linux312)
		if err != nil {
			t.Fatalf("Read(%q): %v", rel, err)
		}
		if !slices.Equal(p.Requirements, []string{"nvidia-cublas-cu12==12.8.4.1"}) || p.Kind != KindVenv || p.Python != "3.11" {
			t.Errorf("Read(%q) = %+v", rel, p)
		}
	}
}

func TestALabelSaysTheKindOnce(t *testing.T) {
	for _, c := range [][3]string{
		{KindUVLock, "lock/uv.lock", "lock/uv.lock"},
		{KindPylock, "pylock.toml", "pylock.toml"},
		{KindRequirements, "requirements.txt", "requirements.txt"},
		{KindRequirements, "reqs/gpu.txt", "requirements.txt reqs/gpu.txt"},
		{KindVenv, "/p/.venv", "venv /p/.venv"},
	} {
		if got := Label(c[0], c[1]); got != c[2] {
			t.Errorf("Label(%q, %q) = %q, want %q", c[0], c[1], got, c[2])
		}
	}
}

func TestIsPath(t *testing.T) {
	for arg, want := range map[string]bool{
		"torch==2.5.1": false, "jax[cuda13]>=0.9": false, "torch": false, "nvidia-cublas==13.1.1.3": false,
		"pkg @ https://example.com/x.whl": false,
		".venv/":                          true, "./.venv": true, ".": true, "..": true, "/opt/env": true, "uv.lock": true,
		".venv": true, ".conda": true, "~/envs/gpu": true,
		"pylock.toml": true, "requirements.txt": true, "reqs/gpu.txt": true,
	} {
		if got := IsPath(arg); got != want {
			t.Errorf("IsPath(%q) = %v, want %v", arg, got, want)
		}
	}
}
