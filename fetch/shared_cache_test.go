package fetch_test

// A cache shared between users (issue #34): what another user plants,
// swaps or shares there.

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cudaenv/cudaenv/fetch"
	"github.com/cudaenv/cudaenv/fetch/fetchtest"
)

// nobody is the second user of a shared cache; tests that need one skip
// where this process cannot give files away (not root).
const nobody = 65534

func needChown(t *testing.T, p string) {
	t.Helper()
	if err := os.Lchown(p, nobody, nobody); err != nil {
		t.Skipf("cannot give a file to another user here (%v): the shared-cache case needs root", err)
	}
}

// Whoever owns a shared cache's metadata folder can swap files in it at
// will. A read that checked the name and then opened it again could be
// raced (won within 6-30 runs before); the descriptor is what is judged
// now, so no read in thousands believes the other user's file.
func TestASwapInAnotherUsersFolderIsNeverBelieved(t *testing.T) {
	cache := t.TempDir()
	dir := filepath.Join(cache, "metadata")
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	needChown(t, dir)
	name := filepath.Join(dir, "k.METADATA")
	write := func(tmp, body string, foreign bool) {
		if err := os.WriteFile(tmp, []byte(body), 0o600); err != nil {
			t.Error(err)
			return
		}
		if foreign {
			os.Chown(tmp, nobody, nobody)
		}
		os.Rename(tmp, name)
	}
	write(filepath.Join(dir, "mine"), "mine", false)
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the other user, swapping as fast as it can
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			write(filepath.Join(dir, "theirs"), "theirs", true)
			write(filepath.Join(dir, "mine"), "mine", false)
		}
	}()
	believed := 0
	for range 5000 {
		data, err := fetch.ReadTrustedCache(cache, "metadata/k.METADATA", 1024)
		if err == nil && string(data) != "mine" {
			believed++
		}
	}
	stop.Store(true)
	wg.Wait()
	if believed > 0 {
		t.Fatalf("the other user's file was believed %d times", believed)
	}
}

func TestATrustedCacheFileIsJudgedByItsDescriptor(t *testing.T) {
	cache := t.TempDir()
	dir := filepath.Join(cache, "metadata")
	os.Mkdir(dir, 0o755)
	p := filepath.Join(dir, "k.METADATA")
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T)
		want  error
	}{
		{"a file of its own is read", func(t *testing.T) { os.WriteFile(p, []byte("ok"), 0o600) }, nil},
		{"a file others may write is not believed", func(t *testing.T) { os.WriteFile(p, []byte("ok"), 0o600); os.Chmod(p, 0o666) }, fetch.ErrForeign},
		{"a file the group may write is not believed", func(t *testing.T) { os.WriteFile(p, []byte("ok"), 0o600); os.Chmod(p, 0o620) }, fetch.ErrForeign},
		{"another user's file is not believed", func(t *testing.T) { os.WriteFile(p, []byte("ok"), 0o600); needChown(t, p) }, fetch.ErrForeign},
		{"a named pipe is not waited on", func(t *testing.T) {
			if err := mkfifo(p); err != nil {
				t.Skip(err)
			}
		}, nil},
		{"a hard link to a file of its own is not believed", func(t *testing.T) {
			other := filepath.Join(cache, "other")
			os.WriteFile(other, []byte("ok"), 0o600)
			os.Link(other, p)
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.RemoveAll(p)
			tc.plant(t)
			data, err := fetch.ReadTrustedCache(cache, "metadata/k.METADATA", 1024)
			switch {
			case tc.name == "a file of its own is read":
				if err != nil || string(data) != "ok" {
					t.Fatalf("ReadTrustedCache = %q, %v", data, err)
				}
			case tc.want != nil && !errors.Is(err, tc.want), err == nil:
				t.Fatalf("ReadTrustedCache = %q, %v; want %v", data, err, tc.want)
			}
		})
	}
}

