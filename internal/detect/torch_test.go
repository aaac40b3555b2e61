package detect

import (
	"context"
	"errors"
	"testing"
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

func TestParseTorchVersionPy(t *testing.T) {
	tests := []struct{ name, src, version, cuda string }{
		{"the annotated form of torch 2.x", versionPyNew, "2.5.1+cu124", "12.4"},
		{"the plain form of older releases", versionPyOld, "1.13.1+cu117", "11.7"},
		{"a CPU-only build has no CUDA", versionPyCPU, "2.5.1+cpu", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, c, err := ParseTorchVersionPy([]byte(tt.src))
			if err != nil || v != tt.version || c != tt.cuda {
				t.Errorf("ParseTorchVersionPy = %q, %q, %v", v, c, err)
			}
		})
	}
	if _, _, err := ParseTorchVersionPy([]byte("x = 1\n")); err == nil {
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
		if got != want {
			t.Errorf("Torch() = %+v, want %+v", got, want)
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
