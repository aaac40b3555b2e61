package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/cudaenv/cudaenv/internal/testwait"
)

// moduleRoot is the repository root, two levels up.
func moduleRoot(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func goTool(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds with the go command; skipped with -short")
	}
	p, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	return p
}

// The whole module builds (and vets) for Windows, and builds for
// linux/arm64 (Grace, Jetson).
func TestCrossBuilds(t *testing.T) {
	goCmd := goTool(t)
	for _, c := range []struct {
		env  []string
		args []string
	}{
		{[]string{"GOOS=windows", "GOARCH=amd64"}, []string{"build", "./..."}},
		{[]string{"GOOS=windows", "GOARCH=amd64"}, []string{"vet", "./..."}},
		{[]string{"GOOS=linux", "GOARCH=arm64"}, []string{"build", "./..."}},
	} {
		cmd := exec.Command(goCmd, c.args...)
		cmd.Dir = moduleRoot(t)
		cmd.Env = append(os.Environ(), c.env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s go %s: %v\n%s", strings.Join(c.env, " "), strings.Join(c.args, " "), err, out)
		}
	}
}

// The shim binary, built for real, becomes the selected toolkit's command.
func TestShimBinary(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("uses a shell script as the toolkit command")
	}
	goCmd := goTool(t)
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "cudaenv-shim")
	build := exec.Command(goCmd, "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	root := filepath.Join(tmp, "root")
	tool := filepath.Join(root, "cuda", "12.4.1", "bin", "cutool")
	os.MkdirAll(filepath.Dir(tool), 0o755)
	os.WriteFile(filepath.Join(root, "cuda", "12.4.1", "receipt.json"), []byte(`{"kind":"cuda","source":"test"}`), 0o644)
	os.WriteFile(tool, []byte("#!/bin/sh\necho \"$0 $* $CUDA_HOME\"\nexit 3\n"), 0o755)
	proj := filepath.Join(tmp, "proj")
	os.MkdirAll(proj, 0o755)
	os.WriteFile(filepath.Join(proj, ".cuda-version"), []byte("12.4\n"), 0o644)
	shims := filepath.Join(root, "shims")
	os.MkdirAll(shims, 0o755)
	os.Symlink(bin, filepath.Join(shims, "cutool"))

	env := []string{"CUDAENV_ROOT=" + root, "CUDAENV_CONFIG_DIR=" + filepath.Join(tmp, "config"), "PATH=" + shims + ":/usr/bin:/bin"}
	run := func(dir, name string, args ...string) (string, int) {
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}
	out, code := run(proj, filepath.Join(shims, "cutool"), "a", "b c")
	if want := tool + " a b c " + filepath.Join(root, "cuda", "12.4.1") + "\n"; out != want || code != 3 {
		t.Errorf("shim call: %q, exit %d; want %q, exit 3", out, code, want)
	}
	out, code = run(tmp, filepath.Join(shims, "cutool"))
	if code != 127 || !strings.HasPrefix(out, "cudaenv: cutool: no CUDA version selected here") {
		t.Errorf("nothing selected: %q, exit %d", out, code)
	}
	out, code = run(proj, bin)
	if code != 2 || !strings.Contains(out, "is cudaenv's shim") {
		t.Errorf("called by its own name: %q, exit %d", out, code)
	}

	// A toolkit whose command is the shim binary, or a script that execs
	// the shim, stops with one line instead of looping.
	loop := filepath.Join(root, "cuda", "12.6.0", "bin")
	os.MkdirAll(loop, 0o755)
	os.WriteFile(filepath.Join(root, "cuda", "12.6.0", "receipt.json"), []byte(`{"kind":"cuda","source":"test"}`), 0o644)
	os.Symlink(bin, filepath.Join(loop, "cutool"))
	os.Symlink(bin, filepath.Join(shims, "cuexec"))
	os.WriteFile(filepath.Join(loop, "cuexec"), []byte("#!/bin/sh\nexec \"$CUDAENV_ROOT/shims/cuexec\" \"$@\"\n"), 0o755)
	env = append(env, "CUDAENV_VERSION=12.6")
	for _, name := range []string{"cutool", "cuexec"} {
		cmd := exec.CommandContext(testwait.Context(t), filepath.Join(shims, name))
		cmd.Dir, cmd.Env = proj, env
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 126 || strings.Count(string(out), "\n") != 1 {
			t.Errorf("%s leads back to the shim: %q, %v", name, out, err)
		}
	}
}

