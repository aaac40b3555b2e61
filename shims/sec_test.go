package shims

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/cudaenv/cudaenv/internal/envdiff"
)

func TestKnownNamesNVIDIAsCommandsOnly(t *testing.T) {
	tests := []struct {
		desc, name, goos string
		want             bool
	}{
		{"the compiler driver", "nvcc", "linux", true},
		{"a compiler stage", "cudafe++", "linux", true},
		{"a demangler with plus signs", "cu++filt", "linux", true},
		{"a profiler", "nsys", "linux", true},
		{"cuda-gdb's per-Python variants, by prefix", "cuda-gdb-python3.12-tui", "linux", true},
		{"Nsight's launchers, by prefix", "nsight-sys", "linux", true},
		{"a Windows name in any case", "NVCC", "windows", true},
		{"a Linux name is case-sensitive", "NVCC", "linux", false},
		{"python from a linked conda env", "python3", "linux", false},
		{"a system command", "sudo", "linux", false},
		{"the driver's tool is not the toolkit's", "nvidia-smi", "linux", false},
		{"a prefix of a known name", "nvc", "linux", false},
		{"a name that merely starts like ncu", "ncurses6-config", "linux", false},
		{"a comment word", "#", "linux", false},
		{"nothing", "", "linux", false},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			if got := Known(tt.name, tt.goos); got != tt.want {
				t.Errorf("Known(%q, %s) = %v, want %v", tt.name, tt.goos, got, tt.want)
			}
		})
	}
}

// Every component commands.txt names is one of NVIDIA's, as the real
// manifests list them: the repository's copies of every CUDA manifest are
// the PyPI catalog's inputs (newer components, cuda_tileiras from 13.1,
// are in none of the few under testdata/).
func TestKnownCommandsComeFromManifestComponents(t *testing.T) {
	dir := filepath.Join("..", "fetch", "pypi", "catalog", "manifests")
	files, _ := filepath.Glob(filepath.Join(dir, "redistrib_*.json"))
	if len(files) == 0 {
		t.Fatal("no NVIDIA manifests in " + dir)
	}
	components := map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for k := range m {
			components[k] = true
		}
	}
	n := 0
	for _, line := range strings.Split(knownCommands, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		n++
		if len(f) != 2 {
			t.Errorf("commands.txt: %q: want NAME COMPONENT", line)
			continue
		}
		if f[1] != "-" && !components[f[1]] {
			t.Errorf("commands.txt: %s comes from %s, which no manifest has", f[0], f[1])
		}
	}
	if n < 20 {
		t.Errorf("commands.txt lists %d commands", n)
	}
}

// writeExecs makes empty executables called names in dir.
func writeExecs(t *testing.T, dir string, names ...string) {
	t.Helper()
	os.MkdirAll(dir, 0o755)
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\necho "+n+" from "+dir+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// A linked tree's bin is whatever the tree holds: a conda env's python3,
// /usr's ls and sudo. Only NVIDIA's commands, and names nothing else on the
// user's PATH has, get a shim; the rest stay the user's.
func TestRehashShimsOnlyToolkitCommands(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks and exec bits")
	}
	tree := filepath.Join(t.TempDir(), "conda env")
	writeExecs(t, filepath.Join(tree, "bin"), "nvcc", "ptxas", "python3", "ls", "sudo", "cuonly", "hookonly")
	st := fakeStore(t, map[string]string{
		"cuda/12.6.0/receipt.json": `{"kind":"cuda","source":"link","target":` + quoteJSON(tree) + `}`,
		"cuda/12.4.1/receipt.json": receipt,
		"cuda/12.4.1/bin/nvcc":     "",
		"cuda/12.4.1/bin/hookonly": "",
	})
	self := filepath.Join(t.TempDir(), "cudaenv-shim")
	os.WriteFile(self, nil, 0o755)
	sys := filepath.Join(t.TempDir(), "usr bin")
	writeExecs(t, sys, "python3", "ls", "sudo", "nvcc")
	noexec := filepath.Join(t.TempDir(), "noexec")
	os.MkdirAll(noexec, 0o755)
	os.WriteFile(filepath.Join(noexec, "cuonly"), nil, 0o644) // not a command
	// Earlier rehashes made shims for all of them.
	os.MkdirAll(st.Dirs.Shims(), 0o755)
	for _, n := range []string{"python3", "ls", "sudo"} {
		os.Symlink(self, filepath.Join(st.Dirs.Shims(), n))
	}
	userPath := strings.Join([]string{st.Dirs.Shims(), filepath.Join(st.Dirs.CUDA(), "12.4.1", "bin"), "relative", noexec, sys}, ":")

	rep, err := Rehash(st, self, "linux", userPath)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := readShims(t, st.Dirs.Shims()), []string{"cuonly", "hookonly", "nvcc", "ptxas"}; !reflect.DeepEqual(got, want) {
		t.Errorf("shims = %q, want %q", got, want)
	}
	if want := []string{"ls", "python3", "sudo"}; !reflect.DeepEqual(rep.Skipped, want) || !reflect.DeepEqual(rep.Removed, want) {
		t.Errorf("skipped %q, removed %q; want %q for both", rep.Skipped, rep.Removed, want)
	}
}

