package main

import (
	"os"
	"path/filepath"
	"testing"
)

// The shims point at cudaenv-fastshim only where it can hand calls on to
// a cudaenv-shim beside its real file, and only on Linux.
func TestShimsPointAtTheFastShimOnlyBesideCudaenvShim(t *testing.T) {
	tests := []struct {
		name  string
		files []string // beside cudaenv, in "ho me"
		link  bool     // cudaenv-fastshim is a link to a copy elsewhere, alone
		goos  string
		want  string
	}{
		{"all three installed", []string{"cudaenv-shim", "cudaenv-fastshim"}, false, "linux", "cudaenv-fastshim"},
		{"no fast shim", []string{"cudaenv-shim"}, false, "linux", "cudaenv-shim"},
		{"a fast shim without cudaenv-shim", []string{"cudaenv-fastshim"}, false, "linux", "cudaenv"},
		{"a fast shim whose real file has no cudaenv-shim beside it", []string{"cudaenv-shim"}, true, "linux", "cudaenv-shim"},
		{"not Linux", []string{"cudaenv-shim", "cudaenv-fastshim"}, false, "darwin", "cudaenv-shim"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), `ho me "q" $x`)
			os.MkdirAll(dir, 0o755)
			for _, f := range append([]string{"cudaenv"}, tt.files...) {
				if err := os.WriteFile(filepath.Join(dir, f), []byte("#!/bin/sh\n"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if tt.link {
				elsewhere := filepath.Join(t.TempDir(), "cudaenv-fastshim")
				os.WriteFile(elsewhere, []byte("#!/bin/sh\n"), 0o755)
				if err := os.Symlink(elsewhere, filepath.Join(dir, "cudaenv-fastshim")); err != nil {
					t.Fatal(err)
				}
			}
			e := &env{args: []string{filepath.Join(dir, "cudaenv")}, goos: tt.goos}
			if got := shimsTarget(e); got != filepath.Join(dir, tt.want) {
				t.Errorf("shims point at %s, want %s", got, filepath.Join(dir, tt.want))
			}
		})
	}
}
