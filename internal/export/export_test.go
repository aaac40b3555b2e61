package export

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
	text, err := GitHubPath([]string{"/t/bin", "/t/bin/x64"})
	if err != nil {
		t.Fatal(err)
	}
	path := []string{"/usr/bin"}
	for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		path = append([]string{line}, path...)
	}
	if strings.Join(path, ":") != "/t/bin:/t/bin/x64:/usr/bin" {
		t.Errorf("PATH became %v", path)
	}
}

func TestGitHubPathRefusesAFolderWithALineBreak(t *testing.T) {
	for _, dir := range []string{"/t/x\n/tmp/evil/bin", "/t/x\r/tmp/evil/bin", "/t/x\x00y"} {
		text, err := GitHubPath([]string{"/ok/bin", dir})
		if err == nil || text != "" {
			t.Errorf("%q: got %q, %v; want no text and an error", dir, text, err)
			continue
		}
		if !strings.Contains(err.Error(), fmt.Sprintf("%q", dir)) {
			t.Errorf("%q: the error does not name it: %v", dir, err)
		}
	}
}

// hostileDotenv are folder names a user (or an attacker naming a folder)
// can make; Dotenv must write each so that python-dotenv and docker read
// it back, or refuse it.
var hostileDotenv = []string{
	"/opt/cuda/12.4.1",
	`/home/me/ho me "q" $x/cuda`,
	"/a/lib64:/b/lib",
	"/a #b",
	`'lead`,
	`C:\cuda\v12`,
	"",
	"x${NOPE:-/tmp/evil}",
	"/a/${HOME}/b",
	"/a/${}/b",
	"/a/${x:y}/b",
	"/a/${unclosed",
	"/a/$HOME/b",
	"two\nLD_PRELOAD=/tmp/evil.so",
	"cr\rLD_PRELOAD=/tmp/evil.so",
	"x\nCUDAENV_EOF\ny",
}

// The rule alone, in Go: what is refused and why.
func TestDotenvRefusesWhatNoReaderReadsBack(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		refused     string // in the error; "" for written
	}{
		{"a folder python-dotenv would expand with a default is refused", "x${NOPE:-/tmp/evil}", `holds "${NOPE:-/tmp/evil}", which python-dotenv expands`},
		{"a folder python-dotenv would expand is refused", "/a/${HOME}/b", `holds "${HOME}"`},
		{"an empty ${} is refused (python-dotenv reads it as nothing)", "/a/${}/b", `holds "${}"`},
		{"a newline is refused (docker reads the next line as an assignment)", "two\nLD_PRELOAD=/tmp/evil.so", "line break"},
		{"a carriage return is refused", "cr\rLD_PRELOAD=/tmp/evil.so", "line break"},
		{"a ${ python-dotenv does not expand is written", "/a/${x:y}/b", ""},
		{"an unclosed ${ is written", "/a/${unclosed", ""},
		{"a $NAME without braces is written", "/a/$HOME/b", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text, _, err := Dotenv(map[string]string{"OK": "/x", "CUDA_HOME": tc.value})
			if tc.refused == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var de *DotenvError
			if !errors.As(err, &de) || text != "" {
				t.Fatalf("got %q, %v; want a *DotenvError and no text", text, err)
			}
			if de.Name != "CUDA_HOME" || !strings.Contains(err.Error(), tc.refused) || !strings.HasPrefix(err.Error(), "CUDA_HOME=") {
				t.Errorf("error %q does not name CUDA_HOME and say %q", err, tc.refused)
			}
		})
	}
}

// Docker takes the rest of a line literally; python-dotenv is checked
// where it is installed.
func TestDotenvIsReadBackExactlyOrRefused(t *testing.T) {
	vars := map[string]string{}
	for i, v := range hostileDotenv {
		vars[fmt.Sprintf("V%02d", i)] = v
	}
	written := map[string]string{}
	for k, v := range vars {
		if _, _, err := Dotenv(map[string]string{k: v}); err == nil {
			written[k] = v
		}
	}
	text, quoted, err := Dotenv(written)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Dotenv(vars); err == nil {
		t.Fatal("the hostile set was written whole")
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) != len(written) {
		t.Fatalf("%d lines for %d values: docker would read other assignments:\n%s", len(lines), len(written), text)
	}
	for _, line := range lines {
		k, v, _ := strings.Cut(line, "=")
		if !slices.Contains(quoted, k) && v != written[k] {
			t.Errorf("docker would read %s as %q, want %q", k, v, written[k])
		}
	}
	if exec.Command("python3", "-c", "import dotenv").Run() != nil {
		t.Skip("python-dotenv is not installed")
	}
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
	for k, v := range written {
		if got[k] != v {
			t.Errorf("%s = %q in python-dotenv, want %q\n%s", k, got[k], v, text)
		}
	}
	// What is refused is what python-dotenv would misread (or docker).
	for k, v := range vars {
		if _, ok := written[k]; ok {
			continue
		}
		if !strings.ContainsAny(v, "\r\n") {
			one := filepath.Join(t.TempDir(), "one.env")
			os.WriteFile(one, []byte(k+"='"+v+"'\n"), 0o644)
			out, _ := exec.Command("python3", "-c", `import sys, dotenv; sys.stdout.write(dotenv.dotenv_values(sys.argv[1])[sys.argv[2]])`, one, k).Output()
			if string(out) == v {
				t.Errorf("%q is refused, but python-dotenv reads it back quoted", v)
			}
		}
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
		PrefixPath:   []string{`/s/cudss/0.7 "x"`, "/s/semi;colon", "/s/nccl/2"},
	}
	cache := filepath.Join(dir, "init.cmake")
	if err := os.WriteFile(cache, []byte(CMakeCache(c)), 0o644); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "print.cmake")
	var b strings.Builder
	for _, v := range []string{"CMAKE_CUDA_COMPILER", "CUDAToolkit_ROOT", "CUDNN_ROOT", "CUDNN_INCLUDE_DIR", "CUDNN_LIBRARY", "CMAKE_PREFIX_PATH"} {
		fmt.Fprintf(&b, "include(%q)\nmessage(STATUS \"%s=[${%s}]\")\n", cache, v, v)
	}
	if err := os.WriteFile(script, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("cmake", "-P", script).CombinedOutput()
	if err != nil {
		t.Fatalf("cmake: %v\n%s", err, out)
	}
	// A root with CMake's list separator would be two prefixes: left out.
	for name, want := range map[string]string{"CMAKE_CUDA_COMPILER": c.Compiler, "CUDAToolkit_ROOT": c.ToolkitRoot, "CUDNN_ROOT": c.CudnnRoot, "CUDNN_LIBRARY": c.CudnnLibrary,
		"CMAKE_PREFIX_PATH": `/s/cudss/0.7 "x";/s/nccl/2`} {
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
