package store

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// writeTree lays out files under dir; paths under bin/ are executable.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, body := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasPrefix(p, "bin/") {
			mode = 0o755
		}
		if err := os.WriteFile(full, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
}

// Linking a tree reads its version from files; its bin/nvcc, which could
// be anything, runs only when no file says.
func TestLinkReadsTheVersionFromFilesWithoutRunningNvcc(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("uses a shell script as nvcc")
	}
	tests := []struct {
		desc  string
		files map[string]string
		want  string
	}{
		{"version.json is read", map[string]string{"version.json": `{"cuda":{"version":"12.4.1"}}`}, "12.4.1"},
		{"version.txt is read", map[string]string{"version.txt": "CUDA Version 11.0.228\n"}, "11.0.228"},
		{"cuda.h gives the release and libcudart the patch level", map[string]string{
			"include/cuda.h":             "/* CUDA */\n#define CUDA_VERSION 12040\n",
			"lib/libcudart.so.12.4.127":  "",
			"lib/libcudart.so.12":        "",
			"lib/libcudart.so.11.8.89":   "",
			"lib64/libcudart_static.a":   "",
			"include/cuda_runtime_api.h": "#define CUDART_VERSION 12040\n",
		}, "12.4.127"},
		{"cuda.h where conda keeps it, without a libcudart", map[string]string{
			"targets/x86_64-linux/include/cuda.h": "#define CUDA_VERSION 12060\n",
		}, "12.6.0"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "tree")
			ran := filepath.Join(t.TempDir(), "nvcc-ran")
			tt.files["bin/nvcc"] = "#!/bin/sh\ntouch '" + ran + "'\necho 'Cuda compilation tools, release 9.9, V9.9.9'\n"
			writeTree(t, dir, tt.files)
			e, err := newStore(t).Link(dir, 0)
			if err != nil {
				t.Fatal(err)
			}
			if e.Name != tt.want {
				t.Errorf("linked as %s, want %s", e.Name, tt.want)
			}
			if _, err := os.Stat(ran); err == nil {
				t.Error("link ran the tree's bin/nvcc")
			}
		})
	}
}

// An nvcc that hangs, leaving a child that holds its stdout, cannot hold
// link up past the timeout.
func TestLinkOfAHangingNvccReturnsWithinTheTimeout(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("uses a shell script as nvcc")
	}
	old := nvccTimeout
	nvccTimeout = 300 * time.Millisecond
	t.Cleanup(func() { nvccTimeout = old })
	dir := filepath.Join(t.TempDir(), "tree")
	writeTree(t, dir, map[string]string{"bin/nvcc": "#!/bin/sh\nsleep 20 &\nsleep 20\n"})
	start := time.Now()
	_, err := newStore(t).Link(dir, 0)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("link took %s", took)
	}
	if err == nil || !strings.Contains(err.Error(), "--version did not finish within 300ms; if ") || strings.Contains(err.Error(), "\n") {
		t.Errorf("err = %v", err)
	}

	// One that answers, then leaves a child holding stdout, is read.
	dir = filepath.Join(t.TempDir(), "tree")
	writeTree(t, dir, map[string]string{"bin/nvcc": "#!/bin/sh\necho 'Cuda compilation tools, release 12.4, V12.4.131'\nsleep 20 &\n"})
	start = time.Now()
	e, err := newStore(t).Link(dir, 0)
	if took := time.Since(start); took > 5*time.Second || err != nil || e.Name != "12.4.131" {
		t.Errorf("link took %s: %+v, %v", took, e, err)
	}
}
