package export

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var values = map[string]string{
	"PLAIN":     "/opt/cuda/12.4.1",
	"SPACES":    `/home/me/ho me "q" $x/cuda`,
	"LIST":      "/a/lib64:/b/lib",
	"HASH":      "/a #b",
	"BRACE":     "/a/${HOME}/b",
	"QUOTE":     `'lead`,
	"BACKSLASH": `C:\cuda\v12`,
	"NEWLINE":   "two\nlines",
	"EOFINSIDE": "x\nCUDAENV_EOF\ny",
	"EMPTY":     "",
}

// parseGitHubEnv reads a $GITHUB_ENV file as the Actions runner does:
// NAME=value lines, or NAME<<DELIM, lines, DELIM.
func parseGitHubEnv(t *testing.T, text string) map[string]string {
	t.Helper()
	out := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		if name, delim, ok := strings.Cut(line, "<<"); ok && !strings.Contains(name, "=") {
			var body []string
			closed := false
			for sc.Scan() {
				if sc.Text() == delim {
					closed = true
					break
				}
				body = append(body, sc.Text())
			}
			if !closed {
				t.Fatalf("delimiter %q for %s never closes", delim, name)
			}
			out[name] = strings.Join(body, "\n")
			continue
		}
		name, value, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("line %q is neither NAME=value nor NAME<<DELIM", line)
		}
		out[name] = value
	}
	return out
}

func TestGitHubEnvReadsBackEveryValue(t *testing.T) {
	got := parseGitHubEnv(t, GitHubEnv(values))
	for k, v := range values {
		if got[k] != v {
			t.Errorf("%s = %q after the round trip, want %q", k, got[k], v)
		}
	}
	if GitHubEnv(values) != GitHubEnv(values) {
		t.Error("output is not byte-stable")
	}
}

func TestGitHubPathPutsTheFirstDirFirst(t *testing.T) {
	// The runner prepends each line to PATH in turn.
	path := []string{"/usr/bin"}
	for _, line := range strings.Split(strings.TrimSuffix(GitHubPath([]string{"/t/bin", "/t/bin/x64"}), "\n"), "\n") {
		path = append([]string{line}, path...)
	}
	if strings.Join(path, ":") != "/t/bin:/t/bin/x64:/usr/bin" {
		t.Errorf("PATH became %v", path)
	}
}

// python-dotenv, the consumer most scripts use, reads every value back.
func TestDotenvReadsBackInPythonDotenv(t *testing.T) {
	if exec.Command("python3", "-c", "import dotenv").Run() != nil {
		t.Skip("python-dotenv is not installed")
	}
	text, quoted := Dotenv(values)
	f := filepath.Join(t.TempDir(), "x.env")
	if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("python3", "-c", `import sys, json, dotenv; print(json.dumps(dotenv.dotenv_values(sys.argv[1])))`, f).CombinedOutput()
	if err != nil {
		t.Fatalf("python-dotenv: %v\n%s", err, out)
	}
	var got map[string]string
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for k, v := range values {
		if k == "BRACE" {
			// python-dotenv expands ${…} in every form of value, quoted
			// or not; Dotenv names such a value (checked below).
			continue
		}
		if got[k] != v {
			t.Errorf("%s = %q in python-dotenv, want %q\n%s", k, got[k], v, text)
		}
	}
	// Docker takes the rest of a line literally: bare values are exact
	// for it too, and the others are named.
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		k, v, _ := strings.Cut(line, "=")
		isQuoted := strings.Contains(" "+strings.Join(quoted, " ")+" ", " "+k+" ")
		if !isQuoted && v != values[k] {
			t.Errorf("docker would read %s as %q, want %q", k, v, values[k])
		}
	}
	if fmt.Sprint(quoted) != "[BACKSLASH BRACE EOFINSIDE HASH NEWLINE QUOTE]" && fmt.Sprint(quoted) != "[BRACE EOFINSIDE HASH NEWLINE QUOTE]" {
		t.Errorf("quoted %v", quoted)
	}
}

// cmake -C reads the cache script back exactly.
func TestCMakeCacheLoadsInCMake(t *testing.T) {
	if _, err := exec.LookPath("cmake"); err != nil {
		t.Skip("cmake is not installed")
	}
	dir := t.TempDir()
	c := CMake{
		Compiler:     `/ho me/"q" $x/cuda;1/bin/nvcc`,
		ToolkitRoot:  `/ho me/"q" $x/cuda;1`,
		CudnnRoot:    `/d/${HOME}`,
		CudnnInclude: "/d/include",
		CudnnLibrary: "/d/lib/libcudnn.so",
	}
	cache := filepath.Join(dir, "init.cmake")
	if err := os.WriteFile(cache, []byte(CMakeCache(c)), 0o644); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "print.cmake")
	var b strings.Builder
	for _, v := range []string{"CMAKE_CUDA_COMPILER", "CUDAToolkit_ROOT", "CUDNN_ROOT", "CUDNN_INCLUDE_DIR", "CUDNN_LIBRARY"} {
		fmt.Fprintf(&b, "include(%q)\nmessage(STATUS \"%s=[${%s}]\")\n", cache, v, v)
	}
	if err := os.WriteFile(script, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("cmake", "-P", script).CombinedOutput()
	if err != nil {
		t.Fatalf("cmake: %v\n%s", err, out)
	}
	for name, want := range map[string]string{"CMAKE_CUDA_COMPILER": c.Compiler, "CUDAToolkit_ROOT": c.ToolkitRoot, "CUDNN_ROOT": c.CudnnRoot, "CUDNN_LIBRARY": c.CudnnLibrary} {
		if !strings.Contains(string(out), name+"=["+want+"]") {
			t.Errorf("cmake read %s wrong; want %q in:\n%s", name, want, out)
		}
	}
}

func TestCMakeCacheLeavesOutWhatIsNotThere(t *testing.T) {
	got := CMakeCache(CMake{ToolkitRoot: "/t"})
	if strings.Contains(got, "CMAKE_CUDA_COMPILER") || strings.Contains(got, "CUDNN") {
		t.Errorf("a libraries-only toolkit without cuDNN got:\n%s", got)
	}
	if !strings.Contains(got, `set(CUDAToolkit_ROOT "/t" CACHE PATH "")`) {
		t.Errorf("no toolkit root in:\n%s", got)
	}
}
