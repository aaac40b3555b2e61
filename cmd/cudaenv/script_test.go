package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cudaenv/cudaenv/fetch"
	"github.com/cudaenv/cudaenv/fetch/fetchtest"
	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	// No test reaches the internet (NVIDIA's server, pypi.org), in this
	// process or in the cudaenv a script runs: the clients cudaenv makes
	// go through http.DefaultTransport, which refuses other hosts than
	// this machine's here.
	http.DefaultTransport = fetch.LoopbackOnly(http.DefaultTransport)
	testscript.Main(m, map[string]func(){
		"cudaenv": func() { os.Exit(run(os.Args, os.Environ(), os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs testdata/script/*.txtar. Each script gets a store, a
// config and a cache under a $WORK path with a space, a quote and a dollar,
// and $MANIFESTS: the repository's copies of NVIDIA's manifests.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			base := filepath.Join(env.WorkDir, `ho me "q" $x`)
			for _, d := range []string{"root", "config", "cache", "home"} {
				if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
					return err
				}
			}
			env.Setenv("BASE", base)
			env.Setenv("CUDAENV_ROOT", filepath.Join(base, "root"))
			env.Setenv("CUDAENV_CONFIG_DIR", filepath.Join(base, "config"))
			env.Setenv("CUDAENV_CACHE_DIR", filepath.Join(base, "cache"))
			env.Setenv("HOME", filepath.Join(base, "home"))
			env.Setenv("MANIFESTS", fetchtest.FindManifests())
			fixtures, err := filepath.Abs(filepath.Join("..", "..", "internal", "cudabin", "testdata"))
			if err != nil {
				return err
			}
			env.Setenv("INSPECT_FIXTURES", fixtures) // nvcc-built ELF files (internal/cudabin/testdata/build.sh)
			// No test reaches the public index: pypi-index points this
			// at a local one.
			env.Setenv("CUDAENV_PYPI_INDEX", "http://127.0.0.1:9/simple/")
			env.Setenv("LMOD_INIT", lmodInit())
			env.Setenv("MODULECMD_TCL", modulecmdTcl())
			return nil
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "lmod":
				return lmodInit() != "", nil
			case "envmodules":
				return modulecmdTcl() != "", nil
			case "cmake-env-root":
				// CMake 4.2 and newer find a toolkit without nvcc through
				// the environment's CUDAToolkit_ROOT.
				return cmakeAtLeast(4, 2), nil
			}
			return systemCondition(cond)
		},
		Cmds: cmds(t),
	})
}

func cmds(t *testing.T) map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	m := map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"fakecuda":  cmdFakeCUDA,
		"fakecudnn": cmdFakeCudnn,
		"touchnew":  cmdTouchNew,
		"touchold":  cmdTouchOld,
	}
	for k, v := range mirrorCmds(t) {
		m[k] = v
	}
	for k, v := range systemCmds() {
		m[k] = v
	}
	for k, v := range imageCmds() {
		m[k] = v
	}
	return m
}

// lmodInit is Lmod's bash init script, where Debian's lmod package puts it.
func lmodInit() string {
	return firstFile("/usr/share/lmod/lmod/init/bash")
}

// modulecmdTcl is Environment Modules' modulecmd.tcl: installed, or
// unpacked by .ci/run into CUDAENV_TEST_ENVMODULES (Debian's lmod and
// environment-modules packages conflict, so CI installs one, unpacks the
// other).
func modulecmdTcl() string {
	var cands []string
	if root := os.Getenv("CUDAENV_TEST_ENVMODULES"); root != "" {
		cands = append(cands, filepath.Join(root, "usr/lib/x86_64-linux-gnu/modulecmd.tcl"), filepath.Join(root, "usr/lib/aarch64-linux-gnu/modulecmd.tcl"), filepath.Join(root, "usr/lib/modulecmd.tcl"))
	}
	cands = append(cands, "/usr/lib/x86_64-linux-gnu/modulecmd.tcl", "/usr/lib/aarch64-linux-gnu/modulecmd.tcl", "/usr/share/modules/libexec/modulecmd.tcl")
	if _, err := exec.LookPath("tclsh"); err != nil {
		return ""
	}
	return firstFile(cands...)
}

func firstFile(paths ...string) string {
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

// fakecuda [-installed] DIR VERSION: a small toolkit tree: bin/nvcc printing
// its version, version.json, lib64/libcudart.so.MAJOR. With -installed, DIR
// is taken as a store root and the toolkit is written as an installed entry
// with a receipt.
func cmdFakeCUDA(ts *testscript.TestScript, neg bool, args []string) {
	installed := len(args) > 0 && args[0] == "-installed"
	if installed {
		args = args[1:]
	}
	if neg || len(args) != 2 {
		ts.Fatalf("usage: fakecuda [-installed] DIR VERSION")
	}
	dir, ver := ts.MkAbs(args[0]), args[1]
	if installed {
		dir = filepath.Join(dir, "cuda", ver)
	}
	major, _, _ := strings.Cut(ver, ".")
	parts := strings.Split(ver, ".")
	release := parts[0] + "." + parts[1]
	files := map[string]string{
		"bin/nvcc":                    "#!/bin/sh\necho 'nvcc: NVIDIA (R) Cuda compiler driver'\necho 'Cuda compilation tools, release " + release + ", V" + ver + "'\n",
		"bin/ptxas":                   "#!/bin/sh\necho ptxas " + ver + "\n",
		"version.json":                `{"cuda": {"name": "CUDA SDK", "version": "` + ver + `"}}`,
		"lib64/libcudart.so." + major: "fake\n",
		"include/cuda_runtime.h":      "// fake\n",
		"nvvm/bin/cicc":               "#!/bin/sh\n",
		"include/crt/host_config.h":   "#if __GNUC__ > 13\n#error -- unsupported GNU version! gcc versions later than 13 are not supported!\n#endif\n",
		// Empty: what nvcc links with, there for doctor, adding no size.
		"bin/crt/link.stub":        "",
		"bin/crt/prelink.stub":     "",
		"lib64/libcudart_static.a": "",
	}
	if installed {
		r, _ := json.Marshal(map[string]any{"kind": "cuda", "version": ver, "source": "test", "installed": "2026-01-02T03:04:05Z"})
		files["receipt.json"] = string(r)
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		ts.Check(os.MkdirAll(filepath.Dir(p), 0o755))
		mode := os.FileMode(0o644)
		if strings.Contains(name, "bin/") && !strings.Contains(name, "crt/") {
			mode = 0o755
		}
		ts.Check(os.WriteFile(p, []byte(body), mode))
	}
}

// fakecudnn ROOT VERSION MAJOR: an installed cuDNN entry in store ROOT.
func cmdFakeCudnn(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: fakecudnn ROOT VERSION CUDAMAJOR")
	}
	dir := filepath.Join(ts.MkAbs(args[0]), "cudnn", args[1]+"-cuda"+args[2])
	v := strings.Split(args[1], ".")
	r, _ := json.Marshal(map[string]any{"kind": "cudnn", "version": args[1], "source": "test", "installed": "2026-01-02T03:04:05Z"})
	files := map[string]string{
		"include/cudnn_version.h": fmt.Sprintf("#define CUDNN_MAJOR %s\n#define CUDNN_MINOR %s\n#define CUDNN_PATCHLEVEL %s\n", v[0], v[1], v[2]),
		"lib/libcudnn.so." + v[0]: "fake\n",
		"receipt.json":            string(r),
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		ts.Check(os.MkdirAll(filepath.Dir(p), 0o755))
		ts.Check(os.WriteFile(p, []byte(body), 0o644))
	}
}

// touchnew FILE: set FILE's mtime clearly later than now, so an edit within
// the same clock tick is still seen as an edit.
// cmdTouchOld dates files a minute back, as files a killed command left.
func cmdTouchOld(ts *testscript.TestScript, neg bool, args []string) {
	for _, a := range args {
		t := time.Now().Add(-time.Minute)
		ts.Check(os.Chtimes(ts.MkAbs(a), t, t))
	}
}

func cmdTouchNew(ts *testscript.TestScript, neg bool, args []string) {
	for _, a := range args {
		t := time.Now().Add(2 * time.Second)
		ts.Check(os.Chtimes(ts.MkAbs(a), t, t))
	}
}

// cmakeAtLeast reports whether the cmake on PATH is major.minor or newer.
func cmakeAtLeast(major, minor int) bool {
	out, err := exec.Command("cmake", "--version").Output()
	if err != nil {
		return false
	}
	var ma, mi int
	if _, err := fmt.Sscanf(string(out), "cmake version %d.%d", &ma, &mi); err != nil {
		return false
	}
	return ma > major || ma == major && mi >= minor
}