// TestThePromptHookUsesTheShimBinary installs both binaries side by side:
// `cudaenv init bash` then points the prompt hook at cudaenv-shim, which
// answers hook-env and switches a real bash.
func TestThePromptHookUsesTheShimBinary(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("drives bash")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	goCmd := goTool(t)
	tmp := filepath.Join(t.TempDir(), "b in")
	build := exec.Command(goCmd, "build", "-o", tmp+"/", ".", "../cudaenv")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	root := filepath.Join(t.TempDir(), "root")
	os.MkdirAll(filepath.Join(root, "cuda", "12.4.1", "bin"), 0o755)
	os.WriteFile(filepath.Join(root, "cuda", "12.4.1", "receipt.json"), []byte(`{"kind":"cuda","source":"test"}`), 0o644)
	proj := filepath.Join(t.TempDir(), "proj")
	os.MkdirAll(proj, 0o755)
	os.WriteFile(filepath.Join(proj, ".cuda-version"), []byte("12.4\n"), 0o644)

	script := `eval "$(cudaenv init bash)"
declare -f __cudaenv_hook | grep -c "cudaenv-shim' hook-env bash"
cd "$PROJ" && __cudaenv_hook && echo "in $CUDA_HOME"
cd / && __cudaenv_hook && echo "out ${CUDA_HOME-unset}"`
	cmd := exec.Command("bash", "--norc", "--noprofile", "-c", script)
	cmd.Env = []string{"PATH=" + tmp + ":/usr/bin:/bin", "HOME=" + t.TempDir(), "PROJ=" + proj,
		"CUDAENV_ROOT=" + root, "CUDAENV_CONFIG_DIR=" + filepath.Join(root, "cfg"), "CUDAENV_CACHE_DIR=" + filepath.Join(root, "cache")}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	want := "1\nin " + filepath.Join(root, "cuda", "12.4.1") + "\nout unset\n"
	if string(out) != want {
		t.Errorf("got:\n%s\nwant:\n%s", out, want)
	}
}

