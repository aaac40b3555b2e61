//go:build unix

package cudabin

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestAPipeOrALinkWhereTorchsInitShouldBeIsNotRead(t *testing.T) {
	for _, kind := range []string{"fifo", "link"} {
		site := torchSite(t, torchInit)
		init := filepath.Join(site, "torch", "__init__.py")
		os.Remove(init)
		switch kind {
		case "fifo":
			if err := syscall.Mkfifo(init, 0o644); err != nil {
				t.Skip(err)
			}
		case "link":
			other := filepath.Join(t.TempDir(), "init.py")
			os.WriteFile(other, []byte(torchInit), 0o644)
			os.Symlink(other, init)
		}
		// A pipe opened for reading would wait for a writer forever.
		fws := Frameworks(context.Background(), []string{site}, Options{DefaultDirs: []string{}})
		if len(fws) == 0 || fws[0].Modeled {
			t.Errorf("%s: %+v", kind, fws)
		}
	}
}

// torch/version.py is read through internal/venv's bounded reader: a
// pipe (which would wait for a writer), a link to /dev/zero (which never
// ends) or a __version__ that is no PEP 440 version (a terminal escape)
// gives no version, and the libraries are still read.
func TestAHostileTorchVersionPyGivesNoVersion(t *testing.T) {
	for _, kind := range []string{"fifo", "zero", "escape"} {
		site := torchSite(t, torchInit)
		vp := filepath.Join(site, "torch", "version.py")
		os.Remove(vp)
		switch kind {
		case "fifo":
			if err := syscall.Mkfifo(vp, 0o644); err != nil {
				t.Skip(err)
			}
		case "zero":
			os.Symlink("/dev/zero", vp)
		case "escape":
			os.WriteFile(vp, []byte("__version__ = '2.15.0\x1b]0;owned\x07'\ncuda = '12.4'\n"), 0o644)
		}
		fws := Frameworks(context.Background(), []string{site}, Options{DefaultDirs: []string{}})
		if len(fws) == 0 || fws[0].Name != "torch" || fws[0].Version != "" || fws[0].Kernels == nil || !fws[0].Modeled {
			t.Errorf("%s: %+v", kind, fws)
		}
	}
}
