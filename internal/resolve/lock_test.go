package resolve

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cudaenv/cudaenv/internal/lockfile"
	"github.com/cudaenv/cudaenv/internal/version"
)

func writeLock(t *testing.T, dir, spec, release string) {
	t.Helper()
	sp, err := version.ParseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	lk := &lockfile.Lock{Profile: "minimal", CUDA: &lockfile.Product{Spec: sp, Release: release, Source: "nvidia", Platforms: map[string][]lockfile.File{
		"linux-x86_64": {{Component: "cuda_nvcc", Version: "12.4.99", Name: "cuda_nvcc-linux-x86_64-12.4.99-archive.tar.xz", Size: 1, SHA256: strings.Repeat("a", 64)}},
	}}}
	data, err := lockfile.Encode(lk)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, lockfile.FileName), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A project with a lock activates the release the lock pins, as install
// installed it, not a newer patch installed beside it; a stale or broken
// lock changes nothing.
func TestALockNarrowsTheSpecsToItsReleases(t *testing.T) {
	proj := filepath.Join(t.TempDir(), `p "q" $x`)
	os.MkdirAll(proj, 0o755)
	write(t, filepath.Join(proj, FileName), "12.4\n")
	noEnv := func(string) (string, bool) { return "", false }

	writeLock(t, proj, "12.4", "12.4.0")
	sel, w, err := Find(proj, noEnv, "")
	if err != nil || len(sel.Specs) != 1 || sel.Specs[0].String() != "12.4.0" || len(sel.Written) != 1 || sel.Written[0].String() != "12.4" {
		t.Fatalf("locked: %+v, %v", sel, err)
	}
	if got := sel.AsWritten(); got[0].String() != "12.4" {
		t.Errorf("AsWritten = %v", got)
	}
	if last := w.Files[len(w.Files)-1]; !last.Exists || filepath.Base(last.Path) != lockfile.FileName {
		t.Errorf("the lock is not watched: %+v", w.Files)
	}

	writeLock(t, proj, "11.8", "11.8.0") // stale: written for other specs
	if sel, _, _ := Find(proj, noEnv, ""); sel.Specs[0].String() != "12.4" || sel.Written != nil {
		t.Errorf("stale lock: %+v", sel)
	}
	os.WriteFile(filepath.Join(proj, lockfile.FileName), []byte("lock-version = 1\n[cuda]\nspec = \"$(touch pwned)\"\n"), 0o644)
	if sel, _, err := Find(proj, noEnv, ""); err != nil || sel.Specs[0].String() != "12.4" {
		t.Errorf("broken lock: %+v, %v", sel, err)
	}
	if _, err := os.Stat(filepath.Join(proj, "pwned")); err == nil {
		t.Error("a lock ran something")
	}
}
