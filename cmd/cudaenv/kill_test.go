package main

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cudaenv/cudaenv/fetch/fetchtest"
	"github.com/cudaenv/cudaenv/internal/testwait"
)

// TestAKilledInstallLeavesNoVersion kills `cudaenv install` while its
// staging tree is half filled (two archives extracted, the third one held
// back by the server), then checks that no version is visible, and that the
// next install cleans the leftovers and succeeds.
func TestAKilledInstallLeavesNoVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("runs subprocesses")
	}
	bin, err := exec.LookPath("cudaenv") // testscript.Main put it on PATH
	if err != nil {
		t.Skip("no cudaenv binary on PATH")
	}
	mirror := fetchtest.NewMirror(t, fetchtest.Options{})
	target, _ := url.Parse(mirror.URL())
	release := make(chan struct{})
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "cuda_nvcc-") {
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	defer srv.Close()
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()

	base := filepath.Join(t.TempDir(), "a b$c")
	root := filepath.Join(base, "root")
	env := append(os.Environ(),
		"CUDAENV_ROOT="+root,
		"CUDAENV_CONFIG_DIR="+filepath.Join(base, "config"),
		"CUDAENV_CACHE_DIR="+filepath.Join(base, "cache"),
		"CUDAENV_MIRROR="+srv.URL,
	)
	cmd := exec.Command(bin, "install", "12.4", "--profile", "minimal")
	cmd.Env = env
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until cudart's files are in the staging tree.
	t.Cleanup(func() { cmd.Process.Kill() })
	testwait.Until(t, "the staging tree's cuda_runtime.h", func() bool {
		matches, _ := filepath.Glob(filepath.Join(root, "cuda", ".stage-12.4.1-*", "include", "cuda_runtime.h"))
		return len(matches) > 0
	})
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	if _, err := os.Stat(filepath.Join(root, "cuda", "12.4.1")); err == nil {
		t.Fatal("a killed install is visible in the store")
	}
	out, _ := run2(t, env, bin, "list")
	if !strings.Contains(out, "nothing installed yet") {
		t.Errorf("list after the kill: %s", out)
	}

	close(release)
	out, err = run2(t, env, bin, "install", "12.4", "--profile", "minimal")
	if err != nil || !strings.Contains(out, "installed CUDA 12.4.1") {
		t.Fatalf("install after the kill: %v\n%s", err, out)
	}
	left, _ := filepath.Glob(filepath.Join(root, "cuda", ".*"))
	if len(left) != 0 {
		t.Errorf("stale staging left behind: %v", left)
	}
}

func run2(t *testing.T, env []string, bin string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	return string(out), err
}
