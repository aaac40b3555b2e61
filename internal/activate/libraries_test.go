package activate

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cudaenv/cudaenv/internal/envdiff"
	"github.com/cudaenv/cudaenv/internal/version"
	"github.com/cudaenv/cudaenv/store"
)

// Each library's variables are ones a state may name, its lib and include
// lie under a root the state records, and reverting takes back every one
// and leaves the user's own values (a path with a quote, a space and $).
func TestEachLibraryIsActivatedAndTakenBackEntryByEntry(t *testing.T) {
	root := filepath.Join(t.TempDir(), `it's a $dir`)
	for _, lib := range OtherLibraries() {
		t.Run(string(lib), func(t *testing.T) {
			p := filepath.Join(root, string(lib), "1.2.3-cuda13")
			r := Resolved{Libs: map[version.Tool]*store.Entry{lib: {Kind: store.KindOf(lib), Version: version.MustParse("1.2.3"), CUDAMajor: 13, Path: p}}}
			w := Want(r, "linux")
			if len(w.Set) == 0 {
				t.Fatal("no build variable set")
			}
			rootVar := ""
			for name, v := range w.Set {
				if !envdiff.ManagedScalar(name) {
					t.Errorf("%s is not one envdiff manages", name)
				}
				if v == p && slices.Contains(envdiff.LibraryRoots(), name) {
					rootVar = name
				}
			}
			if rootVar == "" {
				t.Errorf("none of %v is a root envdiff checks list entries against (%v)", w.Set, envdiff.LibraryRoots())
			}
			for name, want := range map[string]string{"LD_LIBRARY_PATH": "lib", "LIBRARY_PATH": "lib", "CPATH": "include"} {
				if got := w.Prepend[name]; !slices.Equal(got, []string{filepath.Join(p, want)}) {
					t.Errorf("%s = %v, want %s/%s", name, got, p, want)
				}
			}
			if got := w.Prepend["CMAKE_PREFIX_PATH"]; !slices.Equal(got, []string{p}) {
				t.Errorf("CMAKE_PREFIX_PATH = %v, want the root %s", got, p)
			}
			user := envdiff.Env{"PATH": "/usr/bin", "CPATH": "/opt/inc", "CMAKE_PREFIX_PATH": "/opt/prefix", rootVar: "/opt/mine"}
			changes, _ := envdiff.Apply(user, envdiff.State{}, w, ":")
			active := envdiff.Result(user, changes)
			if !strings.HasPrefix(active["CPATH"], filepath.Join(p, "include")+":") || active[rootVar] != p || active["CMAKE_PREFIX_PATH"] != p+":/opt/prefix" {
				t.Fatalf("active env: %v", active)
			}
			if _, err := envdiff.Decode(active[envdiff.StateVar]); err != nil {
				t.Fatalf("the state does not decode: %v", err)
			}
			back := envdiff.Result(active, Changes(active, envdiff.Want{}, "linux"))
			for k, v := range user {
				if back[k] != v {
					t.Errorf("after leaving %s = %q, want %q", k, back[k], v)
				}
			}
			for k := range back {
				if _, ok := user[k]; !ok {
					t.Errorf("after leaving %s is still set (%q)", k, back[k])
				}
			}
		})
	}
}
