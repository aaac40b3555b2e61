package cudaenv_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The README's Development table is where the next engineer looks for the
// package that does a job: every package under internal/ is named there
// (as `internal/NAME`, or `NAME` in a row of several). Eight branches
// added packages at once and none added its row.
func TestReadmeDevelopmentNamesEveryInternalPackage(t *testing.T) {
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, dev, ok := strings.Cut(string(data), "\n## Development\n")
	if !ok {
		t.Fatal("README.md has no Development section")
	}
	ents, err := os.ReadDir("internal")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		if goFiles, _ := filepath.Glob(filepath.Join("internal", e.Name(), "*.go")); len(goFiles) == 0 {
			continue
		}
		n := e.Name()
		if !strings.Contains(dev, "`internal/"+n+"`") && !strings.Contains(dev, "`"+n+"`") {
			t.Errorf("README.md's Development section does not name internal/%s", n)
		}
	}
}
