package shims

import (
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/cudaenv/cudaenv/store"
)

// A shim runs the system store's version where that is the selection,
// the user's own where the user has the same version, and rehash makes
// shims for the system store's commands too.
func TestShimsResolveAcrossTheUserAndSystemStores(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("exec bits")
	}
	st := fakeStore(t, map[string]string{
		"cuda/12.4.1/receipt.json": receipt,
		"cuda/12.4.1/bin/nvcc":     "",
		"own/.cuda-version":        "12.4.1\n",
		"shared/.cuda-version":     "12.6\n",
	})
	system := filepath.Join(t.TempDir(), "opt cudaenv")
	for p, body := range map[string]string{
		"cuda/12.4.1/receipt.json": receipt,
		"cuda/12.6.0/receipt.json": receipt,
	} {
		full := filepath.Join(system, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		os.WriteFile(full, []byte(body), 0o644)
	}
	writeExecs(t, filepath.Join(system, "cuda", "12.4.1", "bin"), "nvcc")
	writeExecs(t, filepath.Join(system, "cuda", "12.6.0", "bin"), "nvcc", "sysonly")
	root := st.Dirs.Root
	sysEnv := "CUDAENV_SYSTEM_ROOT=" + system

	tg, err := call(t, st, "nvcc", filepath.Join(root, "shared"), sysEnv)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(system, "cuda", "12.6.0", "bin", "nvcc"); tg.Path != want {
		t.Errorf("12.6 runs %s, want %s", tg.Path, want)
	}
	if env := envMap(tg); env["CUDA_HOME"] != filepath.Join(system, "cuda", "12.6.0") || !strings.HasPrefix(env["PATH"], filepath.Join(system, "cuda", "12.6.0", "bin")+":") {
		t.Errorf("env = %v", env)
	}
	tg, err = call(t, st, "nvcc", filepath.Join(root, "own"), sysEnv)
	if err != nil || tg.Path != filepath.Join(root, "cuda", "12.4.1", "bin", "nvcc") {
		t.Errorf("12.4.1 runs %+v (%v), want the user's own copy", tg.Path, err)
	}

	// The system toolkit's bin on PATH (the hook put it there) is not the
	// user's: sysonly still gets a shim.
	self := filepath.Join(t.TempDir(), "cudaenv-shim")
	os.WriteFile(self, nil, 0o755)
	st.Dirs.System = system
	st = store.New(st.Dirs)
	userPath := filepath.Join(system, "cuda", "12.6.0", "bin") + ":/usr/bin"
	if _, err := Rehash(st, self, "linux", userPath); err != nil {
		t.Fatal(err)
	}
	if got, want := readShims(t, st.Dirs.Shims()), []string{"nvcc", "sysonly"}; !reflect.DeepEqual(got, want) {
		t.Errorf("shims = %q, want %q", got, want)
	}
	if _, err := os.Stat(filepath.Join(system, "shims")); err == nil {
		t.Error("rehash wrote shims into the system store")
	}
}