func TestUserPathTakesBackWhatCudaenvAdded(t *testing.T) {
	env := envdiff.Env{"PATH": "/home/u/bin:/usr/bin"}
	changes, _ := envdiff.Apply(env, envdiff.State{}, envdiff.Want{Prepend: map[string][]string{"PATH": {"/st/cuda/12.4.1/bin"}}, Set: map[string]string{"CUDA_PATH": "/st/cuda/12.4.1"}}, ":")
	env = envdiff.Result(env, changes)
	if env["PATH"] == "/home/u/bin:/usr/bin" {
		t.Fatal("the hook changed nothing")
	}
	if got := UserPath(env, "linux"); got != "/home/u/bin:/usr/bin" {
		t.Errorf("UserPath = %q", got)
	}
}

// A shim with nothing to run steps aside to the next command of its name
// on PATH, as if it were not there; a known command that the selected
// version lacks stays an error.
func TestResolveStepsAsideToPATH(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("exec bits")
	}
	st := fakeStore(t, map[string]string{
		"cuda/12.4.1/receipt.json": receipt,
		"cuda/12.4.1/bin/nvcc":     "",
		"cuda/12.4.1/bin/mine":     "",
		"cuda/12.4.1/bin/cuonly2":  "",
		"cuda/11.8.0/receipt.json": receipt,
		"cuda/11.8.0/bin/cuonly":   "",
		"cuda/11.8.0/bin/cuonly2":  "",
		"cuda/11.8.0/bin/ptxas":    "",
		"proj/.cuda-version":       "12.4\n",
		"none/keep":                "",
	})
	root := st.Dirs.Root
	sys := filepath.Join(t.TempDir(), "sys bin")
	writeExecs(t, sys, "nvcc", "cuonly", "ptxas", "mine")
	// The shims folder, and another folder whose nvcc is the shim binary,
	// are never stepped into.
	self, _ := os.Executable()
	other := filepath.Join(t.TempDir(), "other")
	os.MkdirAll(other, 0o755)
	os.Symlink(self, filepath.Join(other, "nvcc"))
	writeExecs(t, st.Dirs.Shims(), "nvcc")
	path := "PATH=" + st.Dirs.Shims() + ":" + other + ":" + filepath.Join(root, "cuda", "11.8.0", "bin") + ":" + sys

	tests := []struct {
		desc, name, dir string
		want            string // the target, or "" for an error
	}{
		{"nothing selected runs the next nvcc on PATH", "nvcc", "none", filepath.Join(sys, "nvcc")},
		{"nothing selected runs any other name too", "cuonly", "none", filepath.Join(sys, "cuonly")},
		{"a selection runs its own nvcc", "nvcc", "proj", filepath.Join(root, "cuda", "12.4.1", "bin", "nvcc")},
		{"a selection without a name that is not NVIDIA's steps aside", "cuonly", "proj", filepath.Join(sys, "cuonly")},
		{"a selection without a known command is an error", "ptxas", "proj", ""},
		{"a name that is not NVIDIA's stays the user's even where the selection has it", "mine", "proj", filepath.Join(sys, "mine")},
		{"a name that is not NVIDIA's, on PATH only in the store, runs the selection's", "cuonly2", "proj", filepath.Join(root, "cuda", "12.4.1", "bin", "cuonly2")},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			tg, err := call(t, st, tt.name, filepath.Join(root, tt.dir), path)
			if tt.want == "" {
				var nf *NotFoundError
				if !errors.As(err, &nf) || !strings.HasPrefix(err.Error(), tt.name+": not in CUDA 12.4.1") {
					t.Errorf("got %+v, %v; want not found", tg, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tg.Path != tt.want || !reflect.DeepEqual(tg.Args, []string{tt.want, "-x", "y z"}) {
				t.Errorf("target %+v, want %s", tg, tt.want)
			}
			if env := envMap(tg); strings.Contains(env["PATH"], st.Dirs.Shims()) {
				t.Errorf("PATH keeps the shims: %q", env["PATH"])
			}
		})
	}
	if _, err := call(t, st, "nvcc", filepath.Join(root, "none"), "PATH="+st.Dirs.Shims()+":"+other); !errors.Is(err, ErrNothingSelected) {
		t.Errorf("nothing selected and no nvcc on PATH: %v", err)
	}
}

