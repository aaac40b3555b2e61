package install

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cudaenv/cudaenv/store"
)

// modes is the mode of every regular file under dir, by path.
func modes(t *testing.T, dir string) map[string]fs.FileMode {
	t.Helper()
	out := map[string]fs.FileMode{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			fi, _ := d.Info()
			out[p] = fi.Mode()
		}
		return nil
	})
	return out
}

// The system store owns its files: installing there from a download cache
// the admin's own store shares clones or copies the cache's read-only
// files, never chmods them; the admin's next installs then find the cache
// as they left it, and say nothing.
func TestTheSystemStoreLeavesTheCachesModesAlone(t *testing.T) {
	w, in, notices := warmWorld(t)
	own := installMinimal(t, in)
	cacheModes := modes(t, filepath.Join(w.cache, "unpacked"))
	ownModes := modes(t, own.Dir)
	if len(cacheModes) == 0 {
		t.Fatal("nothing in the cache of unpacked wheels")
	}

	d := w.store.Dirs
	d.System = filepath.Join(t.TempDir(), "opt cudaenv")
	admin, err := store.NewSystem(d)
	if err != nil {
		t.Fatal(err)
	}
	old := syscall.Umask(0o077)
	sys := installMinimal(t, w.installer(t, func(o *Options) { o.Store = admin; o.PyPIIndex = in.opts.PyPIIndex; o.Notice = in.opts.Notice }))
	syscall.Umask(old)

	for p, m := range modes(t, filepath.Join(w.cache, "unpacked")) {
		if cacheModes[p] != m {
			t.Errorf("the cache's %s went from %v to %v", p, cacheModes[p], m)
		}
	}
	for p, m := range modes(t, own.Dir) {
		if ownModes[p] != m {
			t.Errorf("the admin's own %s went from %v to %v", p, ownModes[p], m)
		}
	}
	for rel, fi := range storeFiles(t, sys.Dir) {
		if st := fi.Sys().(*syscall.Stat_t); st.Nlink != 1 || cacheTwin(t, w.cache, fi) != "" {
			t.Errorf("system store %s shares its inode (%d links)", rel, st.Nlink)
		}
		if want := fs.FileMode(0o644); fi.Mode().Perm() != want && fi.Mode().Perm() != 0o755 {
			t.Errorf("system store %s: mode %v", rel, fi.Mode())
		}
	}
	if h := sys.Health(); h.Damage != nil || h.Unchecked != 0 {
		t.Errorf("the system store's entry: %v", h.Problems)
	}
	// The admin's next install into another store: no warning, no unpacking.
	in2, _, _ := w.fresh(t, func(o *Options) { o.CacheDir = w.cache; o.PyPIIndex = in.opts.PyPIIndex; o.Notice = in.opts.Notice })
	installMinimal(t, in2)
	if len(*notices) != 0 {
		t.Errorf("notices: %q", *notices)
	}

	// Another user reads and runs the system store's files, and cannot
	// change them.
	if os.Geteuid() != 0 {
		return
	}
	uid := nobody(t)
	for p := sys.Dir; strings.HasPrefix(p, os.TempDir()+"/"); p = filepath.Dir(p) {
		if fi, err := os.Stat(p); err == nil {
			os.Chmod(p, fi.Mode().Perm()|0o055)
		}
	}
	nvcc := filepath.Join(sys.Dir, "bin", "nvcc")
	as := func(script string) error {
		cmd := exec.Command("sh", "-c", script, "sh", nvcc)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
		return cmd.Run()
	}
	if err := as(`"$1" --version >/dev/null`); err != nil {
		t.Errorf("nobody cannot run the system store's nvcc: %v", err)
	}
	if err := as(`printf x >> "$1"`); err == nil {
		t.Error("nobody wrote to the system store's nvcc")
	}
}
