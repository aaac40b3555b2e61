//go:build unix

package install

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cudaenv/cudaenv/store"
)

// An admin installs into the system store (readable by all, whatever the
// umask); a user then has that version without a download, is told where
// it is, and gets a private copy in front of it only when asking for one.
func TestAUserInstallOfASystemStoreVersion(t *testing.T) {
	w := newWorld(t)
	d := w.store.Dirs
	d.System = filepath.Join(t.TempDir(), "opt cudaenv")
	admin, err := store.NewSystem(d)
	if err != nil {
		t.Fatal(err)
	}
	old := syscall.Umask(0o077)
	res, err := w.installer(t, func(o *Options) { o.Store = admin }).Install(context.Background(), Request{Args: []string{"12.4"}, Profile: "minimal"})
	syscall.Umask(old)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Entry.Dir != filepath.Join(d.System, "cuda", "12.4.1") {
		t.Fatalf("installed into %s", res[0].Entry.Dir)
	}
	filepath.WalkDir(res[0].Entry.Dir, func(p string, de fs.DirEntry, err error) error {
		if fi, err := os.Lstat(p); err == nil && fi.Mode().Type() != fs.ModeSymlink && fi.Mode().Perm()&0o444 != 0o444 {
			t.Errorf("%s: mode %v, not readable by all", p, fi.Mode())
		}
		return nil
	})

	user := store.New(d)
	in := w.installer(t, func(o *Options) { o.Store = user })
	w.mirror.ResetCounts()
	res, err = in.Install(context.Background(), Request{Args: []string{"12.4"}, Profile: "minimal"})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Outcome != AlreadyInstalled || !res[0].Entry.System {
		t.Errorf("result = %+v, want the system store's entry", res[0])
	}
	if n := w.mirror.ArchiveRequests("cuda_nvcc"); n != 0 {
		t.Errorf("nvcc downloaded %d times", n)
	}

	_, err = in.Install(context.Background(), Request{Args: []string{"12.4"}, Components: []string{"libcublas"}})
	if err == nil || !strings.Contains(err.Error(), "lacks libcublas; ask its admin") {
		t.Errorf("err = %v", err)
	}
	if _, ok := user.GetOwn(store.CUDA, "12.4.1"); ok {
		t.Fatal("a user copy appeared")
	}

	res, err = in.Install(context.Background(), Request{Args: []string{"12.4"}, Profile: "minimal", Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if e := res[0].Entry; e.System || !e.Shadows || e.Dir != filepath.Join(d.Root, "cuda", "12.4.1") {
		t.Errorf("forced: %+v, want the user's copy in front", e)
	}
}
