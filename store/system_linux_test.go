//go:build linux

package store

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// snapshot records every file under root: name, type, mode, size, mtime
// and ctime (a chmod or a rewrite with the same bytes changes ctime).
func snapshot(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		st := fi.Sys().(*syscall.Stat_t)
		fmt.Fprintf(&b, "%s %v %d %d %d.%d\n", p, fi.Mode(), fi.Size(), fi.ModTime().UnixNano(), st.Ctim.Sec, st.Ctim.Nsec)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestNothingAUserDoesWritesToTheSystemStore(t *testing.T) {
	user, admin := layered(t)
	install(t, admin, CUDA, "12.4.1")
	install(t, admin, Cudnn, "9.5.1.17-cuda12")
	target := filepath.Join(t.TempDir(), "cuda-11.8")
	fakeToolkit(t, target, "11.8.0")
	if _, err := admin.Link(target, 0); err != nil {
		t.Fatal(err)
	}
	// Leftovers of an admin's interrupted install: a user's cleanup must
	// leave them for the admin.
	os.MkdirAll(filepath.Join(admin.Dirs.CUDA(), ".stage-12.6.3-1"), 0o755)
	before := snapshot(t, admin.Dirs.Root)

	for _, k := range []Kind{CUDA, Cudnn} {
		if _, err := user.List(k); err != nil {
			t.Fatal(err)
		}
	}
	user.Get(CUDA, "12.4.1")
	user.Get(CUDA, "11.8.0")
	install(t, user, CUDA, "12.4.1")
	install(t, user, CUDA, "12.4.1") // a reinstall: aside, trash
	unlock, err := user.Lock(CUDA, "11.8.0")
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	user.CleanStaging()
	e, _ := user.Get(CUDA, "12.4.1")
	if err := user.Remove(e); err != nil {
		t.Fatal(err)
	}
	e, _ = user.Get(CUDA, "12.4.1")
	if !e.System {
		t.Fatalf("after the user's copy went, Get = %+v", e)
	}
	user.Remove(e) // refused

	if after := snapshot(t, admin.Dirs.Root); after != before {
		t.Errorf("the system store changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

func TestSystemInstallsAreReadableByAllWhateverTheUmask(t *testing.T) {
	_, admin := layered(t)
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	unlock, err := admin.Lock(CUDA, "12.4.1") // as installs do: it makes the root
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	e, err := admin.Install(CUDA, "12.4.1", func(stage string) (Receipt, error) {
		for _, f := range []struct {
			name string
			mode fs.FileMode
		}{
			{"bin/nvcc", 0o700},
			{"bin/setuid-tool", 0o4775},
			{"include/cuda.h", 0o600},
			{"lib64/libcudart.so.12", 0o666},
		} {
			p := filepath.Join(stage, f.name)
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
				return Receipt{}, err
			}
			if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
				return Receipt{}, err
			}
			if err := os.Chmod(p, f.mode); err != nil {
				return Receipt{}, err
			}
		}
		return Receipt{Source: "nvidia"}, os.Symlink("libcudart.so.12", filepath.Join(stage, "lib64", "libcudart.so"))
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]fs.FileMode{
		".":                     fs.ModeDir | 0o755,
		"bin":                   fs.ModeDir | 0o755,
		"bin/nvcc":              0o755,
		"bin/setuid-tool":       0o755,
		"include/cuda.h":        0o644,
		"lib64/libcudart.so.12": 0o644,
		ReceiptName:             0o644,
	}
	for name, mode := range want {
		fi, err := os.Lstat(filepath.Join(e.Dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != mode {
			t.Errorf("%s: mode %v, want %v", name, fi.Mode(), mode)
		}
	}
	for _, d := range []string{admin.Dirs.Root, admin.Dirs.CUDA()} {
		if fi, _ := os.Stat(d); fi.Mode().Perm() != 0o755 {
			t.Errorf("%s: mode %v, want 0755", d, fi.Mode().Perm())
		}
	}
	if fi, _ := os.Lstat(filepath.Join(e.Dir, "lib64", "libcudart.so")); fi.Mode()&fs.ModeSymlink == 0 {
		t.Error("the link was replaced")
	}
}
