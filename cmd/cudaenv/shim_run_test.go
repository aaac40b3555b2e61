package main

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestOnlyNamesWithAShimDispatchAsShims(t *testing.T) {
	root := t.TempDir()
	shimsDir := filepath.Join(root, "shims")
	os.MkdirAll(shimsDir, 0o755)
	name := "nvcc"
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	os.WriteFile(filepath.Join(shimsDir, name), nil, 0o755)
	env := []string{"CUDAENV_ROOT=" + root}
	tests := []struct {
		desc string
		arg0 string
		want bool
	}{
		{"a command with a shim is a shim call", "/usr/bin/nvcc", true},
		{"cudaenv itself is the CLI", "/usr/local/bin/cudaenv", false},
		{"a renamed cudaenv binary stays the CLI", "/opt/bin/ce", false},
		{"a command without a shim stays the CLI", "/opt/bin/ptxas", false},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			if got := isShimCall([]string{tt.arg0}, env); got != tt.want {
				t.Errorf("isShimCall(%s) = %v, want %v", tt.arg0, got, tt.want)
			}
		})
	}
}
