package pypi_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cudaenv/cudaenv/fetch/pypi"
	"github.com/cudaenv/cudaenv/fetch/pypi/pypitest"
)

func TestHostileWheelsFromTheIndexAreRefused(t *testing.T) {
	for _, tc := range []struct{ kind, want string }{
		{"escape", "resolves outside the tree"},
		{"receipt-link", "only cudaenv writes"},
		{"bomb", "unpacks to more than"},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			parent := t.TempDir()
			dest, home := filepath.Join(parent, "a", "b", "tree"), filepath.Join(parent, "home")
			for _, d := range []string{dest, home} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			bashrc := filepath.Join(home, ".bashrc")
			if err := os.WriteFile(bashrc, []byte("# mine\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			arg := ""
			if tc.kind != "bomb" {
				arg = bashrc
			}
			entries, err := pypitest.Hostile(tc.kind, arg)
			if err != nil {
				t.Fatal(err)
			}
			idx := pypitest.New(t, pypitest.Releases("12.4.1"), pypitest.Platforms(pypi.LinuxX86_64), pypitest.Extra("nvidia-cuda-runtime-cu12", entries...))
			ix, err := pypi.NewIndex(idx.URL(), pypi.WithHTTPClient(idx.Client()))
			if err != nil {
				t.Fatal(err)
			}
			res, err := ix.Resolve(context.Background(), pypi.LinuxX86_64, []pypi.Requirement{{Component: "cuda_cudart", Project: "nvidia-cuda-runtime-cu12", Version: "12.4.127"}})
			if err != nil {
				t.Fatal(err)
			}
			a := res.Artifacts[0]
			data := pypitest.Download(t, idx.Client(), a.URL, a.SHA256)
			err = pypi.ExtractWheel(bytes.NewReader(data), int64(len(data)), dest)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ExtractWheel = %v, want an error containing %q", err, tc.want)
			}
			if b, _ := os.ReadFile(bashrc); string(b) != "# mine\n" {
				t.Errorf(".bashrc now holds %q", b)
			}
		})
	}
}
