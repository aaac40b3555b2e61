//go:build linux

package install

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cudaenv/cudaenv/fetch/pypi/pypitest"
	"github.com/cudaenv/cudaenv/internal/dirs"
	"github.com/cudaenv/cudaenv/store"
)

// sharedWorld is a PyPI world with CUDA 12.6.2 and 12.6.3, which share
// cudart's wheel (12.6.77), and an installer per store, all sharing one
// download cache.
type sharedWorld struct {
	w       *world
	index   string
	mu      sync.Mutex
	notices []string
}

func newSharedWorld(t *testing.T) *sharedWorld {
	t.Helper()
	sw := &sharedWorld{w: newWorld(t)}
	sw.index = pypitest.New(t, pypitest.Releases("12.6.2", "12.6.3")).URL()
	return sw
}

// store is an installer for a store folder of its own (name), sharing
// the world's download cache.
func (sw *sharedWorld) store(t *testing.T, name string) (*Installer, *store.Store) {
	t.Helper()
	st := store.New(dirs.Dirs{Root: filepath.Join(t.TempDir(), name), Cache: sw.w.cache})
	in := sw.w.installer(t, func(o *Options) {
		o.Store, o.PyPIIndex = st, sw.index
		o.Notice = func(l string) { sw.mu.Lock(); sw.notices = append(sw.notices, l); sw.mu.Unlock() }
	})
	return in, st
}

