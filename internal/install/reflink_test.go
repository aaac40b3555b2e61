//go:build linux

package install

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/cudaenv/cudaenv/fetch/pypi/pypitest"
	"github.com/cudaenv/cudaenv/internal/dirs"
	"github.com/cudaenv/cudaenv/store"
	"golang.org/x/sys/unix"
)

// reflinkDir is a folder on a file system that clones files (FICLONE):
// the test's own temporary folder where it can, else, as root with
// mkfs.btrfs at hand, a small btrfs image mounted for the test.
func reflinkDir(t *testing.T) string {
	t.Helper()
	if dir := t.TempDir(); canClone(dir) {
		return dir
	}
	mkfs, err := exec.LookPath("mkfs.btrfs")
	if os.Geteuid() != 0 || err != nil {
		t.Skip("no file system with reflinks: the temporary folder's cannot clone, and mounting a btrfs image needs root and mkfs.btrfs")
	}
	img := filepath.Join(t.TempDir(), "btrfs.img")
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, 256<<20); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(mkfs, "-q", img).CombinedOutput(); err != nil {
		t.Skipf("mkfs.btrfs: %v: %s", err, out)
	}
	mnt := filepath.Join(t.TempDir(), "btrfs")
	os.MkdirAll(mnt, 0o755)
	if out, err := exec.Command("mount", "-o", "loop", img, mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a btrfs image here: %v: %s", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() { exec.Command("umount", mnt).Run() })
	if !canClone(mnt) {
		t.Skip("the btrfs image mounted cannot clone")
	}
	return mnt
}

func canClone(dir string) bool {
	a, err := os.CreateTemp(dir, "probe")
	if err != nil {
		return false
	}
	defer os.Remove(a.Name())
	defer a.Close()
	a.WriteString("x")
	b, err := os.CreateTemp(dir, "probe")
	if err != nil {
		return false
	}
	defer os.Remove(b.Name())
	defer b.Close()
	return unix.IoctlFileClone(int(b.Fd()), int(a.Fd())) == nil
}

// Where the file system clones files, a store gets clones of the cache's
// unpacked files: the same blocks, but files of its own, so a write
// through one store's name changes no other store and not the cache.
func TestAReinstallClonesWhereTheFileSystemCan(t *testing.T) {
	base := reflinkDir(t)
	w := newWorld(t)
	cache := filepath.Join(base, "cache")
	ix := pypitest.New(t, pypitest.Releases("13.0.2")).URL()
	var mu sync.Mutex
	var notices []string
	mk := func(name string) (*Installer, *store.Store) {
		st := store.New(dirs.Dirs{Root: filepath.Join(base, name), Cache: cache})
		return w.installer(t, func(o *Options) {
			o.Store, o.CacheDir, o.PyPIIndex = st, cache, ix
			o.Notice = func(l string) { mu.Lock(); notices = append(notices, l); mu.Unlock() }
		}), st
	}
	inA, _ := mk("store A")
	inB, _ := mk("store B")
	a := installMinimal(t, inA)
	b := installMinimal(t, inB)
	nvccA, nvccB := filepath.Join(a.Dir, "bin", "nvcc"), filepath.Join(b.Dir, "bin", "nvcc")
	fa, _ := os.Stat(nvccA)
	fb, _ := os.Stat(nvccB)
	if os.SameFile(fa, fb) || cacheTwin(t, cache, fb) != "" {
		t.Fatal("store B's nvcc is a hard link, not a clone")
	}
	if st := fb.Sys().(*syscall.Stat_t); st.Nlink != 1 || fb.Mode().Perm() != 0o555 {
		t.Errorf("store B's nvcc: %d links, mode %v", st.Nlink, fb.Mode())
	}
	want, _ := os.ReadFile(nvccA)
	if got, _ := os.ReadFile(nvccB); string(got) != string(want) {
		t.Fatal("the clone's content differs")
	}
	os.Chmod(nvccA, 0o755)
	if err := os.WriteFile(nvccA, []byte("#!/bin/sh\necho tampered\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(nvccB); string(got) != string(want) {
		t.Error("a write through store A changed store B's clone")
	}
	got, _ := store.New(dirs.Dirs{Root: filepath.Join(base, "store B"), Cache: cache}).Get(store.CUDA, b.Name)
	if h := got.Health(); h.Damage != nil || h.Unchecked != 0 {
		t.Errorf("store B: %v", h.Problems)
	}
	inC, _ := mk("store C")
	installMinimal(t, inC)
	if len(notices) != 0 {
		t.Errorf("notices: %q (the cache was changed through a clone)", notices)
	}
}
