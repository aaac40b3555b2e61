//go:build linux

package install

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/cudaenv/cudaenv/fetch/pypi/pypitest"
	"github.com/cudaenv/cudaenv/internal/filelist"
	"github.com/cudaenv/cudaenv/store"
)

// warmWorld is a PyPI world whose installer records its notices.
func warmWorld(t *testing.T) (*world, *Installer, *[]string) {
	t.Helper()
	w := newWorld(t)
	ix := pypitest.New(t, pypitest.Releases("13.0.2"))
	var mu sync.Mutex
	var lines []string
	in := w.installer(t, func(o *Options) {
		o.PyPIIndex = ix.URL()
		o.Notice = func(l string) { mu.Lock(); lines = append(lines, l); mu.Unlock() }
	})
	return w, in, &lines
}

func installMinimal(t *testing.T, in *Installer) store.Entry {
	t.Helper()
	res, err := in.Install(context.Background(), Request{Args: []string{"13.0.2"}, Source: "pypi", Profile: "minimal", Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Outcome != Installed {
		t.Fatalf("results = %+v", res)
	}
	return res[0].Entry
}

// storeFiles is every regular file of a store entry but its receipt and
// file list, by path relative to the entry.
func storeFiles(t *testing.T, dir string) map[string]fs.FileInfo {
	t.Helper()
	files := map[string]fs.FileInfo{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		if d.Type().IsRegular() && d.Name() != "receipt.json" && d.Name() != filelist.Name {
			fi, _ := d.Info()
			rel, _ := filepath.Rel(dir, p)
			files[rel] = fi
		}
		return nil
	})
	if len(files) == 0 {
		t.Fatalf("%s holds no files", dir)
	}
	return files
}

// cacheTwin is the file of the cache of unpacked wheels that a store file
// is a link to, or "".
func cacheTwin(t *testing.T, cache string, fi fs.FileInfo) string {
	t.Helper()
	found := ""
	filepath.WalkDir(filepath.Join(cache, "unpacked"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if ci, err := d.Info(); err == nil && os.SameFile(ci, fi) {
				found = p
			}
		}
		return nil
	})
	return found
}

func TestAReinstallLinksTheCachedUnpackedFilesReadOnly(t *testing.T) {
	w, in, notices := warmWorld(t)
	first := installMinimal(t, in)
	nvcc, err := os.ReadFile(filepath.Join(first.Dir, "bin", "nvcc"))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.store.Remove(first); err != nil {
		t.Fatal(err)
	}
	again := installMinimal(t, in)
	for rel, fi := range storeFiles(t, again.Dir) {
		// What cudaenv writes itself (link stubs, version files) is no
		// wheel's file, and read-only all the same.
		generated := strings.HasPrefix(rel, "lib/stubs/") || rel == "version.json" || rel == "version.txt"
		if twin := cacheTwin(t, w.cache, fi); twin == "" && !generated {
			t.Errorf("%s is not a link to the cache of unpacked wheels", rel)
		}
		if fi.Mode().Perm()&0o222 != 0 {
			t.Errorf("%s is %v: writable through the cache", rel, fi.Mode())
		}
	}
	if b, _ := os.ReadFile(filepath.Join(again.Dir, "bin", "nvcc")); string(b) != string(nvcc) {
		t.Error("bin/nvcc differs from the first install's")
	}
	if fi, err := os.Stat(filepath.Join(again.Dir, "bin", "nvcc")); err != nil || fi.Mode().Perm() != 0o555 {
		t.Errorf("bin/nvcc: %v, %v; want r-xr-xr-x", fi, err)
	}
	if got := runNvcc(t, again.Dir); !strings.Contains(got, "13.0") {
		t.Errorf("nvcc --version = %q", got)
	}
	if len(*notices) != 0 {
		t.Errorf("notices: %q", *notices)
	}
	// A second store on the same file system shares the files too.
	in2, _, _ := w.fresh(t, func(o *Options) { o.CacheDir = w.cache; o.PyPIIndex = in.opts.PyPIIndex })
	other := installMinimal(t, in2)
	a, _ := os.Stat(filepath.Join(again.Dir, "bin", "nvcc"))
	b, _ := os.Stat(filepath.Join(other.Dir, "bin", "nvcc"))
	if !os.SameFile(a, b) {
		t.Errorf("a second store got a copy, not a link (%s)", other.Dir)
	}
}

func runNvcc(t *testing.T, dir string) string {
	t.Helper()
	out, err := exec.Command(filepath.Join(dir, "bin", "nvcc"), "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("nvcc --version: %v: %s", err, out)
	}
	return string(out)
}

