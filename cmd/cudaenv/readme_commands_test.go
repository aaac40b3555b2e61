package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The README's Commands table is the one list of what cudaenv does:
// every command help lists has a row there (`cudaenv NAME …`).
func TestReadmeCommandsTableHasEveryCommand(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(data), "\n## Commands\n")
	if !ok {
		t.Fatal("README.md has no Commands section")
	}
	table, _, _ = strings.Cut(table, "\n## ")
	for _, c := range newApp(&env{goos: "linux"}).Commands {
		if c.Hidden || c.Name == "help" && strings.Contains(table, "`cudaenv help") {
			continue
		}
		if !strings.Contains(table, "| `cudaenv "+c.Name) {
			t.Errorf("README.md's Commands table has no row for cudaenv %s", c.Name)
		}
	}
}
