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
