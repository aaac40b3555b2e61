package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// moduleRoot is the repository root, two levels up.
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func goTool(t *testing.T) string {
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
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		cmd := exec.CommandContext(ctx, filepath.Join(shims, name))
		cmd.Dir, cmd.Env = proj, env
		out, err := cmd.CombinedOutput()
		cancel()
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
