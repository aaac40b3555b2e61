package cudaenv_test

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// Every start of cudaenv and of its shim pays for the package
// initialisation of all it links, whatever the command: so no cudaenv
// package may build much at init (a regexp, a big map, a table that could
// be built on first use). The runtime's own trace counts the work, in
// allocations, which do not depend on the machine's speed.
func TestPackageInitIsLight(t *testing.T) {
	if testing.Short() {
		t.Skip("builds both binaries; skipped with -short")
	}
	const maxAllocs, maxBytes = 64, 8 << 10
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", bin+string(filepath.Separator), "./cmd/cudaenv", "./cmd/cudaenv-shim")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	line := regexp.MustCompile(`(?m)^init (\S+) @\S+ ms, \S+ ms clock, (\d+) bytes, (\d+) allocs$`)
	for _, run := range [][]string{{"cudaenv", "--version"}, {"cudaenv-shim"}} {
		cmd := exec.Command(filepath.Join(bin, run[0]), run[1:]...)
		cmd.Env = append(cmd.Environ(), "GODEBUG=inittrace=1")
		out, _ := cmd.CombinedOutput() // cudaenv-shim under its own name exits 2
		inits := line.FindAllStringSubmatch(string(out), -1)
		if len(inits) == 0 {
			t.Fatalf("%s: no init trace in:\n%s", run[0], out)
		}
		for _, m := range inits {
			if !regexp.MustCompile(`^` + regexp.QuoteMeta(module) + `(/|$)`).MatchString(m[1]) {
				continue
			}
			bytes, _ := strconv.Atoi(m[2])
			allocs, _ := strconv.Atoi(m[3])
			if allocs > maxAllocs || bytes > maxBytes {
				t.Errorf("%s: init of %s makes %d allocations, %d bytes (at most %d, %d): build it on first use (sync.OnceValue)", run[0], m[1], allocs, bytes, maxAllocs, maxBytes)
			}
		}
	}
}
