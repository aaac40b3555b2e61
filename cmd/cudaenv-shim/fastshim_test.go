//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cudaenv/cudaenv/internal/testwait"
)

// fastShimBinaries builds cudaenv-shim and the C fast shim into dir (both
// side by side), and the fast shim alone into dir/alone, where it has no
// cudaenv-shim to fall back on.
func fastShimBinaries(t testing.TB) (dir string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the fast shim is for Linux")
	}
	goCmd := goTool(t)
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler")
	}
	dir = filepath.Join(t.TempDir(), `bin with "quotes" and $x`)
	if err := os.MkdirAll(filepath.Join(dir, "alone"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(goCmd, "build", "-o", filepath.Join(dir, "cudaenv-shim"), ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	src := filepath.Join(moduleRoot(t), "shims", "fastshim", "fastshim.c")
	// CUDAENV_FASTSHIM_CFLAGS adds flags, e.g. -fsanitize=address,undefined.
	flags := append([]string{"-O2", "-Wall", "-Wextra", "-Werror"}, strings.Fields(os.Getenv("CUDAENV_FASTSHIM_CFLAGS"))...)
	for _, out := range []string{filepath.Join(dir, "cudaenv-fastshim"), filepath.Join(dir, "alone", "cudaenv-fastshim")} {
		if b, err := exec.Command(cc, append(flags, "-o", out, src)...).CombinedOutput(); err != nil {
			t.Fatalf("cc: %v\n%s", err, b)
		}
	}
	return dir
}

type shimRun struct {
	code           int
	stdout, stderr string
}

// runAs runs binary under the name argv0 (a symlink to it named so), in
// dir, with exactly env: no entry is added, merged or removed.
func runAs(t *testing.T, binary, argv0 string, args []string, dir string, env []string) shimRun {
	t.Helper()
	link := filepath.Join(t.TempDir(), argv0)
	if err := os.Symlink(binary, link); err != nil {
		t.Fatal(err)
	}
	outF, _ := os.CreateTemp(t.TempDir(), "out")
	errF, _ := os.CreateTemp(t.TempDir(), "err")
	devnull, _ := os.Open(os.DevNull)
	defer devnull.Close()
	p, err := os.StartProcess(link, append([]string{link}, args...), &os.ProcAttr{Dir: dir, Env: env, Files: []*os.File{devnull, outF, errF}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := p.Wait()
	if err != nil {
		t.Fatal(err)
	}
	out, _ := os.ReadFile(outF.Name())
	errOut, _ := os.ReadFile(errF.Name())
	outF.Close()
	errF.Close()
	return shimRun{code: st.Sys().(syscall.WaitStatus).ExitStatus(), stdout: normalize(string(out), link), stderr: strings.ReplaceAll(string(errOut), link, "SHIM")}
}

var loopMarkPID = regexp.MustCompile(`__CUDAENV_SHIM=[0-9]+:`)

// normalize makes two runs comparable: the report's environment sorted,
// the shim's process id and path taken out.
func normalize(out, link string) string {
	args, env, ok := strings.Cut(out, "\x01")
	if !ok {
		return out
	}
	vars := strings.Split(strings.TrimSuffix(env, "\x00"), "\x00")
	sort.Strings(vars)
	s := args + "\n" + strings.Join(vars, "\n")
	s = loopMarkPID.ReplaceAllString(s, "__CUDAENV_SHIM=PID:")
	return strings.ReplaceAll(s, link, "SHIM")
}

// The C fast shim runs the same command, with the same arguments and in
// the same environment, as cudaenv-shim: on the cases it handles itself
// (shown by running it where it has no cudaenv-shim to fall back on), and
// on the rest, which it hands to cudaenv-shim (where, alone, it fails).
// Hostile and odd inputs are among the cases: they must all fall back.
func TestFastShimDoesWhatCudaenvShimDoes(t *testing.T) {
	bin := fastShimBinaries(t)
	goShim, fast, alone := filepath.Join(bin, "cudaenv-shim"), filepath.Join(bin, "cudaenv-fastshim"), filepath.Join(bin, "alone", "cudaenv-fastshim")

	// The command each toolkit runs reports its arguments and environment.
	report := "#!/bin/sh\nprintf '%s\\n' \"$0\" \"$@\"; printf '\\001'; exec /usr/bin/env -0\n"

	type setup struct {
		t    *testing.T
		root string // the store
		home string
		proj string // the project, four folders above the working directory
		cwd  string
		env  map[string]string
	}
	write := func(s *setup, path, text string) {
		s.t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			s.t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
			s.t.Fatal(err)
		}
	}
	toolkit := func(s *setup, v string, cmds []string, lib string, receipt string) {
		d := filepath.Join(s.root, "cuda", v)
		for _, c := range cmds {
			write(s, filepath.Join(d, "bin", c), report)
		}
		if err := os.MkdirAll(filepath.Join(d, lib), 0o755); err != nil {
			s.t.Fatal(err)
		}
		if receipt != "" {
			write(s, filepath.Join(d, "receipt.json"), receipt)
		}
	}
	receipt := func(v string) string {
		return `{"kind":"cuda","version":"` + v + `","source":"nvidia","platform":"linux-x86_64","profile":"default","components":[]}` + "\n"
	}
	// tree is a toolkit outside the store, to link.
	tree := func(s *setup, dir string, cmds []string, lib string) string {
		for _, c := range cmds {
			write(s, filepath.Join(dir, "bin", c), report)
		}
		if err := os.MkdirAll(filepath.Join(dir, lib), 0o755); err != nil {
			s.t.Fatal(err)
		}
		return dir
	}
	// link adopts target as CUDA v the way cudaenv link does (the store's
	// own code writes the receipt), into the store at root.
	link := func(s *setup, root, v, target string) {
		s.t.Helper()
		cmd := exec.Command(cudaenvBinary(s.t), "link", "--as", v, target)
		cmd.Env = append(os.Environ(), "CUDAENV_ROOT="+root, "CUDAENV_CONFIG_DIR="+filepath.Join(root, "..", "link-config"), "HOME="+s.home)
		if out, err := cmd.CombinedOutput(); err != nil {
			s.t.Fatalf("cudaenv link --as %s %s: %v\n%s", v, target, err, out)
		}
	}
	// linkReceipt is a hand-written receipt.json for a linked 12.7.0, its
	// fields as given (JSON text).
	linkReceipt := func(s *setup, fields string) {
		write(s, filepath.Join(s.root, "cuda", "12.7.0", "receipt.json"), "{"+fields+"}\n")
		write(s, filepath.Join(s.proj, ".cuda-version"), "12.7")
	}
	// q is a path as JSON writes it; the hand-written receipts name
	// toolkits made with tree.
	q := func(p string) string { b, _ := json.Marshal(p); return string(b) }
	const linked = `"kind":"cuda","version":"12.7.0","source":"link",`

	tests := []struct {
		name  string
		cmd   string
		args  []string
		setup func(s *setup)
		fast  bool // the fast shim answers alone
		// alone, the fast shim has no cudaenv-shim to know of: the
		// handover cannot be shown by running it so
		noAlone bool
		// want, when set, is checked against what cudaenv-shim ran
		want func(t *testing.T, stdout string)
	}{
		{name: "a .cuda-version four folders up", cmd: "nvcc", fast: true,
			setup: func(s *setup) { write(s, filepath.Join(s.proj, ".cuda-version"), "12.4\n") }},
		{name: "CUDAENV_VERSION outranks the files", cmd: "nvcc", fast: true,
			setup: func(s *setup) {
				write(s, filepath.Join(s.proj, ".cuda-version"), "12.4\n")
				s.env["CUDAENV_VERSION"] = " 11.8 "
			}},
		{name: "the global default, with nothing in the project", cmd: "nvcc", fast: true,
			setup: func(s *setup) { write(s, filepath.Join(s.env["CUDAENV_CONFIG_DIR"], "version"), "11\n") }},
		{name: "a byte order mark, CRLF, comments and cuda@", cmd: "ptxas", fast: true,
			setup: func(s *setup) {
				write(s, filepath.Join(s.proj, ".cuda-version"), "\xef\xbb\xbf# the project's CUDA\r\nCUDA@12 # newest 12\r\n")
			}},
		{name: "latest", cmd: "nvcc", fast: true,
			setup: func(s *setup) { write(s, filepath.Join(s.proj, ".cuda-version"), "latest") }},
		{name: "an empty .cuda-version below the one that selects", cmd: "nvcc", fast: true,
			setup: func(s *setup) {
				write(s, filepath.Join(s.proj, ".cuda-version"), "12.6\n")
				write(s, filepath.Join(s.cwd, "..", ".cuda-version"), "# nothing here\n")
			}},
		{name: "a PWD that ends in .., leaving a folder with its own pin", cmd: "nvcc", fast: true,
			setup: func(s *setup) {
				write(s, filepath.Join(s.proj, ".cuda-version"), "12.4")
				write(s, filepath.Join(s.cwd, "left", ".cuda-version"), "11.8")
				s.env["PWD"] = s.cwd + "/left/.."
			}},
		{name: "arguments with spaces, quotes and $ pass as they are", cmd: "nvcc", fast: true,
			args:  []string{"-o", "a b", `"q"`, "$HOME", "", "--x='y'"},
			setup: func(s *setup) { write(s, filepath.Join(s.proj, ".cuda-version"), "12.4") }},
		{name: "the shims folder leaves PATH, however spelt", cmd: "nvcc", fast: true,
			setup: func(s *setup) {
				write(s, filepath.Join(s.proj, ".cuda-version"), "12.4")
				shims := filepath.Join(s.root, "shims")
				s.env["PATH"] = shims + "/:/usr/bin:" + filepath.Dir(shims) + "//shims/.:/bin::rel/dir:" + shims
			}},
		{name: "earlier values of the variables it sets are recorded", cmd: "nvcc", fast: true,
			setup: func(s *setup) {
				write(s, filepath.Join(s.proj, ".cuda-version"), "12.4")
				s.env["CUDA_HOME"] = "/usr/local/cuda"
				s.env["CUDACXX"] = ""
				s.env["LD_LIBRARY_PATH"] = "/opt/lib"
			}},
		{name: "no PATH at all", cmd: "nvcc", fast: true,
			setup: func(s *setup) {
				write(s, filepath.Join(s.proj, ".cuda-version"), "12.4")
				delete(s.env, "PATH")
			}},
		{name: "a toolkit without nvcc and with lib, not lib64", cmd: "cuobjdump", fast: true,
			setup: func(s *setup) {
				toolkit(s, "12.8.0", []string{"cuobjdump"}, "lib", receipt("12.8.0"))
				write(s, filepath.Join(s.proj, ".cuda-version"), "12.8")
				s.env["CUDACXX"] = "/usr/bin/nvcc"
			}},
		{name: "the newest patch that has a receipt", cmd: "nvcc", fast: true,
			setup: func(s *setup) {
				toolkit(s, "12.4.9", []string{"nvcc"}, "lib64", "") // half installed
				write(s, filepath.Join(s.proj, ".cuda-version"), "12.4")
			}},
		{name: "a nsight prefix command", cmd: "nsight-sys", fast: true,
			setup: func(s *setup) {
				toolkit(s, "12.9.1", []string{"nsight-sys", "nvcc"}, "lib64", receipt("12.9.1"))
				write(s, filepath.Join(s.proj, ".cuda-version"), "12.9")
			}},

		{name: "a .tool-versions cuda line on the way", cmd: "nvcc", fast: true,
			setup: func(s *setup) {
				write(s, filepath.Join(s.proj, ".cuda-version"), "12.4")
				write(s, filepath.Join(s.cwd, ".tool-versions"), "\xef\xbb\xbfnodejs 20.1.0\r\n# CUDA\ncuda 11.8 12.4 # the first one counts\ncuda\npython 3.12\n")
			}},
		{name: "a .tool-versions of other tools only, below the pin", cmd: "nvcc", fast: true,
			setup: func(s *setup) {
				write(s, filepath.Join(s.proj, ".cuda-version"), "12.6")
				write(s, filepath.Join(s.cwd, ".tool-versions"), "nodejs 20.1.0\ncudnn\npython 3.12 # cuda 11.8\n")
			}},
		{name: "a .tool-versions with a cudnn line", cmd: "nvcc",
			setup: func(s *setup) { write(s, filepath.Join(s.cwd, ".tool-versions"), "cuda 12.4\ncudnn 9.5\n") }},
		{name: "a .tool-versions with an nccl line", cmd: "nvcc",
			setup: func(s *setup) { write(s, filepath.Join(s.cwd, ".tool-versions"), "cuda 12.4\nnccl 2.30\n") }},
		{name: "a .tool-versions with a cusparselt line before cuda", cmd: "nvcc",
			setup: func(s *setup) { write(s, filepath.Join(s.cwd, ".tool-versions"), "cusparselt 0.8\ncuda 12.4\n") }},
		{name: "a .tool-versions with two cuda lines", cmd: "nvcc",
			setup: func(s *setup) { write(s, filepath.Join(s.cwd, ".tool-versions"), "cuda 12.4\ncuda 11.8\n") }},
		{name: "a .tool-versions that says system", cmd: "nvcc",
			setup: func(s *setup) { write(s, filepath.Join(s.cwd, ".tool-versions"), "cuda system\n") }},
		{name: "a .tool-versions with an asdf ref", cmd: "nvcc",
			setup: func(s *setup) { write(s, filepath.Join(s.cwd, ".tool-versions"), "cuda ref:v12.4\n") }},
		{name: "a .tool-versions over 64 KiB", cmd: "nvcc",
			setup: func(s *setup) {
				write(s, filepath.Join(s.proj, ".cuda-version"), "12.4")
				write(s, filepath.Join(s.cwd, ".tool-versions"), strings.Repeat("nodejs 20.1.0\n", 5000)+"cuda 11.8\n")
			}},
		{name: "a lock beside the .cuda-version", cmd: "nvcc",
			setup: func(s *setup) {
				write(s, filepath.Join(s.proj, ".cuda-version"), "12.4")
				write(s, filepath.Join(s.proj, ".cuda-version.lock"), "not a lock\n")
			}},
		{name: "a .cuda-version that is a link to another file", cmd: "nvcc",
			setup: func(s *setup) {
				write(s, filepath.Join(s.home, "secret"), "hunter2\n")
				if err := os.Symlink(filepath.Join(s.home, "secret"), filepath.Join(s.proj, ".cuda-version")); err != nil {
					s.t.Fatal(err)
				}
			}},
		{name: "a .cuda-version that is a named pipe", cmd: "nvcc",
			setup: func(s *setup) {
				write(s, filepath.Join(s.env["CUDAENV_CONFIG_DIR"], "version"), "11.8")
				if err := syscall.Mkfifo(filepath.Join(s.proj, ".cuda-version"), 0o644); err != nil {
					s.t.Fatal(err)
				}
			}},
		{name: "a .cuda-version that is a folder", cmd: "nvcc",
			setup: func(s *setup) {
				write(s, filepath.Join(s.proj, ".cuda-version", "x"), "12.4")
			}},
		{name: "a .cuda-version larger than 1 KiB", cmd: "nvcc",
			setup: func(s *setup) {
				write(s, filepath.Join(s.proj, ".cuda-version"), "12.4"+strings.Repeat(" ", 1100))
			}},
		{name: "a .cuda-version that names a path", cmd: "nvcc",
			setup: func(s *setup) { write(s, filepath.Join(s.proj, ".cuda-version"), "../../../etc/passwd\n") }},
		{name: "a .cuda-version with a NUL byte and an escape sequence", cmd: "nvcc",
			setup: func(s *setup) { write(s, filepath.Join(s.proj, ".cuda-version"), "12.4\x00\x1b[31m\n") }},
		{name: "a .cuda-version with a version part of ten digits", cmd: "nvcc",
			setup: func(s *setup) { write(s, filepath.Join(s.proj, ".cuda-version"), "12.4000000000\n") }},
		{name: "a .cuda-version with non-ASCII text", cmd: "nvcc",
			setup: func(s *setup) { write(s, filepath.Join(s.proj, ".cuda-version"), "12.4\u00a0\n") }},
		// libraries=off: C does not know the setting, so it hands the
		// call on; cudaenv-shim leaves LD_LIBRARY_PATH alone.
		{name: "a .cuda-version with libraries=off", cmd: "nvcc", want: noStoreLibs,
			setup: func(s *setup) {
				write(s, filepath.Join(s.proj, ".cuda-version"), "12.4 libraries=off\n")
				s.env["LD_LIBRARY_PATH"] = "/opt/lib"
			}},
		{name: "libraries=off on a line before the version", cmd: "nvcc", want: noStoreLibs,
			setup: func(s *setup) { write(s, filepath.Join(s.proj, ".cuda-version"), "libraries=off\n12.4\n") }},
		{name: "CUDAENV_VERSION with libraries=off", cmd: "nvcc", want: noStoreLibs,
			setup: func(s *setup) { s.env["CUDAENV_VERSION"] = "12.4 LIBRARIES=OFF" }},
		{name: "a .cuda-version with libraries=on", cmd: "nvcc",
			setup: func(s *setup) { write(s, filepath.Join(s.proj, ".cuda-version"), "12.4 libraries=on\n") }},
		{name: "a .cuda-version with libraries=off alone", cmd: "nvcc",
			setup: func(s *setup) { write(s, filepath.Join(s.proj, ".cuda-version"), "libraries=off\n") }},
		{name: "CUDA and cuDNN", cmd: "nvcc",
			setup: func(s *setup) { write(s, filepath.Join(s.proj, ".cuda-version"), "12.4 cudnn@9.5\n") }},
		{name: "CUDA and NCCL", cmd: "nvcc",
			setup: func(s *setup) { write(s, filepath.Join(s.proj, ".cuda-version"), "12.4 nccl@2.30\n") }},
		{name: "NCCL alone", cmd: "nvcc",
			setup: func(s *setup) { write(s, filepath.Join(s.proj, ".cuda-version"), "nccl@2.30\n") }},
		{name: "system", cmd: "nvcc",
			setup: func(s *setup) { write(s, filepath.Join(s.proj, ".cuda-version"), "system\n") }},
		{name: "nothing selected", cmd: "nvcc", setup: func(s *setup) {}},
		{name: "a version that is not installed", cmd: "nvcc",
			setup: func(s *setup) { write(s, filepath.Join(s.proj, ".cuda-version"), "10.2\n") }},
		{name: "a command the toolkit lacks", cmd: "nsys",
			setup: func(s *setup) { write(s, filepath.Join(s.proj, ".cuda-version"), "12.4\n") }},
		{name: "a command that is not NVIDIA's", cmd: "python3",
			setup: func(s *setup) { write(s, filepath.Join(s.proj, ".cuda-version"), "12.4\n") }},
		{name: "a prompt hook's state in the environment", cmd: "nvcc",
			setup: func(s *setup) {
				write(s, filepath.Join(s.proj, ".cuda-version"), "12.4")
				s.env["__CUDAENV_STATE"] = `{"v":2,"scalars":{"CUDA_HOME":{"value":"/x"}},"active":"11.8.0"}`
				s.env["CUDA_HOME"] = "/x"
			}},
		{name: "a shim inside a shim", cmd: "nvcc",
			setup: func(s *setup) {
				write(s, filepath.Join(s.proj, ".cuda-version"), "12.4")
				s.env["__CUDAENV_SHIM"] = "1:1:/somewhere/nvcc"
			}},
		{name: "a value the state escapes", cmd: "nvcc", fast: true,
			setup: func(s *setup) {
				write(s, filepath.Join(s.proj, ".cuda-version"), "12.4")
				s.env["CUDA_PATH"] = "/opt/100%/cuda<&>\\\"'"
				s.env["CUDA_HOME"] = "a\tb\nc\x01\x7f"
			}},
		{name: "a value that is not UTF-8", cmd: "nvcc",
			setup: func(s *setup) {
				write(s, filepath.Join(s.proj, ".cuda-version"), "12.4")
				s.env["CUDA_PATH"] = "/opt/ç\xff"
			}},
		{name: "a value holding U+2028, which JSON escapes", cmd: "nvcc",
			setup: func(s *setup) {
				write(s, filepath.Join(s.proj, ".cuda-version"), "12.4")
				s.env["CUDA_PATH"] = "/opt/a\u2028b"
			}},
		{name: "a store, a home and values whose names are not ASCII", cmd: "nvcc", fast: true,
			setup: func(s *setup) {
				s.root = filepath.Join(filepath.Dir(s.root), "störe ☃ 𝄞")
				toolkit(s, "12.4.1", []string{"nvcc"}, "lib64", receipt("12.4.1"))
				s.env["CUDAENV_ROOT"] = s.root
				s.env["HOME"] = s.home + "/ĥome"
				s.env["CUDA_HOME"] = "/opt/çüda % 100"
				write(s, filepath.Join(s.proj, ".cuda-version"), "12.4")
			}},
		{name: "a CUDAENV_ROOT that is not UTF-8", cmd: "nvcc",
			setup: func(s *setup) {
				s.root = filepath.Join(filepath.Dir(s.root), "st\xc3\x28re")
				toolkit(s, "12.4.1", []string{"nvcc"}, "lib64", receipt("12.4.1"))
				s.env["CUDAENV_ROOT"] = s.root
				write(s, filepath.Join(s.proj, ".cuda-version"), "12.4")
			}},
		{name: "a relative CUDAENV_ROOT", cmd: "nvcc",
			setup: func(s *setup) {
				write(s, filepath.Join(s.proj, ".cuda-version"), "12.4")
				s.env["CUDAENV_ROOT"] = "rel/store"
			}},
		{name: "a CUDAENV_CACHE_DIR with a control character", cmd: "nvcc",
			setup: func(s *setup) {
				write(s, filepath.Join(s.proj, ".cuda-version"), "12.4")
				s.env["CUDAENV_CACHE_DIR"] = "/tmp/x\x1by"
			}},
		{name: "a settings file", cmd: "nvcc",
			setup: func(s *setup) {
				write(s, filepath.Join(s.proj, ".cuda-version"), "12.4")
				write(s, filepath.Join(s.env["CUDAENV_CONFIG_DIR"], "config"), "source = pypi\n")
			}},
		{name: "a system store", cmd: "nvcc",
			setup: func(s *setup) {
				write(s, filepath.Join(s.proj, ".cuda-version"), "12.4")
				s.env["CUDAENV_SYSTEM_ROOT"] = filepath.Join(s.home, "system")
			}},
		{name: "a toolkit whose command is a link to a shim", cmd: "nvcc",
			setup: func(s *setup) {
				toolkit(s, "12.5.0", nil, "lib64", receipt("12.5.0"))
				if err := os.MkdirAll(filepath.Join(s.root, "cuda", "12.5.0", "bin"), 0o755); err != nil {
					s.t.Fatal(err)
				}
				shim := filepath.Join(s.root, "shims", "nvcc")
				if err := os.MkdirAll(filepath.Dir(shim), 0o755); err != nil {
					s.t.Fatal(err)
				}
				if err := os.Symlink(fast, shim); err != nil {
					s.t.Fatal(err)
				}
				if err := os.Symlink(shim, filepath.Join(s.root, "cuda", "12.5.0", "bin", "nvcc")); err != nil {
					s.t.Fatal(err)
				}
				write(s, filepath.Join(s.proj, ".cuda-version"), "12.5")
			}},
		{name: "a toolkit whose command is a link to cudaenv-shim", cmd: "nvcc", noAlone: true,
			setup: func(s *setup) {
				toolkit(s, "12.5.0", nil, "lib64", receipt("12.5.0"))
				os.MkdirAll(filepath.Join(s.root, "cuda", "12.5.0", "bin"), 0o755)
				if err := os.Symlink(goShim, filepath.Join(s.root, "cuda", "12.5.0", "bin", "nvcc")); err != nil {
					s.t.Fatal(err)
				}
				write(s, filepath.Join(s.proj, ".cuda-version"), "12.5")
			}},
		{name: "a version part of 24 digits", cmd: "nvcc",
			setup: func(s *setup) { s.env["CUDAENV_VERSION"] = "123456789012345678901234" }},
		{name: "a receipt over 256 KiB", cmd: "nvcc",
			setup: func(s *setup) {
				toolkit(s, "12.7.0", []string{"nvcc"}, "lib64", `{"kind":"cuda","version":"12.7.0","pad":"`+strings.Repeat("x", 300<<10)+`"}`)
				write(s, filepath.Join(s.proj, ".cuda-version"), "12.7")
			}},
		{name: "a linked toolkit", cmd: "nvcc",
			setup: func(s *setup) {
				toolkit(s, "12.7.0", []string{"nvcc"}, "lib64", `{"kind":"cuda","version":"12.7.0","link":"/opt/cuda-12.7"}`)
				write(s, filepath.Join(s.proj, ".cuda-version"), "12.7")
			}},
		// store.InstalledReceipt: damage (list and doctor say so), not
		// breakage, so both shims run it without decoding the receipt.
		{name: "a receipt with a wrongly typed field", cmd: "nvcc", fast: true,
			setup: func(s *setup) {
				toolkit(s, "12.7.0", []string{"nvcc"}, "lib64", `{"kind":"cuda","version":"12.7.0","installed_bytes":"lots"}`)
				write(s, filepath.Join(s.proj, ".cuda-version"), "12.7")
			}},
		{name: "a linked toolkit whose path holds a ':'", cmd: "nvcc",
			setup: func(s *setup) {
				toolkit(s, "12.7.0", []string{"nvcc"}, "lib64", `{"kind":"cuda","version":"12.7.0","source":"link","target":`+q(s.home+"/cuda:.")+`}`)
				write(s, filepath.Join(s.proj, ".cuda-version"), "12.7")
			}},
		// Linked toolkits (cudaenv link): the fast path runs them too,
		// from the linked tree, whenever the receipt is one link writes
		// and its target is a directory cudaenv-shim would use.
		{name: "a linked toolkit whose path has spaces, quotes, $, & and é", cmd: "nvcc", fast: true,
			setup: func(s *setup) {
				link(s, s.root, "12.7.0", tree(s, filepath.Join(s.home, `opt/cuda "12.7" $x & <é>`), []string{"nvcc", "ptxas"}, "lib64"))
				write(s, filepath.Join(s.proj, ".cuda-version"), "12.7")
				s.env["CUDA_HOME"] = "/usr/local/cuda"
			}},
		{name: "a linked toolkit without nvcc and with lib, not lib64", cmd: "cuobjdump", fast: true,
			setup: func(s *setup) {
				link(s, s.root, "12.8.0", tree(s, filepath.Join(s.home, "conda env"), []string{"cuobjdump"}, "lib"))
				write(s, filepath.Join(s.proj, ".cuda-version"), "12.8")
				s.env["CUDACXX"] = "/usr/bin/nvcc"
			}},
		{name: "a linked toolkit reached through a symbolic link, as link advises for a ':'", cmd: "nvcc", fast: true,
			setup: func(s *setup) {
				real := tree(s, filepath.Join(s.home, "a:b"), []string{"nvcc"}, "lib64")
				if err := os.Symlink(real, filepath.Join(s.home, "plain")); err != nil {
					s.t.Fatal(err)
				}
				link(s, s.root, "12.7.0", filepath.Join(s.home, "plain"))
				write(s, filepath.Join(s.proj, ".cuda-version"), "12.7")
			}},
		{name: "a hand-written link receipt with escapes, white space and a fraction of a second", cmd: "nvcc", fast: true,
			setup: func(s *setup) {
				tree(s, filepath.Join(s.home, `opt/"t"\&é`), []string{"nvcc"}, "lib64")
				linkReceipt(s, "\r\n\t"+linked+` "target" : "`+strings.ReplaceAll(s.home, `"`, `\"`)+`\/opt\/\"t\"\\\u0026\u00e9" ,`+
					`"cuda_major":0,"installed_bytes":123,"installed":"2024-02-29T23:59:59.123456789Z"`)
			}},
		{name: "the newest patch a linked toolkit, an installed one below", cmd: "nvcc", fast: true,
			setup: func(s *setup) {
				link(s, s.root, "12.4.9", tree(s, filepath.Join(s.home, "opt", "cuda-12.4"), []string{"nvcc"}, "lib64"))
				write(s, filepath.Join(s.proj, ".cuda-version"), "12.4")
			}},
		{name: "a linked toolkit whose target is gone", cmd: "nvcc",
			setup: func(s *setup) {
				target := tree(s, filepath.Join(s.home, "opt", "gone"), []string{"nvcc"}, "lib64")
				link(s, s.root, "12.7.0", target)
				if err := os.RemoveAll(target); err != nil {
					s.t.Fatal(err)
				}
				write(s, filepath.Join(s.proj, ".cuda-version"), "12.7")
			}},
		{name: "a linked toolkit whose target is now a file", cmd: "nvcc",
			setup: func(s *setup) {
				target := tree(s, filepath.Join(s.home, "opt", "t"), []string{"nvcc"}, "lib64")
				link(s, s.root, "12.7.0", target)
				os.RemoveAll(target)
				write(s, target, report)
				write(s, filepath.Join(s.proj, ".cuda-version"), "12.7")
			}},
		{name: "a linked toolkit that lacks the command", cmd: "nsys",
			setup: func(s *setup) {
				link(s, s.root, "12.7.0", tree(s, filepath.Join(s.home, "opt", "t"), []string{"nvcc"}, "lib64"))
				write(s, filepath.Join(s.proj, ".cuda-version"), "12.7")
			}},
		{name: "a link receipt whose target is not a string", cmd: "nvcc",
			setup: func(s *setup) { linkReceipt(s, linked+`"target":[`+q(s.home+"/opt/t")+`]`) }},
		{name: "a link receipt whose target is null", cmd: "nvcc",
			setup: func(s *setup) { linkReceipt(s, linked+`"target":null`) }},
		{name: "a link receipt whose version is a number", cmd: "nvcc",
			setup: func(s *setup) {
				tree(s, filepath.Join(s.home, "opt", "t"), []string{"nvcc"}, "lib64")
				linkReceipt(s, `"kind":"cuda","version":12.7,"source":"link","target":`+q(s.home+"/opt/t"))
			}},
		{name: "a link receipt whose installed_bytes is negative", cmd: "nvcc",
			setup: func(s *setup) {
				tree(s, filepath.Join(s.home, "opt", "t"), []string{"nvcc"}, "lib64")
				linkReceipt(s, linked+`"installed_bytes":-1,"target":`+q(s.home+"/opt/t"))
			}},
		{name: "a link receipt whose time is February 30th", cmd: "nvcc",
			setup: func(s *setup) {
				tree(s, filepath.Join(s.home, "opt", "t"), []string{"nvcc"}, "lib64")
				linkReceipt(s, linked+`"installed":"2026-02-30T00:00:00Z","target":`+q(s.home+"/opt/t"))
			}},
		{name: "a link receipt whose time has an offset", cmd: "nvcc",
			setup: func(s *setup) {
				tree(s, filepath.Join(s.home, "opt", "t"), []string{"nvcc"}, "lib64")
				linkReceipt(s, linked+`"installed":"2026-01-02T03:04:05+01:00","target":`+q(s.home+"/opt/t"))
			}},
		{name: "a link receipt whose target holds a ':' and is there", cmd: "nvcc",
			setup: func(s *setup) {
				tree(s, filepath.Join(s.home, "a:b"), []string{"nvcc"}, "lib64")
				linkReceipt(s, linked+`"target":`+q(s.home+"/a:b"))
			}},
		{name: "a link receipt whose target holds a newline", cmd: "nvcc",
			setup: func(s *setup) {
				tree(s, filepath.Join(s.home, "x\nLD_PRELOAD=evil"), []string{"nvcc"}, "lib64")
				linkReceipt(s, linked+`"target":`+q(s.home+"/x\nLD_PRELOAD=evil"))
			}},
		{name: "a link receipt whose target is relative", cmd: "nvcc",
			setup: func(s *setup) {
				tree(s, filepath.Join(s.cwd, "opt", "t"), []string{"nvcc"}, "lib64")
				linkReceipt(s, linked+`"target":"opt/t"`)
			}},
		{name: "a link receipt whose target is not clean", cmd: "nvcc",
			setup: func(s *setup) {
				tree(s, filepath.Join(s.home, "opt", "t"), []string{"nvcc"}, "lib64")
				linkReceipt(s, linked+`"target":`+q(s.home+"/opt/./t/"))
			}},
		{name: "a link receipt whose target is not UTF-8", cmd: "nvcc",
			setup: func(s *setup) {
				tree(s, filepath.Join(s.home, "opt", "t\xff"), []string{"nvcc"}, "lib64")
				linkReceipt(s, linked+`"target":`+strings.TrimSuffix(q(s.home+"/opt/t"), `"`)+"\xff\"")
			}},
		{name: "a link receipt whose source is spelt with escapes", cmd: "nvcc",
			setup: func(s *setup) {
				tree(s, filepath.Join(s.home, "opt", "t"), []string{"nvcc"}, "lib64")
				linkReceipt(s, `"kind":"link","version":"12.7.0","source":"li\u006ek","target":`+q(s.home+"/opt/t"))
			}},
		{name: "a link receipt whose field names are capitalized", cmd: "nvcc",
			setup: func(s *setup) {
				tree(s, filepath.Join(s.home, "opt", "t"), []string{"nvcc"}, "lib64")
				linkReceipt(s, linked+`"Target":`+q(s.home+"/opt/t"))
			}},
		{name: "a link receipt with a field twice", cmd: "nvcc",
			setup: func(s *setup) {
				tree(s, filepath.Join(s.home, "opt", "t"), []string{"nvcc"}, "lib64")
				tree(s, filepath.Join(s.home, "opt", "u"), []string{"nvcc"}, "lib64")
				linkReceipt(s, linked+`"target":`+q(s.home+"/opt/t")+`,"target":`+q(s.home+"/opt/u"))
			}},
		{name: "a link receipt with a field link does not write", cmd: "nvcc",
			setup: func(s *setup) {
				tree(s, filepath.Join(s.home, "opt", "t"), []string{"nvcc"}, "lib64")
				linkReceipt(s, linked+`"components":[{"id":"cuda_nvcc"}],"target":`+q(s.home+"/opt/t"))
			}},
		{name: "a link receipt with text after the object", cmd: "nvcc",
			setup: func(s *setup) {
				tree(s, filepath.Join(s.home, "opt", "t"), []string{"nvcc"}, "lib64")
				linkReceipt(s, linked+`"target":`+q(s.home+"/opt/t")+`} {`)
			}},
		{name: "a link receipt with a trailing comma", cmd: "nvcc",
			setup: func(s *setup) {
				tree(s, filepath.Join(s.home, "opt", "t"), []string{"nvcc"}, "lib64")
				linkReceipt(s, linked+`"target":`+q(s.home+"/opt/t")+`,`)
			}},
		{name: "a linked toolkit whose command is a link to a shim", cmd: "nvcc",
			setup: func(s *setup) {
				target := tree(s, filepath.Join(s.home, "opt", "t"), nil, "lib64")
				shim := filepath.Join(s.root, "shims", "nvcc")
				os.MkdirAll(filepath.Dir(shim), 0o755)
				os.MkdirAll(filepath.Join(target, "bin"), 0o755)
				if err := os.Symlink(fast, shim); err != nil {
					s.t.Fatal(err)
				}
				if err := os.Symlink(shim, filepath.Join(target, "bin", "nvcc")); err != nil {
					s.t.Fatal(err)
				}
				link(s, s.root, "12.7.0", target)
				write(s, filepath.Join(s.proj, ".cuda-version"), "12.7")
			}},
		{name: "a linked system store entry", cmd: "nvcc",
			setup: func(s *setup) {
				sys := filepath.Join(s.home, "system")
				s.env["CUDAENV_SYSTEM_ROOT"] = sys
				link(s, sys, "12.9.0", tree(s, filepath.Join(s.home, "opt", "sys"), []string{"nvcc"}, "lib64"))
				write(s, filepath.Join(s.proj, ".cuda-version"), "12.9")
			}},
		{name: "a system store entry another user owns", cmd: "nvcc",
			setup: func(s *setup) {
				sys := filepath.Join(s.home, "system")
				s.env["CUDAENV_SYSTEM_ROOT"] = sys
				user := s.root
				s.root = sys
				toolkit(s, "12.9.0", []string{"nvcc"}, "lib64", receipt("12.9.0"))
				s.root = user
				if os.Geteuid() == 0 {
					os.Chown(filepath.Join(sys, "cuda", "12.9.0"), 65534, 65534)
				}
				write(s, filepath.Join(s.proj, ".cuda-version"), "12")
			}},
		{name: "a receipt that is not one", cmd: "nvcc",
			setup: func(s *setup) {
				toolkit(s, "12.7.0", []string{"nvcc"}, "lib64", "garbage")
				write(s, filepath.Join(s.proj, ".cuda-version"), "12.7")
			}},
		{name: "two spellings of one version", cmd: "nvcc",
			setup: func(s *setup) {
				toolkit(s, "12.04.1", []string{"nvcc"}, "lib64", receipt("12.4.1"))
				write(s, filepath.Join(s.proj, ".cuda-version"), "12.4")
			}},
		{name: "a variable given twice", cmd: "nvcc",
			setup: func(s *setup) {
				write(s, filepath.Join(s.proj, ".cuda-version"), "12.4")
				s.env["\x00dup"] = "CUDA_HOME=/b" // added as a second CUDA_HOME below
				s.env["CUDA_HOME"] = "/a"
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := filepath.Join(t.TempDir(), `a "quoted" $dir with spaces`)
			s := &setup{t: t, root: filepath.Join(base, "store"), home: filepath.Join(base, "home")}
			s.proj = filepath.Join(s.home, "src", "proj")
			s.cwd = filepath.Join(s.proj, "a", "b", "c")
			if err := os.MkdirAll(s.cwd, 0o755); err != nil {
				t.Fatal(err)
			}
			s.env = map[string]string{
				"HOME":               s.home,
				"PATH":               filepath.Join(s.root, "shims") + ":/usr/bin:/bin",
				"PWD":                s.cwd,
				"CUDAENV_ROOT":       s.root,
				"CUDAENV_CONFIG_DIR": filepath.Join(base, "config"),
				"CUDAENV_CACHE_DIR":  filepath.Join(base, "cache"),
				"LANG":               "C.UTF-8",
			}
			for _, v := range []string{"11.8.0", "12.4.1", "12.6.2"} {
				toolkit(s, v, []string{"nvcc", "ptxas"}, "lib64", receipt(v))
			}
			tt.setup(s)
			var env []string
			for k, v := range s.env {
				if k == "\x00dup" {
					env = append(env, v)
				} else {
					env = append(env, k+"="+v)
				}
			}
			sort.Strings(env)

			want := runAs(t, goShim, tt.cmd, tt.args, s.cwd, env)
			got := runAs(t, fast, tt.cmd, tt.args, s.cwd, env)
			if got != want {
				t.Errorf("the fast shim and cudaenv-shim differ:\nfast:         exit %d\n%s\nstderr: %s\ncudaenv-shim: exit %d\n%s\nstderr: %s",
					got.code, got.stdout, got.stderr, want.code, want.stdout, want.stderr)
			}
			if tt.want != nil {
				tt.want(t, want.stdout)
			}
			alone := runAs(t, alone, tt.cmd, tt.args, s.cwd, env)
			if tt.fast {
				if want.code != 0 || !strings.Contains(want.stdout, "__CUDAENV_SHIM=PID:1:") {
					t.Fatalf("cudaenv-shim did not run the command: exit %d\n%s\n%s", want.code, want.stdout, want.stderr)
				}
				if alone != want {
					t.Errorf("the fast shim did not answer alone:\nexit %d\n%s\nstderr: %s", alone.code, alone.stdout, alone.stderr)
				}
			} else if !tt.noAlone && (alone.code != 126 || !strings.Contains(alone.stderr, "cudaenv-fastshim cannot run cudaenv-shim, which must be installed beside it")) {
				t.Errorf("the fast shim answered alone where it must hand over to cudaenv-shim: exit %d\n%s\nstderr: %s", alone.code, alone.stdout, alone.stderr)
			}
		})
	}
}

// noStoreLibs checks that a shim ran the toolkit's command with its
// CUDA_HOME set and no store folder on LD_LIBRARY_PATH.
func noStoreLibs(t *testing.T, stdout string) {
	t.Helper()
	if !strings.Contains(stdout, "__CUDAENV_SHIM=PID:1:") || !strings.Contains(stdout, "\x00CUDA_HOME=") && !strings.Contains(stdout, "CUDA_HOME=") {
		t.Fatalf("cudaenv-shim did not run the command with the toolkit:\n%s", stdout)
	}
	for _, kv := range strings.Split(stdout, "\x00") {
		if v, ok := strings.CutPrefix(strings.TrimLeft(kv, "\n\x01"), "LD_LIBRARY_PATH="); ok && strings.Contains(v, "cuda") {
			t.Errorf("libraries=off, yet LD_LIBRARY_PATH=%s", v)
		}
	}
}

// A fast shim without cudaenv-shim beside it says so in one line, with the
// folder's control characters escaped.
func TestFastShimWithoutCudaenvShimSaysSo(t *testing.T) {
	bin := fastShimBinaries(t)
	dir := filepath.Join(t.TempDir(), "evil\x1b[2Jdir")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(bin, "alone", "cudaenv-fastshim"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cudaenv-fastshim"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	r := runAs(t, filepath.Join(dir, "cudaenv-fastshim"), "python3", nil, dir, []string{"PATH=/usr/bin"})
	if r.code != 126 || bytes.Count([]byte(r.stderr), []byte("\n")) != 1 || strings.Contains(r.stderr, "\x1b") ||
		!strings.HasPrefix(r.stderr, "cudaenv: cudaenv-fastshim cannot run cudaenv-shim") || !strings.Contains(r.stderr, `evil\x1b[2Jdir/cudaenv-shim`) {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}

// Installed beside cudaenv and cudaenv-shim, the fast shim is what rehash
// points the shims at; a shim call then runs the selected toolkit's
// command, and a toolkit command that runs the shim again still stops
// with one line.
func TestRehashPointsTheShimsAtTheFastShim(t *testing.T) {
	bin := fastShimBinaries(t)
	goCmd := goTool(t)
	if out, err := exec.Command(goCmd, "build", "-tags", "urfave_cli_no_docs", "-o", filepath.Join(bin, "cudaenv"), "../cudaenv").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	base := filepath.Join(t.TempDir(), `st ore "q" $x`)
	root := filepath.Join(base, "root")
	tk := filepath.Join(root, "cuda", "12.4.1")
	for path, text := range map[string]string{
		filepath.Join(tk, "receipt.json"):            `{"kind":"cuda","version":"12.4.1","source":"test"}`,
		filepath.Join(tk, "bin", "nvcc"):             "#!/bin/sh\necho \"$0 $* $CUDA_HOME\"\nexit 3\n",
		filepath.Join(tk, "bin", "ptxas"):            "#!/bin/sh\nexec \"$CUDAENV_ROOT/shims/ptxas\" \"$@\"\n",
		filepath.Join(base, "proj", ".cuda-version"): "12.4\n",
	} {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(tk, "lib64"), 0o755)
	env := []string{"CUDAENV_ROOT=" + root, "CUDAENV_CONFIG_DIR=" + filepath.Join(base, "config"), "CUDAENV_CACHE_DIR=" + filepath.Join(base, "cache"),
		"HOME=" + base, "PATH=" + filepath.Join(root, "shims") + ":/usr/bin:/bin"}
	run := func(name string, args ...string) (string, int) {
		cmd := exec.CommandContext(testwait.Context(t), name, args...)
		cmd.Dir, cmd.Env = filepath.Join(base, "proj"), env
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return string(out), ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), 0
	}
	if out, code := run(filepath.Join(bin, "cudaenv"), "rehash"); code != 0 {
		t.Fatalf("rehash: exit %d\n%s", code, out)
	}
	for _, name := range []string{"nvcc", "ptxas"} {
		if got, err := os.Readlink(filepath.Join(root, "shims", name)); err != nil || got != filepath.Join(bin, "cudaenv-fastshim") {
			t.Errorf("shims/%s points at %q (%v), not the fast shim", name, got, err)
		}
	}
	out, code := run(filepath.Join(root, "shims", "nvcc"), "-c", "a b.cu")
	if want := filepath.Join(tk, "bin", "nvcc") + " -c a b.cu " + tk + "\n"; out != want || code != 3 {
		t.Errorf("nvcc through the fast shim: %q, exit %d; want %q, exit 3", out, code, want)
	}
	out, code = run(filepath.Join(root, "shims", "ptxas"))
	if code != 126 || strings.Count(out, "\n") != 1 || !strings.Contains(out, "which would loop forever") {
		t.Errorf("a toolkit command that runs its shim again: %q, exit %d", out, code)
	}
}

// FuzzFastShimPin: whatever a .cuda-version holds, the fast shim runs what
// cudaenv-shim runs, in the same environment, or the same error comes out.
// go test runs the seeds; go test -fuzz FuzzFastShimPin ./cmd/cudaenv-shim
// explores further.
func FuzzFastShimPin(f *testing.F) {
	fuzzVersionFile(f, ".cuda-version", []string{"12.4", "cuda@12\n", "CUDA@LATEST\r\n", "# pin\n11.8 # old\n", "12.4 cudnn@9", "\xef\xbb\xbf12",
		"12..4", "1234567890", "12.4.1.2", "012.04", "system", "12\u00a04", "\x00", "cudnn@9.5", "cuda@", "@12", "12.4\n\n13",
		"12.4 libraries=off", "libraries=off"})
}

// FuzzFastShimToolVersions: the same for a .tool-versions.
func FuzzFastShimToolVersions(f *testing.F) {
	fuzzVersionFile(f, ".tool-versions", []string{"cuda 12.4\n", "nodejs 20\ncuda 11.8 12.4\n", "cuda\n", "cudnn 9\n", "cuda 12\ncuda 13\n",
		"# cuda 12\n", "cuda latest", "cuda cuda@12", "cuda system", "cuda ref:x", "\xef\xbb\xbfcuda 12.4", "cuda\t12.4\r\n", "CUDA 12.4", "cuda 12.4\x00"})
}

// fuzzVersionFile checks that the fast shim and cudaenv-shim agree on a
// project whose only version file is name, holding the fuzzed text.
func fuzzVersionFile(f *testing.F, name string, seeds []string) {
	for _, seed := range seeds {
		f.Add([]byte(seed))
	}
	if runtime.GOOS != "linux" {
		f.Skip("the fast shim is for Linux")
	}
	bin := fastShimBinaries(f)
	base := filepath.Join(f.TempDir(), "base")
	root := filepath.Join(base, "store")
	for _, v := range []string{"11.8.0", "12.4.1", "12.6.2", "13.0.1"} {
		d := filepath.Join(root, "cuda", v)
		os.MkdirAll(filepath.Join(d, "bin"), 0o755)
		os.MkdirAll(filepath.Join(d, "lib64"), 0o755)
		os.WriteFile(filepath.Join(d, "receipt.json"), []byte(`{"kind":"cuda","version":"`+v+`"}`), 0o644)
		os.WriteFile(filepath.Join(d, "bin", "nvcc"), []byte("#!/bin/sh\nprintf '%s\\n' \"$0\" \"$@\"; printf '\\001'; exec /usr/bin/env -0\n"), 0o755)
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		proj := filepath.Join(t.TempDir(), "proj")
		os.MkdirAll(proj, 0o755)
		if err := os.WriteFile(filepath.Join(proj, name), text, 0o644); err != nil {
			t.Fatal(err)
		}
		env := []string{"HOME=" + base, "PATH=/usr/bin:/bin", "PWD=" + proj, "CUDAENV_ROOT=" + root,
			"CUDAENV_CONFIG_DIR=" + filepath.Join(base, "config"), "CUDAENV_CACHE_DIR=" + filepath.Join(base, "cache")}
		want := runAs(t, filepath.Join(bin, "cudaenv-shim"), "nvcc", []string{"-V"}, proj, env)
		got := runAs(t, filepath.Join(bin, "cudaenv-fastshim"), "nvcc", []string{"-V"}, proj, env)
		if got != want {
			t.Errorf("%s %q: the fast shim and cudaenv-shim differ:\nfast: exit %d\n%s\n%s\ncudaenv-shim: exit %d\n%s\n%s",
				name, text, got.code, got.stdout, got.stderr, want.code, want.stdout, want.stderr)
		}
	})
}

// A fast shim older than the cudaenv-shim beside it (left behind when an
// upgrade installed cudaenv-shim alone) decides nothing: it hands every
// call on, even one it would run itself.
func TestAFastShimOlderThanCudaenvShimHandsEveryCallOn(t *testing.T) {
	bin := fastShimBinaries(t)
	dir := filepath.Join(t.TempDir(), "bin")
	os.MkdirAll(dir, 0o755)
	data, err := os.ReadFile(filepath.Join(bin, "cudaenv-fastshim"))
	if err != nil {
		t.Fatal(err)
	}
	fast, goShim := filepath.Join(dir, "cudaenv-fastshim"), filepath.Join(dir, "cudaenv-shim")
	os.WriteFile(fast, data, 0o755)
	os.WriteFile(goShim, []byte("#!/bin/sh\necho handed on\nexit 42\n"), 0o755)
	root := filepath.Join(t.TempDir(), "store")
	tk := filepath.Join(root, "cuda", "12.4.1")
	os.MkdirAll(filepath.Join(tk, "bin"), 0o755)
	os.WriteFile(filepath.Join(tk, "receipt.json"), []byte(`{"kind":"cuda","version":"12.4.1"}`), 0o644)
	os.WriteFile(filepath.Join(tk, "bin", "nvcc"), []byte("#!/bin/sh\necho the toolkit nvcc\n"), 0o755)
	env := []string{"HOME=/nonexistent", "PATH=/usr/bin:/bin", "CUDAENV_ROOT=" + root, "CUDAENV_VERSION=12.4",
		"CUDAENV_CONFIG_DIR=" + filepath.Join(root, "config"), "CUDAENV_CACHE_DIR=" + filepath.Join(root, "cache")}
	now := time.Now()
	for _, tt := range []struct {
		name          string
		goShimIsNewer bool
		wantOut       string
		wantCode      int
	}{
		{"built together, cudaenv-shim first", false, "the toolkit nvcc\n", 0},
		{"cudaenv-shim upgraded alone", true, "handed on\n", 42},
	} {
		goTime, fastTime := now.Add(-time.Minute), now
		if tt.goShimIsNewer {
			goTime, fastTime = fastTime, goTime
		}
		os.Chtimes(goShim, goTime, goTime)
		os.Chtimes(fast, fastTime, fastTime)
		r := runAs(t, fast, "nvcc", nil, dir, env)
		if r.code != tt.wantCode || r.stdout != tt.wantOut {
			t.Errorf("%s: exit %d, %q (stderr %q); want exit %d, %q", tt.name, r.code, r.stdout, r.stderr, tt.wantCode, tt.wantOut)
		}
	}
}

// Pin files on file systems without a block device: the fast shim asks the
// kernel's mount table which one a file is on. tmpfs is local, so a pin
// there stays on the fast path. A kernel file that reads as a version (the
// global default in a /sys/module folder) is never used: the fast shim
// hands it on (sysfs says 4096 bytes, so the size check already does), and
// cudaenv-shim refuses it.
func TestFastShimTellsFileSystemsWithoutADevice(t *testing.T) {
	bin := fastShimBinaries(t)
	var fs syscall.Statfs_t
	if err := syscall.Statfs("/dev/shm", &fs); err != nil || fs.Type != 0x01021994 {
		t.Skip("no tmpfs at /dev/shm")
	}
	shm, err := os.MkdirTemp("/dev/shm", "cudaenv-fastshim-")
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { os.RemoveAll(shm) })
	root := filepath.Join(t.TempDir(), "store")
	tk := filepath.Join(root, "cuda", "12.4.1")
	os.MkdirAll(filepath.Join(tk, "bin"), 0o755)
	os.WriteFile(filepath.Join(tk, "receipt.json"), []byte(`{"kind":"cuda","version":"12.4.1"}`), 0o644)
	os.WriteFile(filepath.Join(tk, "bin", "nvcc"), []byte("#!/bin/sh\necho the toolkit nvcc\n"), 0o755)
	os.WriteFile(filepath.Join(shm, ".cuda-version"), []byte("12.4\n"), 0o644)
	env := func(config string) []string {
		return []string{"HOME=/nonexistent", "PATH=/usr/bin:/bin", "CUDAENV_ROOT=" + root,
			"CUDAENV_CONFIG_DIR=" + config, "CUDAENV_CACHE_DIR=" + filepath.Join(root, "cache")}
	}

	onTmpfs := runAs(t, filepath.Join(bin, "alone", "cudaenv-fastshim"), "nvcc", nil, shm, env(filepath.Join(root, "config")))
	if onTmpfs.code != 0 || onTmpfs.stdout != "the toolkit nvcc\n" {
		t.Errorf("a pin on tmpfs: exit %d, %q, %q; want the fast path to run the toolkit's nvcc", onTmpfs.code, onTmpfs.stdout, onTmpfs.stderr)
	}

	// A kernel file that reads as a version, and a toolkit it would pick.
	var kdir, kver string
	mods, _ := filepath.Glob("/sys/module/*/version")
	for _, m := range mods {
		if data, err := os.ReadFile(m); err == nil && regexp.MustCompile(`^[0-9]{1,3}(\.[0-9]{1,3}){0,2}$`).MatchString(strings.TrimSpace(string(data))) {
			kdir, kver = filepath.Dir(m), strings.TrimSpace(string(data))
			break
		}
	}
	if kdir == "" {
		t.Skip("no /sys/module/*/version that reads as a version")
	}
	ktk := filepath.Join(root, "cuda", kver)
	os.MkdirAll(filepath.Join(ktk, "bin"), 0o755)
	os.WriteFile(filepath.Join(ktk, "receipt.json"), []byte(`{"kind":"cuda","version":"`+kver+`"}`), 0o644)
	os.WriteFile(filepath.Join(ktk, "bin", "nvcc"), []byte("#!/bin/sh\necho picked by a kernel file\n"), 0o755)
	dir := t.TempDir()
	alone := runAs(t, filepath.Join(bin, "alone", "cudaenv-fastshim"), "nvcc", nil, dir, env(kdir))
	if alone.code != 126 || !strings.Contains(alone.stderr, "cannot run cudaenv-shim") {
		t.Errorf("a global default on sysfs (%s/version): the fast shim answered alone: exit %d, %q, %q", kdir, alone.code, alone.stdout, alone.stderr)
	}
	want := runAs(t, filepath.Join(bin, "cudaenv-shim"), "nvcc", nil, dir, env(kdir))
	got := runAs(t, filepath.Join(bin, "cudaenv-fastshim"), "nvcc", nil, dir, env(kdir))
	if got != want || want.code == 0 {
		t.Errorf("a global default on sysfs:\nfast: %+v\ncudaenv-shim: %+v", got, want)
	}
}

// FuzzFastShimLinkReceipt: whatever the receipt of a linked entry holds,
// the fast shim runs what cudaenv-shim runs, in the same environment, or
// the same error comes out. @T@ in the text stands for the JSON string of
// a toolkit's path (one with spaces, quotes and $) that the entry may
// link. go test runs the seeds; go test -fuzz FuzzFastShimLinkReceipt
// ./cmd/cudaenv-shim explores further.
func FuzzFastShimLinkReceipt(f *testing.F) {
	for _, seed := range []string{
		`{"kind":"cuda","version":"12.7.0","source":"link","target":@T@,"installed":"2026-12-01T23:25:35.123456789Z"}`,
		"{\n  \"kind\": \"cuda\",\n  \"version\": \"12.7.0\",\n  \"source\": \"link\",\n  \"target\": @T@,\n  \"installed\": \"2026-12-01T23:25:35Z\"\n}\n",
		`{"source":"link","target":@T@}`,
		`{"source":"link","target":@T@,"installed":"2024-02-29T00:00:00Z"}`,
		`{"source":"link","target":@T@,"installed":"2023-02-29T00:00:00Z"}`,
		`{"source":"link","target":@T@,"installed":"2026-01-01T24:00:00Z"}`,
		`{"source":"link","target":@T@,"installed":"2026-01-01t00:00:00z"}`,
		`{"source":"link","target":@T@,"installed":"2026-01-01T00:00:00.Z"}`,
		`{"source":"link","target":@T@,"installed":null}`,
		`{"source":"link","target":@T@,"installed_bytes":0}`,
		`{"source":"link","target":@T@,"installed_bytes":01}`,
		`{"source":"link","target":@T@,"installed_bytes":1e3}`,
		`{"source":"link","target":@T@,"cuda_major":-0}`,
		`{"source":"link","target":@T@,"cuda_major":12345678901234567890}`,
		`{"source":"link","target":@T@,"SOURCE":"nvidia"}`,
		`{"source":"link","target":@T@,"x":{"source":"nvidia"}}`,
		`{"source":"link","target":@T@,"kind":"\ud83d\ude00"}`,
		`{"source":"link","target":@T@,"kind":"\u2028"}`,
		`{"source":"link","target":"/"}`,
		`{"source":"link","target":@T@}garbage`,
		`{"source":"link","target":@T@}` + "\v",
		`{"link":@T@}`,
		`{"source":"nvidia","kind":"link","target":@T@}`,
		` { "source" : "link" , "target" : @T@ , "version" : "12.7.0" } `,
		`{"source":"link","target":@T@,}`,
		`{"source":"link" "target":@T@}`,
		`["source","link","target",@T@]`,
	} {
		f.Add([]byte(seed))
	}
	if runtime.GOOS != "linux" {
		f.Skip("the fast shim is for Linux")
	}
	bin := fastShimBinaries(f)
	base := filepath.Join(f.TempDir(), "base")
	root := filepath.Join(base, "store")
	target := filepath.Join(base, `opt/cuda "12.7" $x`)
	report := []byte("#!/bin/sh\nprintf '%s\\n' \"$0\" \"$@\"; printf '\\001'; exec /usr/bin/env -0\n")
	os.MkdirAll(filepath.Join(target, "bin"), 0o755)
	os.MkdirAll(filepath.Join(target, "lib64"), 0o755)
	os.WriteFile(filepath.Join(target, "bin", "nvcc"), report, 0o755)
	os.MkdirAll(filepath.Join(root, "cuda", "12.7.0"), 0o755)
	quoted, _ := json.Marshal(target)
	f.Fuzz(func(t *testing.T, text []byte) {
		receipt := filepath.Join(root, "cuda", "12.7.0", "receipt.json")
		if err := os.WriteFile(receipt, bytes.ReplaceAll(text, []byte("@T@"), quoted), 0o644); err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		env := []string{"HOME=" + base, "PATH=/usr/bin:/bin", "PWD=" + dir, "CUDAENV_ROOT=" + root, "CUDAENV_VERSION=12.7",
			"CUDAENV_CONFIG_DIR=" + filepath.Join(base, "config"), "CUDAENV_CACHE_DIR=" + filepath.Join(base, "cache")}
		want := runAs(t, filepath.Join(bin, "cudaenv-shim"), "nvcc", []string{"-V"}, dir, env)
		got := runAs(t, filepath.Join(bin, "cudaenv-fastshim"), "nvcc", []string{"-V"}, dir, env)
		if got != want {
			t.Errorf("receipt %q: the fast shim and cudaenv-shim differ:\nfast: exit %d\n%s\n%s\ncudaenv-shim: exit %d\n%s\n%s",
				text, got.code, got.stdout, got.stderr, want.code, want.stdout, want.stderr)
		}
	})
}

// cudaenv is the cudaenv binary the link cases adopt toolkits with, as a
// user does (this package may not import the store), built once.
var cudaenv struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

func cudaenvBinary(t *testing.T) string {
	t.Helper()
	cudaenv.once.Do(func() {
		if cudaenv.dir, cudaenv.err = os.MkdirTemp("", "cudaenv-shim-test-"); cudaenv.err != nil {
			return
		}
		cudaenv.bin = filepath.Join(cudaenv.dir, "cudaenv")
		out, err := exec.Command(goTool(t), "build", "-o", cudaenv.bin, "../cudaenv").CombinedOutput()
		if err != nil {
			cudaenv.err = fmt.Errorf("go build ../cudaenv: %v\n%s", err, out)
		}
	})
	if cudaenv.err != nil {
		t.Fatal(cudaenv.err)
	}
	return cudaenv.bin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if cudaenv.dir != "" {
		os.RemoveAll(cudaenv.dir)
	}
	os.Exit(code)
}
