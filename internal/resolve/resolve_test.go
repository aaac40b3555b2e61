package resolve

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseReadsTheVersionFileGrammar(t *testing.T) {
	tests := []struct {
		desc, text, want, err string
	}{
		{desc: "a single version", text: "12.4\n", want: "12.4"},
		{desc: "no trailing newline", text: "12.4", want: "12.4"},
		{desc: "a cuDNN spec beside CUDA", text: "12.4 cudnn@9.5\n", want: "12.4 cudnn@9.5"},
		{desc: "specs on separate lines", text: "12.4\ncudnn@9.5\n", want: "12.4 cudnn@9.5"},
		{desc: "comments are ignored", text: "# pinned for the build\n12.4 # the CI uses this\n", want: "12.4"},
		{desc: "CRLF line ends", text: "12.4\r\ncudnn@9.5\r\n", want: "12.4 cudnn@9.5"},
		{desc: "a UTF-8 byte order mark", text: "\xef\xbb\xbf12.4\n", want: "12.4"},
		{desc: "an empty file selects nothing", text: "\n# nothing\n", want: ""},
		{desc: "system", text: "system\n", want: "system"},
		{desc: "a path is refused with file and line", text: "\n../../etc\n", err: `f:2: invalid version "../../etc"`},
		{desc: "command substitution is refused", text: "$(touch pwned)", err: `f:1: invalid version "$(touch"`},
		{desc: "backslash paths are refused", text: `..\..\x`, err: `f:1: invalid version "..\\..\\x"`},
		{desc: "control characters are quoted in the error", text: "12.4\x07", err: `f:1: invalid version "12.4\a"`},
		{desc: "two CUDA versions are refused", text: "12.4 11.8", err: `f:1: "12.4" and "11.8" both select cuda; keep one`},
		{desc: "system with a version is refused", text: "system 12.4", err: `f:1: system cannot be combined with other versions`},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			specs, err := Parse("f", []byte(tt.text))
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("err = %v, want %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var words []string
			for _, s := range specs {
				words = append(words, s.String())
			}
			if got := strings.Join(words, " "); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseToolVersionsTakesCudaAndCudnnLines(t *testing.T) {
	specs, err := ParseToolVersions("t", []byte("nodejs 20.1.0\ncuda 12.4 11.8\ncudnn 9.5\npython 3.12\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) != 2 || specs[0].String() != "12.4" || specs[1].String() != "cudnn@9.5" {
		t.Errorf("specs = %v", specs)
	}
	_, err = ParseToolVersions("t", []byte("cuda ../x\n"))
	if err == nil || err.Error() != `t:1: invalid version "../x"` {
		t.Errorf("err = %v", err)
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFindFollowsThePrecedence(t *testing.T) {
	root := t.TempDir()
	proj := filepath.Join(root, "a b", `q"$x`)
	sub := filepath.Join(proj, "sub", "deep")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	global := filepath.Join(root, "cfg", "version")
	write(t, global, "11.8\n")
	noEnv := func(string) (string, bool) { return "", false }

	sel, _, err := Find(sub, noEnv, global)
	if err != nil || sel.Source.Kind != FromGlobal || sel.Specs[0].String() != "11.8" {
		t.Fatalf("global: %+v %v", sel, err)
	}

	write(t, filepath.Join(proj, ".tool-versions"), "cuda 12.6\n")
	sel, _, _ = Find(sub, noEnv, global)
	if sel.Source.Path != filepath.Join(proj, ".tool-versions") {
		t.Fatalf("tool-versions: %+v", sel)
	}

	write(t, filepath.Join(proj, ".cuda-version"), "12.4\n")
	sel, w, _ := Find(sub, noEnv, global)
	if sel.Source.Path != filepath.Join(proj, ".cuda-version") || sel.Specs[0].String() != "12.4" {
		t.Fatalf("cuda-version: %+v", sel)
	}
	// sub/deep and sub checked both names; proj found the first one.
	if len(w.Files) != 5 || !w.Files[4].Exists {
		t.Errorf("watch = %+v", w.Files)
	}

	write(t, filepath.Join(sub, ".tool-versions"), "nodejs 20\n")
	sel, _, _ = Find(sub, noEnv, global)
	if sel.Source.Path != filepath.Join(proj, ".cuda-version") {
		t.Errorf("a .tool-versions without cuda must be skipped: %+v", sel)
	}

	env := func(k string) (string, bool) { return "13.0", k == EnvVar }
	sel, w, _ = Find(sub, env, global)
	if sel.Source.Kind != FromEnv || sel.Specs[0].String() != "13.0" || !w.EnvSet {
		t.Errorf("env: %+v", sel)
	}
	if sel.Source.String() != "CUDAENV_VERSION" {
		t.Errorf("source = %s", sel.Source)
	}
}

func TestFindReportsBadFilesWithTheirPath(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, ".cuda-version"), "12.4\n$(touch pwned)\n")
	_, w, err := Find(dir, func(string) (string, bool) { return "", false }, "")
	want := filepath.Join(dir, ".cuda-version") + `:2: invalid version "$(touch"`
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %s", err, want)
	}
	if len(w.Files) != 1 || !w.Files[0].Exists {
		t.Errorf("watch = %+v", w)
	}
	if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
		t.Error("a file named pwned appeared")
	}
}

func TestFindRefusesLargeAndOddFiles(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, ".cuda-version"), strings.Repeat("12.4 ", 300))
	_, _, err := Find(dir, func(string) (string, bool) { return "", false }, "")
	if err == nil || !strings.Contains(err.Error(), "larger than 1024 bytes") {
		t.Errorf("large file: %v", err)
	}
	dir2 := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir2, ".cuda-version"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, _, err = Find(dir2, func(string) (string, bool) { return "", false }, "")
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("directory: %v", err)
	}
}

func TestEnvironmentVariableErrorsHaveNoLineNumber(t *testing.T) {
	_, err := Parse(EnvVar, []byte("../x"))
	if err == nil || err.Error() != `CUDAENV_VERSION: invalid version "../x"` {
		t.Errorf("err = %v", err)
	}
}
