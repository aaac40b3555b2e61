package compat_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/cudaenv/cudaenv/compat/internal/gen"
)

func TestGeneratedTablesAreUpToDate(t *testing.T) {
	want, err := gen.Render(os.DirFS("data"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("tables_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("tables_gen.go is stale: run `go generate ./compat`")
	}
}
