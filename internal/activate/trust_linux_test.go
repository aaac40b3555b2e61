//go:build linux

package activate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cudaenv/cudaenv/internal/dirs"
	"github.com/cudaenv/cudaenv/store"
)

// The hot path skips what List skips: system store entries another
// ordinary user could change, and says so through the hook's warnings.
func TestResolveFastSkipsSystemEntriesAnotherUserCouldChange(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to give files to another user")
	}
	base := t.TempDir()
	user, system := filepath.Join(base, "user"), filepath.Join(base, "sys tem")
	theirs := filepath.Join(base, "theirs-12.8")
	r := `{"kind":"x","source":"test"}`
	writeTestTree(t, system, map[string]string{
		"cuda/12.4.1/receipt.json": r,
		"cuda/12.6.0/receipt.json": r,
		"cuda/12.8.0/receipt.json": `{"kind":"cuda","source":"link","target":"` + theirs + `"}`,
	})
	writeTestTree(t, theirs, map[string]string{"bin/nvcc": ""})
	for _, p := range []string{filepath.Join(system, "cuda", "12.6.0"), theirs, filepath.Join(theirs, "bin")} {
		if err := os.Chown(p, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	st := store.New(dirs.Dirs{Root: user, System: system})
	sameAsResolve(t, st, []string{"12", "12.6", "12.8", "latest", "12.4"})
	got, err := ResolveFast(st, specs(t, "12"))
	if err != nil {
		t.Fatal(err)
	}
	if got.CUDA == nil || got.CUDA.Name != "12.4.1" {
		t.Fatalf("12 = %+v, want the system store's 12.4.1", got.CUDA)
	}

	d := dirs.Dirs{Root: user, Config: filepath.Join(base, "cfg"), Cache: filepath.Join(base, "cache"), System: system}
	out := Compute(Input{Dir: base, Env: map[string]string{"CUDAENV_VERSION": "12.6", "PATH": "/usr/bin"}, Dirs: d, GOOS: "linux"})
	if out.Err == nil {
		t.Fatalf("12.6 resolved to %+v", out.Resolved.CUDA)
	}
	// Not found, Resolve lists the store (and warns of 12.8.0 as well).
	want := "skipping the system store's 12.6.0: " + filepath.Join(system, "cuda", "12.6.0") + " is owned by nobody"
	if n := strings.Count(strings.Join(out.Warnings, "\n"), want); n != 1 {
		t.Errorf("warnings %q: want %q once", out.Warnings, want)
	}
}
