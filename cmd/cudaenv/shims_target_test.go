package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
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
		{"all three installed, as make install does", []string{"cudaenv-shim", "cudaenv-fastshim"}, false, "linux", "cudaenv-fastshim"},
		{"no fast shim", []string{"cudaenv-shim"}, false, "linux", "cudaenv-shim"},
		{"a fast shim without cudaenv-shim", []string{"cudaenv-fastshim"}, false, "linux", "cudaenv"},
		{"a fast shim whose real file has no cudaenv-shim beside it", []string{"cudaenv-shim"}, true, "linux", "cudaenv-shim"},
		{"not Linux", []string{"cudaenv-shim", "cudaenv-fastshim"}, false, "darwin", "cudaenv-shim"},
		{"a fast shim older than its cudaenv-shim (an upgrade by go install)", []string{"cudaenv-fastshim", "cudaenv-shim"}, false, "linux", "cudaenv-shim"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), `ho me "q" $x`)
			os.MkdirAll(dir, 0o755)
			// Written in this order, a second apart, as make install does
			// (cudaenv-fastshim last) unless the case lists them otherwise.
			when := time.Now().Add(-time.Hour)
			for _, f := range append([]string{"cudaenv"}, tt.files...) {
				p := filepath.Join(dir, f)
				if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
					t.Fatal(err)
				}
				when = when.Add(time.Second)
				os.Chtimes(p, when, when)
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