func installPyPI(t *testing.T, in *Installer, args ...string) []Result {
	t.Helper()
	res, err := in.Install(context.Background(), Request{Args: args, Source: "pypi", Components: []string{"cuda_cudart", "cuda_nvcc"}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// sharedFile is a file of a's tree that b's tree holds too (one inode).
func sharedFile(t *testing.T, a, b store.Entry) string {
	t.Helper()
	var found string
	filepath.WalkDir(a.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || found != "" {
			return nil
		}
		rel, _ := filepath.Rel(a.Dir, p)
		fa, _ := os.Stat(p)
		if fb, err := os.Stat(filepath.Join(b.Dir, rel)); err == nil && os.SameFile(fa, fb) {
			found = rel
		}
		return nil
	})
	if found == "" {
		t.Fatalf("%s and %s share no file", a.Dir, b.Dir)
	}
	return found
}

func healthy(t *testing.T, e store.Entry, cache string) {
	t.Helper()
	again, ok := reload(e, cache)
	if !ok {
		t.Fatalf("%s is gone", e.Dir)
	}
	if h := again.Health(); h.Damage != nil || h.Unchecked != 0 {
		t.Errorf("%s: damage %v, %d unchecked: %v", e.Dir, h.Damage, h.Unchecked, h.Problems)
	}
}

// reload reads an entry again from its store folder, with the download
// cache whose ledger vouches for its shared files.
func reload(e store.Entry, cache string) (store.Entry, bool) {
	root := filepath.Dir(filepath.Dir(e.Dir))
	return store.New(dirs.Dirs{Root: root, Cache: cache}).Get(e.Kind, e.Name)
}

// A file written through one store's name is the same file in every store
// and release that links it: each of them finds the change, naming the
// others, and the cache's copy is refused once and unpacked again.
func TestAWriteThroughOneStoreIsFoundFromAnotherStoreAndRelease(t *testing.T) {
	sw := newSharedWorld(t)
	cache := sw.w.cache
	inA, _ := sw.store(t, "store A")
	inB, _ := sw.store(t, "store B")
	a2 := installPyPI(t, inA, "12.6.2")[0].Entry
	a3 := installPyPI(t, inA, "12.6.3")[0].Entry
	b2 := installPyPI(t, inB, "12.6.2")[0].Entry
	// Linking the same files into other trees changed their ctime; the
	// ledger vouches for those changes, which were cudaenv's.
	for _, e := range []store.Entry{a2, a3, b2} {
		healthy(t, e, cache)
	}
	// So does removing one of the names.
	inC, stC := sw.store(t, "store C")
	c2 := installPyPI(t, inC, "12.6.2")[0].Entry
	if err := stC.Remove(c2); err != nil {
		t.Fatal(err)
	}
	for _, e := range []store.Entry{a2, a3, b2} {
		healthy(t, e, cache)
	}
	if len(sw.notices) != 0 {
		t.Fatalf("notices: %q", sw.notices)
	}

	rel := sharedFile(t, a3, a2)
	sharedFile(t, b2, a2)
	p := filepath.Join(a2.Dir, rel)
	os.Chmod(p, 0o644)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("tampered")
	f.Close()
	os.Chmod(p, 0o444)

	for _, tc := range []struct {
		e      store.Entry
		others []string
	}{
		{a3, []string{"CUDA 12.6.2", "CUDA 12.6.2 in " + filepath.Dir(filepath.Dir(b2.Dir))}},
		{b2, []string{"CUDA 12.6.2 in " + filepath.Dir(filepath.Dir(a2.Dir)), "CUDA 12.6.3 in " + filepath.Dir(filepath.Dir(a2.Dir))}},
	} {
		e, _ := reload(tc.e, cache)
		h := e.Health()
		if h.Damage == nil || !strings.Contains(h.Damage.Error(), rel+" size ") {
			t.Errorf("%s: damage = %v, want %s resized", e.Dir, h.Damage, rel)
			continue
		}
		for _, o := range tc.others {
			if !slices.Contains(h.Others, o) {
				t.Errorf("%s: others = %q, want %q among them", e.Dir, h.Others, o)
			}
		}
	}
	_, err = inB.Install(context.Background(), Request{Args: []string{"12.6.2"}, Source: "pypi", Components: []string{"cuda_cudart", "cuda_nvcc"}})
	if err == nil || !strings.Contains(err.Error(), "is damaged ("+rel+" size") {
		t.Errorf("install in store B: %v", err)
	}

	// A store of its own gets the wheel unpacked again: one line says so.
	inD, _ := sw.store(t, "store D")
	d2 := installPyPI(t, inD, "12.6.2")[0].Entry
	if len(sw.notices) != 1 || !strings.Contains(sw.notices[0], "was changed since it was made") {
		t.Errorf("notices = %q, want one", sw.notices)
	}
	healthy(t, d2, cache)
	if b, _ := os.ReadFile(filepath.Join(d2.Dir, rel)); strings.Contains(string(b), "tampered") {
		t.Error("store D got the tampered file")
	}
	inE, _ := sw.store(t, "store E")
	installPyPI(t, inE, "12.6.2")
	if len(sw.notices) != 1 {
		t.Errorf("the next install said more: %q", sw.notices)
	}
	// --force in store B repairs it.
	res, err := inB.Install(context.Background(), Request{Args: []string{"12.6.2"}, Source: "pypi", Components: []string{"cuda_cudart", "cuda_nvcc"}, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	healthy(t, res[0].Entry, cache)
}

// Deleting lib/ from a PyPI CUDA 12 install, cuDNN or NCCL is damage that
// list, doctor and install see: not only the few key files are checked.
func TestADeletedLibFolderIsDamageForEveryProduct(t *testing.T) {
	w := newWorld(t)
	ix := pypitest.New(t, pypitest.Releases("12.6.3"), pypitest.ExtraLibrary("nccl", "2.26.2", 12))
	in := w.installer(t, func(o *Options) { o.PyPIIndex = ix.URL() })
	res, err := in.Install(context.Background(), Request{Args: []string{"12.6.3", "cudnn@9", "nccl@2.26"}, Source: "pypi", Components: []string{"cuda_cudart"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 3 {
		t.Fatalf("results: %+v", res)
	}
	for _, r := range res {
		e := r.Entry
		if e.Receipt.FileList == "" || e.Receipt.Files == 0 {
			t.Fatalf("%s: no file list in the receipt", e.Dir)
		}
		if err := os.RemoveAll(filepath.Join(e.Dir, "lib")); err != nil {
			t.Fatal(err)
		}
		got, _ := w.store.Get(e.Kind, e.Name)
		if err := got.Damage(); err == nil || !strings.HasPrefix(err.Error(), "lib/ deleted") {
			t.Errorf("%s: damage = %v", r.Label, err)
		}
	}
	_, err = in.Install(context.Background(), Request{Args: []string{"12.6.3"}, Source: "pypi", Components: []string{"cuda_cudart"}})
	if err == nil || !strings.Contains(err.Error(), "is damaged (lib/ deleted") {
		t.Errorf("install again: %v", err)
	}
}

// cache prune, uninstall in another store and a failed install all drop
// names of files a store keeps: the ledger carries their states, so the
// store's fast check still vouches for every file.
func TestPruneAndUninstallLeaveOtherStoresChecked(t *testing.T) {
	sw := newSharedWorld(t)
	cache := sw.w.cache
	inA, _ := sw.store(t, "store A")
	inB, stB := sw.store(t, "store B")
	a := installPyPI(t, inA, "12.6.3")[0].Entry
	b := installPyPI(t, inB, "12.6.3")[0].Entry
	healthy(t, a, cache)
	if err := stB.Remove(b); err != nil {
		t.Fatal(err)
	}
	healthy(t, a, cache)
	if _, err := PruneCache(cache); err != nil {
		t.Fatal(err)
	}
	healthy(t, a, cache)
	if len(sw.notices) != 0 {
		t.Errorf("notices: %q", sw.notices)
	}
}