// A toolkit whose command is the shim (a symlink to it, or to the shim
// binary) would start the shim again, forever: Resolve refuses it.
func TestResolveRefusesAShimAsTheCommand(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks")
	}
	self, _ := os.Executable()
	st := fakeStore(t, map[string]string{
		"cuda/12.4.1/receipt.json": receipt,
		"cuda/12.6.0/receipt.json": receipt,
		"cuda/12.6.0/bin/keep":     "",
		"p124/.cuda-version":       "12.4\n",
		"p126/.cuda-version":       "12.6\n",
	})
	root := st.Dirs.Root
	shimBin := filepath.Join(t.TempDir(), "cudaenv-shim")
	os.WriteFile(shimBin, nil, 0o755)
	os.MkdirAll(st.Dirs.Shims(), 0o755)
	os.Symlink(shimBin, filepath.Join(st.Dirs.Shims(), "nvcc"))
	os.MkdirAll(filepath.Join(root, "cuda", "12.4.1", "bin"), 0o755)
	os.Symlink(filepath.Join(st.Dirs.Shims(), "nvcc"), filepath.Join(root, "cuda", "12.4.1", "bin", "nvcc"))
	os.Symlink(self, filepath.Join(root, "cuda", "12.6.0", "bin", "nvcc"))
	for _, dir := range []string{"p124", "p126"} {
		_, err := call(t, st, "nvcc", filepath.Join(root, dir))
		var le *LoopError
		if !errors.As(err, &le) || !strings.Contains(err.Error(), "is a cudaenv shim, not the real command, and would start this shim again; reinstall or relink that toolkit") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v", dir, err)
		}
	}
}

func TestCheckLoop(t *testing.T) {
	tests := []struct {
		desc      string
		mark      string
		goos      string
		wantDepth int
		wantLoop  bool
	}{
		{"no mark is a first call", "", "linux", 0, false},
		{"a mark from another process is a nested call", "77:1:/t/nsys", "linux", 1, false},
		{"this very process marked it: the shim became itself", "42:1:/t/nvcc", "linux", 1, true},
		{"on Windows the parent marked it: the shim ran itself", "7:1:/t/nvcc", "windows", 1, true},
		{"on Windows the process id is not the parent's", "42:1:/t/nvcc", "windows", 1, false},
		{"too many shims inside one another", "77:16:/t/nvcc", "linux", 16, true},
		{"a mark that is not ours is ignored", "x:y", "linux", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			environ := []string{"A=b"}
			if tt.mark != "" {
				environ = append(environ, LoopVar+"="+tt.mark)
			}
			depth, loop := checkLoop(environ, 42, 7, tt.goos)
			if depth != tt.wantDepth || (loop != "") != tt.wantLoop || strings.Contains(loop, "\n") {
				t.Errorf("checkLoop = %d, %q", depth, loop)
			}
		})
	}
	env := setVar([]string{"A=b", LoopVar + "=1:1:x", "C=d"}, LoopVar, loopMark(5, 2, "/p"))
	if want := []string{"A=b", "C=d", LoopVar + "=5:2:/p"}; !reflect.DeepEqual(env, want) {
		t.Errorf("setVar = %q", env)
	}
}
