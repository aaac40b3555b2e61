package detect

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/cudaenv/cudaenv/internal/venv"
)

const (
	versionPyNew = `from typing import Optional

__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip']
__version__ = '2.5.1+cu124'
debug = False
cuda: Optional[str] = '12.4'
git_version = 'a8d6afb511a69687bbb2b7e88a3cf67917e1697e'
hip: Optional[str] = None
`
	versionPyOld = "__version__ = '1.13.1+cu117'\ndebug = False\ncuda = '11.7'\ngit_version = '49444c3e546bf240bed24a101e747422d1f8a0ee'\nhip = None\n"
	versionPyCPU = "__version__ = '2.5.1+cpu'\ndebug = False\ncuda: Optional[str] = None\n"
)

func TestParseTorchVersionPyOfRealReleases(t *testing.T) {
	tests := []struct{ name, src, version, cuda string }{
		{"the annotated form of torch 2.x", versionPyNew, "2.5.1+cu124", "12.4"},
		{"the plain form of older releases", versionPyOld, "1.13.1+cu117", "11.7"},
		{"a CPU-only build has no CUDA", versionPyCPU, "2.5.1+cpu", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, c, err := venv.ParseTorchVersionPy([]byte(tt.src))
			if err != nil || v != tt.version || c != tt.cuda {
				t.Errorf("ParseTorchVersionPy = %q, %q, %v", v, c, err)
			}
		})
	}
	if _, _, err := venv.ParseTorchVersionPy([]byte("x = 1\n")); err == nil {
		t.Error("want an error for a file without __version__")
	}
}

func TestTorch(t *testing.T) {
	sysPath := "/usr/bin/python3 -c " + sysPathScript
	files := map[string]string{
		"usr/bin/python3*": "",
		"home/u/.venv/lib/python3.11/site-packages/torch/version.py": versionPyNew,
		"usr/lib/python3/dist-packages/torch/version.py":             versionPyOld,
	}
	t.Run("the first torch on sys.path is the one Python imports", func(t *testing.T) {
		f := &fakeRunner{answers: map[string]result{sysPath: {out: "\n/usr/lib/python311.zip\n/home/u/.venv/lib/python3.11/site-packages\n/usr/lib/python3/dist-packages\n"}}}
		h := Host{Root: fakeRoot(t, files), Env: map[string]string{"PATH": "/usr/bin"}, Run: f.run}
		got, found, err := h.Torch(context.Background())
		if err != nil || !found {
			t.Fatalf("Torch() = %+v, %v, %v", got, found, err)
		}
		want := Torch{Version: "2.5.1+cu124", CUDA: "12.4", Path: "/home/u/.venv/lib/python3.11/site-packages/torch/version.py", Python: "/usr/bin/python3"}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Torch() = %+v, want %+v", got, want)
		}
	})
	t.Run("the Python's version and the CUDA pins of torch's METADATA are read, hostile lines left out", func(t *testing.T) {
		site := "/home/u/.venv/lib/python3.12/site-packages"
		files := map[string]string{
			"usr/bin/python3*":                        "",
			site + "/torch/version.py":                "__version__ = '2.15.0+cu132'\ncuda: Optional[str] = '13.2'\n",
			site + "/torch-2.14.0.dist-info/METADATA": "Name: torch\nVersion: 2.14.0\nRequires-Dist: nvidia-cudnn-cu13==9.1.0.1\n",
			site + "/torch-2.15.0+cu132.dist-info/METADATA": "Metadata-Version: 2.1\nName: torch\nVersion: 2.15.0+cu132\nRequires-Dist: filelock\n" +
				"Requires-Dist: cuda-toolkit[cublas,cudart]==13.2.2; platform_system == \"Linux\"\n" +
				"Requires-Dist: nvidia-cudnn-cu13==9.26.0.51; platform_system == \"Linux\"\n" +
				"Requires-Dist: nvidia-evil-cu13==1.0\x1b]0;owned\x07\n" +
				"Requires-Dist: nvidia-nccl-cu13 (==2.30.1)\n\nRequires-Dist: nvidia-after-the-body==1\n",
		}
		f := &fakeRunner{answers: map[string]result{sysPath: {out: site + "\n#python 3.12\n"}}}
		h := Host{Root: fakeRoot(t, files), Env: map[string]string{"PATH": "/usr/bin"}, Run: f.run}
		got, found, err := h.Torch(context.Background())
		if err != nil || !found {
			t.Fatalf("Torch() = %+v, %v, %v", got, found, err)
		}
		want := []string{"cuda-toolkit[cublas,cudart]==13.2.2", "nvidia-cudnn-cu13==9.26.0.51", "nvidia-nccl-cu13 (==2.30.1)"}
		if got.PythonVersion != "3.12" || !reflect.DeepEqual(got.CUDAPins, want) {
			t.Errorf("PythonVersion = %q, CUDAPins = %q, want %q", got.PythonVersion, got.CUDAPins, want)
		}
	})
	t.Run("a Python without torch finds none", func(t *testing.T) {
		f := &fakeRunner{answers: map[string]result{sysPath: {out: "/usr/lib/python311.zip\n"}}}
		h := Host{Root: fakeRoot(t, files), Env: map[string]string{"PATH": "/usr/bin"}, Run: f.run}
		if _, found, err := h.Torch(context.Background()); found || err != nil {
			t.Errorf("found = %v, err = %v", found, err)
		}
	})
	t.Run("no Python on PATH is an error callers can recognize", func(t *testing.T) {
		h := Host{Root: t.TempDir(), Env: map[string]string{"PATH": "/usr/bin"}}
		if _, _, err := h.Torch(context.Background()); !errors.Is(err, ErrNoPython) {
			t.Errorf("err = %v", err)
		}
	})
}