// In a world-writable (1777) cache another user plants archives or index
// as a link (to a folder of theirs, or /etc) before this user's first
// use, or as a folder of their own: cudaenv refuses it with one line
// naming the fix, and writes nothing through it.
func TestAFolderPlantedInASharedCacheIsRefused(t *testing.T) {
	for _, folder := range []string{"archives", "index", "manifests", "metadata", "unpacked"} {
		for _, kind := range []string{"link", "foreign"} {
			t.Run(folder+" "+kind, func(t *testing.T) {
				cache := filepath.Join(t.TempDir(), "shared")
				os.Mkdir(cache, 0o777)
				os.Chmod(cache, 0o1777)
				target := t.TempDir()
				p := filepath.Join(cache, folder)
				want := "is a symbolic link"
				if kind == "link" {
					os.Symlink(target, p)
				} else {
					os.Mkdir(p, 0o777)
					os.Chmod(p, 0o777)
					needChown(t, p)
					want = "belongs to another user (uid 65534) and is not shared with a group of yours"
				}
				_, err := fetch.CacheFolder(cache, folder)
				if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "CUDAENV_CACHE_DIR") || strings.Contains(err.Error(), "\n") {
					t.Fatalf("CacheFolder = %v; want one line saying %q and the fix", err, want)
				}
				if des, _ := os.ReadDir(target); len(des) != 0 {
					t.Errorf("written through the link: %v", des)
				}
			})
		}
	}
}

// cache prune while an install downloads (issue #34: 18 of 20 installs
// failed with a bare "rename ….part: no such file or directory", and
// prune itself sometimes with "directory not empty"): prune passes over
// the archive a download holds, and the install finishes.
func TestPruneWhileAnInstallDownloadsFailsNeither(t *testing.T) {
	m := newMirror(t, fetchtest.Options{Synthetic: true})
	c := newClient(t, m)
	arts := minimal124(t, c)
	// Another release's archive, complete and not in use: pruned.
	other := filepath.Join(c.CacheDir, "archives", strings.Repeat("ab", 32))
	os.MkdirAll(filepath.Dir(other), 0o755)
	os.WriteFile(other, []byte("old"), 0o644)
	var removed []string
	var perr error
	restore := fetch.OnFirstCacheWriteOf(arts[0].SHA256, func() {
		removed, perr = fetch.PruneCache(c.CacheDir)
	})
	_, err := c.Fetch(t.Context(), arts, t.TempDir())
	restore()
	if perr != nil {
		t.Fatalf("prune during the download: %v", perr)
	}
	if err != nil {
		t.Fatalf("the install the prune ran beside: %v", err)
	}
	if _, err := os.Stat(other); err == nil {
		t.Errorf("prune kept an archive no install holds (removed %q)", removed)
	}
	if _, err := os.Stat(filepath.Join(c.CacheDir, "archives", arts[0].SHA256)); err != nil {
		t.Errorf("the archive downloaded beside the prune is not in the cache: %v", err)
	}
}

// An archive pruned between its download and its extraction is fetched
// again, and the install says so.
func TestAnArchivePrunedBeforeItsExtractionIsFetchedAgain(t *testing.T) {
	m := newMirror(t, fetchtest.Options{Synthetic: true})
	c := newClient(t, m)
	var n notices
	c.Notice = n.add
	arts := minimal124(t, c)
	var once sync.Once
	restore := fetch.BeforeExtract(func(p string) {
		if strings.HasSuffix(p, arts[0].SHA256) {
			once.Do(func() { os.Remove(p) })
		}
	})
	defer restore()
	if _, err := c.Fetch(t.Context(), arts, t.TempDir()); err != nil {
		t.Fatalf("Fetch = %v", err)
	}
	if !strings.Contains(n.String(), "its archive was removed from the cache while this install ran (cache prune?); downloading it again") {
		t.Errorf("notices: %q", n.String())
	}
}

// cache prune says what it frees: a file a store holds too (a hard link,
// as a killed unpacking's folder or the cache of unpacked wheels can have)
// counts nothing (issue #34: "freed 200 MiB" for files a store still
// held).
func TestCacheUsageLeavesOutFilesAStoreHolds(t *testing.T) {
	cache, store := t.TempDir(), t.TempDir()
	work := filepath.Join(cache, fetch.UnpackPrefix+"123")
	os.MkdirAll(filepath.Join(work, "entry"), 0o755)
	os.MkdirAll(filepath.Join(cache, "archives"), 0o755)
	shared := filepath.Join(work, "entry", "libbig.so")
	os.WriteFile(shared, make([]byte, 4096), 0o644)
	if err := os.Link(shared, filepath.Join(store, "libbig.so")); err != nil {
		t.Skip(err)
	}
	archive := filepath.Join(cache, "archives", strings.Repeat("cd", 32))
	os.WriteFile(archive, make([]byte, 100), 0o644)
	os.Link(archive, filepath.Join(store, "archive"))
	os.WriteFile(filepath.Join(cache, "archives", strings.Repeat("ef", 32)), make([]byte, 10), 0o644)
	if got := fetch.CacheUsage(cache); got != 10 {
		t.Errorf("CacheUsage = %d; want 10 (the files no store holds)", got)
	}
}