// TestTheShellFunctionAnswersReadOnlyCommandsWithTheShimBinary installs
// both binaries side by side, in a folder whose name has spaces, quotes
// and a dollar: in bash, zsh and fish, the cudaenv shell function gives,
// for every form of current, which, prefix, env and list, the output,
// errors and exit status cudaenv itself gives; the plain forms still do
// with cudaenv removed, so cudaenv-shim answered them alone, and the
// other forms then say that cudaenv is missing, so they went to it.
func TestTheShellFunctionAnswersReadOnlyCommandsWithTheShimBinary(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("drives bash, zsh and fish")
	}
	goCmd := goTool(t)
	tmp := t.TempDir()
	bin := filepath.Join(tmp, `b "in" $x`)
	build := exec.Command(goCmd, "build", "-o", bin+"/", ".", "../cudaenv")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	root := filepath.Join(tmp, "root")
	receipt := func(kind, v string) string {
		return `{"kind":"` + kind + `","version":"` + v + `","source":"nvidia","profile":"default","components":[{"id":"a"},{"id":"b"}]}`
	}
	files := map[string]string{
		"cuda/12.4.1/receipt.json":             receipt("cuda", "12.4.1"),
		"cuda/12.4.1/bin/nvcc":                 "#!/bin/sh\n",
		"cuda/12.4.1/lib64/libcudart.so.12":    "x",
		"cuda/11.8.0/receipt.json":             receipt("cuda", "11.8.0"),
		"cuda/11.8.0/lib64/libcudart.so.11":    "x",
		"cudnn/9.5.1-cuda12/receipt.json":      receipt("cudnn", "9.5.1"),
		"cudnn/9.5.1-cuda12/lib/libcudnn.so.9": "x",
		"cudnn/9.5.1-cuda12/include/cudnn.h":   "x",
		"../proj 'q' $p/.cuda-version":         "12.4 cudnn@9.5\n",
		"../proj 'q' $p/bad/.cuda-version":     "not-a-version\n",
		"../proj 'q' $p/bad/.keep":             "",
		"../proj 'q' $p/sub dir/.keep":         "",
		"../elsewhere/.keep":                   "",
	}
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	proj := filepath.Join(tmp, "proj 'q' $p")
	env := []string{"PATH=" + bin + ":/usr/bin:/bin", "HOME=" + tmp, "SHELL=/bin/zsh", "CUDA_HOME=/opt/mine",
		"CUDAENV_ROOT=" + root, "CUDAENV_CONFIG_DIR=" + filepath.Join(tmp, "cfg"), "CUDAENV_CACHE_DIR=" + filepath.Join(tmp, "cache")}
	type call struct {
		dir   string
		args  []string
		plain bool // cudaenv-shim answers it alone
	}
	sub, bad, none := filepath.Join(proj, "sub dir"), filepath.Join(proj, "bad"), filepath.Join(tmp, "elsewhere")
	calls := []call{
		{sub, []string{"current"}, true},
		{none, []string{"current"}, true},
		{bad, []string{"current"}, true},
		{sub, []string{"which", "nvcc"}, true},
		{sub, []string{"which", "ptxas"}, true},
		{sub, []string{"which"}, true},
		{sub, []string{"prefix"}, true},
		{sub, []string{"prefix", "cudnn"}, true},
		{sub, []string{"prefix", "11.8"}, true},
		{sub, []string{"prefix", "13.0"}, true},
		{sub, []string{"env"}, true},
		{sub, []string{"env", "11.8"}, true},
		{sub, []string{"env", "--shell", "fish"}, true},
		{sub, []string{"env", "--shell=json"}, true},
		{sub, []string{"env", "12.4", "--format", "dotenv"}, true},
		{sub, []string{"env", "-format=cmake"}, true},
		{sub, []string{"env", "--format", "github"}, true},
		{sub, []string{"env", "--format", "yaml"}, true},
		{sub, []string{"env", "--shell", "tcsh"}, true},
		{none, []string{"env"}, true},
		{sub, []string{"list"}, true},
		{sub, []string{"ls", "--json"}, true},
		{none, []string{"list", "-json"}, true},
		{sub, []string{"current", "--help"}, false},
		{sub, []string{"which", "-h"}, false},
		{sub, []string{"env", "--github"}, false},
		{sub, []string{"env", "--format", "json", "--format", "shell"}, false},
		{sub, []string{"env", "--format"}, false},
		{sub, []string{"list", "--jsn"}, false},
		{sub, []string{"list", "extra"}, false},
		{sub, []string{"current", "extra"}, false},
	}
	type result struct{ out, err, code string }
	want := make([]result, len(calls))
	for i, c := range calls {
		cmd := exec.Command(filepath.Join(bin, "cudaenv"), c.args...)
		cmd.Dir, cmd.Env = c.dir, env
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		code := 0
		if err := cmd.Run(); err != nil {
			ee, ok := err.(*exec.ExitError)
			if !ok {
				t.Fatal(err)
			}
			code = ee.ExitCode()
		}
		want[i] = result{out.String(), errb.String(), strconv.Itoa(code)}
	}
	if !strings.Contains(want[0].out, "12.4.1 cudnn@9.5.1") || want[3].out != filepath.Join(root, "cuda", "12.4.1", "bin", "nvcc")+"\n" ||
		want[4].code != "127" || !strings.Contains(want[20].out, "* 12.4.1") || !strings.Contains(want[23].out, "USAGE") {
		t.Fatalf("cudaenv itself does not answer as this test expects: %q", want)
	}

	posix := func(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
	fishQ := func(s string) string {
		return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
	}
	shells := []struct {
		name string
		argv []string
		q    func(string) string
		code string
	}{
		{"bash", []string{"bash", "--norc", "--noprofile", "-c"}, posix, "$?"},
		{"zsh", []string{"zsh", "-f", "-c"}, posix, "$?"},
		{"fish", []string{"fish", "--no-config", "-c"}, fishQ, "$status"},
	}
	for _, sh := range shells {
		t.Run(sh.name, func(t *testing.T) {
			if _, err := exec.LookPath(sh.name); err != nil {
				t.Skipf("%s is not installed", sh.name)
			}
			initCmd := exec.Command(filepath.Join(bin, "cudaenv"), "init", sh.name)
			initCmd.Env, initCmd.Dir = env, tmp
			init, err := initCmd.Output()
			if err != nil || !strings.Contains(string(init), "cudaenv-shim") {
				t.Fatalf("cudaenv init %s: %v\n%s", sh.name, err, init)
			}
			initText := string(init)
			// run drives the shell function over calls; with plainOnly,
			// only over the forms cudaenv-shim answers alone.
			run := func(plainOnly bool) []result {
				out := t.TempDir()
				// The prompt hook stays out: cd would run it in zsh and
				// fish, and the activation would change what env prints.
				var b strings.Builder
				b.WriteString(initText)
				if sh.name == "fish" {
					b.WriteString("function __cudaenv_hook\nend\n")
				} else {
					b.WriteString("__cudaenv_hook() { :; }\n")
				}
				for i, c := range calls {
					if plainOnly && !c.plain {
						continue
					}
					words := make([]string, len(c.args))
					for j, a := range c.args {
						words[j] = sh.q(a)
					}
					f := sh.q(filepath.Join(out, strconv.Itoa(i)))
					fmt.Fprintf(&b, "cd %s\ncudaenv %s >%s.out 2>%s.err\necho %s >%s.code\n", sh.q(c.dir), strings.Join(words, " "), f, f, sh.code, f)
				}
				cmd := exec.Command(sh.argv[0], append(sh.argv[1:], b.String())...)
				cmd.Env, cmd.Dir = env, tmp
				if o, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("%s: %v\n%s", sh.name, err, o)
				}
				got := make([]result, len(calls))
				for i := range calls {
					read := func(ext string) string {
						data, _ := os.ReadFile(filepath.Join(out, strconv.Itoa(i)+ext))
						return string(data)
					}
					got[i] = result{read(".out"), read(".err"), strings.TrimSpace(read(".code"))}
				}
				return got
			}
			got := run(false)
			for i, c := range calls {
				if got[i] != want[i] {
					t.Errorf("cudaenv %q in %s: the shell function gives %q; cudaenv gives %q", c.args, c.dir, got[i], want[i])
				}
			}
			big := filepath.Join(bin, "cudaenv")
			if err := os.Rename(big, big+".away"); err != nil {
				t.Fatal(err)
			}
			defer os.Rename(big+".away", big)
			got = run(false)
			for i, c := range calls {
				switch {
				case c.plain && got[i] != want[i]:
					t.Errorf("without cudaenv, cudaenv %q gives %q; want %q", c.args, got[i], want[i])
				case !c.plain && (got[i].code != "1" || got[i].out != "" || !strings.Contains(got[i].err, "there is no cudaenv beside it")):
					t.Errorf("without cudaenv, cudaenv %q gives %q; want it to say cudaenv is missing", c.args, got[i])
				}
			}
		})
	}
}
