package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// A full disk (here: no inode left) under a write that is not a download
// (a pin, a store folder) says what to do in its one line, as downloads'
// errors do (issue #34: bare "no space left on device" lines).
func TestAFullDiskUnderAPinSaysWhatToDo(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("a tmpfs with an inode limit is Linux's")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=4m,nr_inodes=64", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here (needs root): %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	proj := filepath.Join(dir, "proj")
	os.Mkdir(proj, 0o755)
	for i := 0; ; i++ {
		f, err := os.Create(filepath.Join(dir, fmt.Sprint(i)))
		if err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
		f.Close()
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
