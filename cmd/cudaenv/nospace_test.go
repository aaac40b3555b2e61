package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cudaenv/cudaenv/internal/testfs"
)

// A full disk (here: no inode left) under a write that is not a download
// (a pin, a store folder) says what to do in its one line, as downloads'
// errors do (issue #34: bare "no space left on device" lines).
func TestAFullDiskUnderAPinSaysWhatToDo(t *testing.T) {
	dir := testfs.FewInodes(t, "4m", 64)
	proj := filepath.Join(dir, "proj")
	os.Mkdir(proj, 0o755)
	if err := testfs.Fill(t, dir); !errors.Is(err, syscall.ENOSPC) {
		t.Fatal(err)
	}
	base := t.TempDir()
	env := append(os.Environ(), "CUDAENV_ROOT="+filepath.Join(base, "root"), "CUDAENV_CONFIG_DIR="+filepath.Join(base, "config"), "CUDAENV_CACHE_DIR="+filepath.Join(base, "cache"), "HOME="+base)
	t.Chdir(proj)
	var stdout, stderr bytes.Buffer
	code := run([]string{"cudaenv", "local", "12.4"}, env, nil, &stdout, &stderr)
	lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
	msg := lines[len(lines)-1] // after the warning that 12.4 is not installed
	if code == 0 || msg != "cudaenv: local: write "+filepath.Join(proj, ".cuda-version")+": no space left on device; that disk, or its file-count quota, is full: free space there (cudaenv cache prune drops cached downloads, cudaenv uninstall versions you no longer use)" {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(proj, ".cuda-version")); err == nil {
		t.Error("a pin was written")
	}
}
