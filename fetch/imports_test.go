package fetch

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestKilledImportHelper is not a test: run by killImport in a child, it
// makes an import folder in FETCH_IMPORT_CACHE, unpacks 1000 bytes into it
// and dies with os.Exit, which, like SIGKILL, runs no cleanup.
func TestKilledImportHelper(t *testing.T) {
	cache := os.Getenv("FETCH_IMPORT_CACHE")
	if cache == "" {
		t.Skip("run by killImport")
	}
	dir, _, err := NewWorkDir(cache, os.Getenv("FETCH_IMPORT_PREFIX"))
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, "archives"), 0o755)
	os.WriteFile(filepath.Join(dir, "archives", "a.tar.xz"), make([]byte, 1000), 0o644)
	os.Exit(9)
}

// killImport runs a bundle import's first steps in a child that is killed
// with its folder unpacked, and returns that folder.
func killImport(t *testing.T, cache, prefix string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledImportHelper$")
	cmd.Env = append(os.Environ(), "FETCH_IMPORT_CACHE="+cache, "FETCH_IMPORT_PREFIX="+prefix)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 9 {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	left, _ := filepath.Glob(filepath.Join(cache, prefix+"*"))
	for _, p := range left {
		if _, err := os.Stat(filepath.Join(p, "archives", "a.tar.xz")); err == nil {
			return p
		}
	}
	t.Fatalf("the killed import left %v; want its folder", left)
	return ""
}

// A bundle import killed with its bundle unpacked leaves its folder in the
// cache: cache size counts it, prune frees it, the next command that uses
// the cache removes it (and a fresh cache still gets its marker), and none
// of them touches the folder of an import still running. The same holds
// for an install killed while it unpacks a wheel into the cache.
func TestAKilledBundleImportLeavesNothingTheCacheDoesNotSee(t *testing.T) {
	if testing.Short() {
		t.Skip("runs subprocesses")
	}
	for _, prefix := range []string{ImportPrefix, UnpackPrefix} {
		for _, next := range []string{"size then prune", "the next cache use", "the next import"} {
			t.Run(prefix+next, func(t *testing.T) {
				cache := filepath.Join(t.TempDir(), `ca che "$x"`)
				running, done, err := NewImportDir(cache)
				if err != nil {
					t.Fatal(err)
				}
				defer done()
				os.WriteFile(filepath.Join(running, "b"), make([]byte, 500), 0o644)
				// The child's NewImportDir sweeps too, and must leave ours.
				killed := killImport(t, cache, prefix)
				if killed == running {
					t.Fatal("the killed import reused a running one's folder")
				}
				switch next {
				case "size then prune":
					if got := CacheUsage(cache); got != 1500 {
						t.Errorf("cache size = %d; want 1500 (the killed import's 1000, the running one's 500)", got)
					}
					removed, err := PruneCache(cache)
					if err != nil {
						t.Fatal(err)
					}
					if len(removed) != 1 || removed[0] != killed {
						t.Errorf("prune removed %v; want %s", removed, killed)
					}
				case "the next cache use":
					swept.Delete(cache)
					if err := markCache(cache); err != nil {
						t.Fatal(err)
					}
					if !hasMarker(cache) {
						t.Error("the cache did not get its marker")
					}
				case "the next import":
					_, done2, err := NewImportDir(cache)
					if err != nil {
						t.Fatal(err)
					}
					done2()
				}
				if _, err := os.Stat(killed); err == nil {
					t.Errorf("the killed import's folder %s is still there", killed)
				}
				if _, err := os.Stat(filepath.Join(running, "b")); err != nil {
					t.Errorf("the running import's folder lost its files: %v", err)
				}
				done()
				left, _ := filepath.Glob(filepath.Join(cache, prefix+"*"))
				if len(left) != 0 {
					t.Errorf("left: %s", strings.Join(left, ", "))
				}
			})
		}
	}
}