func TestAReinstallRefusesATamperedCacheEntryAndUnpacksAgain(t *testing.T) {
	cases := []struct {
		name   string
		tamper func(t *testing.T, file string)
		want   string
	}{
		{"a file rewritten at the same size", func(t *testing.T, file string) {
			b, _ := os.ReadFile(file)
			os.Chmod(file, 0o644)
			for i := range b {
				b[i] = '#'
			}
			if err := os.WriteFile(file, b, 0o644); err != nil {
				t.Fatal(err)
			}
			os.Chmod(file, 0o555)
		}, "sha256 mismatch"},
		{"a file made writable", func(t *testing.T, file string) { os.Chmod(file, 0o755) }, "is writable"},
		{"a file replaced by a symlink", func(t *testing.T, file string) {
			os.Remove(file)
			os.Symlink("/etc/passwd", file)
		}, "bin/nvcc"},
		{"a file removed", func(t *testing.T, file string) { os.Remove(file) }, "bin/nvcc"},
		{"the index names a path outside", func(t *testing.T, file string) {
			index := filepath.Join(strings.Split(file, "/tree/")[0], "index.json")
			b, _ := os.ReadFile(index)
			os.Chmod(index, 0o644)
			os.WriteFile(index, []byte(strings.Replace(string(b), `"bin/nvcc"`, `"../../../../evil"`, 1)), 0o444)
			os.Chmod(index, 0o444)
		}, "index.json: bad name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w, in, notices := warmWorld(t)
			first := installMinimal(t, in)
			want, _ := os.ReadFile(filepath.Join(first.Dir, "bin", "nvcc"))
			fi, _ := os.Stat(filepath.Join(first.Dir, "bin", "nvcc"))
			twin := cacheTwin(t, w.cache, fi)
			if twin == "" {
				t.Fatal("the first install's bin/nvcc is not in the cache of unpacked wheels")
			}
			if err := w.store.Remove(first); err != nil {
				t.Fatal(err)
			}
			tc.tamper(t, twin)

			again := installMinimal(t, in)
			if got, _ := os.ReadFile(filepath.Join(again.Dir, "bin", "nvcc")); string(got) != string(want) {
				t.Errorf("bin/nvcc = %q, want the wheel's", got)
			}
			if len(*notices) != 1 || !strings.Contains((*notices)[0], "was changed since it was made") || !strings.Contains((*notices)[0], tc.want) {
				t.Errorf("notices = %q, want one saying %q", *notices, tc.want)
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(filepath.Dir(w.cache)), "evil")); err == nil {
				t.Error("a file was written outside")
			}
			// The refused entry was replaced by a good one, which the next
			// install links without a word.
			*notices = nil
			fi, _ = os.Stat(filepath.Join(again.Dir, "bin", "nvcc"))
			if cacheTwin(t, w.cache, fi) == "" {
				t.Error("bin/nvcc was not unpacked into the cache again")
			}
			if err := w.store.Remove(again); err != nil {
				t.Fatal(err)
			}
			third := installMinimal(t, in)
			fi3, _ := os.Stat(filepath.Join(third.Dir, "bin", "nvcc"))
			if !os.SameFile(fi, fi3) || len(*notices) != 0 {
				t.Errorf("the third install: linked %v, notices %q", os.SameFile(fi, fi3), *notices)
			}
		})
	}
}

// Another user's entry in a shared cache is never linked: the store would
// hold files that user can change.
func TestAnotherUsersCacheEntryIsNeverLinked(t *testing.T) {
	uid := nobody(t)
	w, in, notices := warmWorld(t)
	first := installMinimal(t, in)
	if err := w.store.Remove(first); err != nil {
		t.Fatal(err)
	}
	chownAll(t, filepath.Join(w.cache, "unpacked"), uid)
	os.Chown(filepath.Join(w.cache, "unpacked"), 0, 0) // the folder is ours, an entry is theirs
	again := installMinimal(t, in)
	for rel, fi := range storeFiles(t, again.Dir) {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) == uid {
			t.Errorf("%s belongs to the cache's other user", rel)
		}
	}
	// Theirs, not changed: nothing to warn about, and left in place.
	if len(*notices) != 0 {
		t.Errorf("notices: %q", *notices)
	}
	if des, _ := os.ReadDir(filepath.Join(w.cache, "unpacked")); len(des) == 0 {
		t.Error("the other user's entries were removed")
	}
}

// A store file cannot be changed through the cache, nor a cache file
// through the store: both names are one read-only file, which even its
// owner cannot open for writing (root can, as root can change anything).
func TestAStoreFileCannotBeWrittenThroughTheCache(t *testing.T) {
	w, in, _ := warmWorld(t)
	first := installMinimal(t, in)
	w.store.Remove(first)
	again := installMinimal(t, in)
	store := filepath.Join(again.Dir, "bin", "nvcc")
	fi, _ := os.Stat(store)
	cache := cacheTwin(t, w.cache, fi)
	if cache == "" {
		t.Fatal("bin/nvcc is not linked from the cache")
	}
	for _, name := range []string{cache, store} {
		if os.Geteuid() != 0 {
			if f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0); err == nil {
				f.Close()
				t.Errorf("%s opened for writing", name)
			}
			continue
		}
		// As root, ask as the file's owner would: hand it to nobody and
		// let nobody try; a writable file of theirs proves the check.
		uid := nobody(t)
		os.Chown(name, uid, -1)
		try := func(file string) error {
			cmd := exec.Command("sh", "-c", `printf tampered >> "$1"`, "sh", file)
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
			return cmd.Run()
		}
		if err := try(name); err == nil {
			t.Errorf("%s: its owner wrote to it", name)
		}
		// nobody must reach the folder: the test's folders are root's 0700.
		for d := filepath.Dir(name); strings.HasPrefix(d, os.TempDir()+"/"); d = filepath.Dir(d) {
			if di, err := os.Stat(d); err == nil {
				os.Chmod(d, di.Mode().Perm()|0o011)
			}
		}
		control := filepath.Join(filepath.Dir(name), "control")
		os.WriteFile(control, nil, 0o644)
		os.Chown(control, uid, -1)
		defer os.Remove(control)
		if err := try(control); err != nil {
			t.Skipf("nobody cannot write its own file here either: %v", err)
		}
		os.Chown(name, 0, -1)
	}
	if b, _ := os.ReadFile(store); strings.Contains(string(b), "tampered") {
		t.Error("the store file was changed")
	}
}
