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
	"syscall"
	"testing"

	"github.com/cudaenv/cudaenv/fetch"
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
			if err := syscall.Mkfifo(p, 0o600); err != nil {
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
