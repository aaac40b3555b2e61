package resolve

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cudaenv/cudaenv/internal/testwait"
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
	// sub/deep and sub checked both names; proj found the first one, and
	// its lock (none yet) is watched so that writing one is noticed.
	if len(w.Files) != 6 || !w.Files[4].Exists || w.Files[5].Exists || filepath.Base(w.Files[5].Path) != ".cuda-version.lock" {
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
	sel, _, err := Find(dir2, func(string) (string, bool) { return "", false }, "")
	if err != nil || len(sel.Warnings) != 1 || !strings.Contains(sel.Warnings[0], "not a regular file (a directory); skipped") {
		t.Errorf("directory: %v, warnings %q", err, sel.Warnings)
	}
}

func TestEnvironmentVariableErrorsHaveNoLineNumber(t *testing.T) {
	_, err := Parse(EnvVar, []byte("../x"))
	if err == nil || err.Error() != `CUDAENV_VERSION: invalid version "../x"` {
		t.Errorf("err = %v", err)
	}
}

// project makes root/proj/sub with a .cuda-version of 12.4 in proj and a
// global default of 11.8, and returns sub and the global file.
func project(t *testing.T) (sub, global string) {
	root := t.TempDir()
	sub = filepath.Join(root, "proj", "sub")
	write(t, filepath.Join(root, "proj", ".cuda-version"), "12.4\n")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	global = filepath.Join(root, "cfg", "version")
	write(t, global, "11.8\n")
	return sub, global
}

func noEnv(string) (string, bool) { return "", false }

// findQuickly is Find that fails the test if it blocks (on a FIFO, say)
// until the test's deadline.
func findQuickly(t *testing.T, dir, global string) (Selection, Watch, error) {
	t.Helper()
	type res struct {
		sel Selection
		w   Watch
		err error
	}
	done := make(chan res, 1)
	go func() { s, w, err := Find(dir, noEnv, global); done <- res{s, w, err} }()
	select {
	case r := <-done:
		return r.sel, r.w, r.err
	case <-testwait.After(t):
		t.Fatal("Find blocked")
	}
	return Selection{}, Watch{}, nil
}

func TestFilesThatAreNotRegularAreSkippedWithAWarning(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no named pipes or /dev here")
	}
	tests := []struct {
		desc string
		make func(t *testing.T, path string)
		want string
	}{
		{"a named pipe", func(t *testing.T, p string) {
			if err := mkfifo(p); err != nil {
				t.Skip(err)
			}
		}, "not a regular file (a named pipe); skipped"},
		{"a symlink to /dev/zero", func(t *testing.T, p string) { symlink(t, "/dev/zero", p) }, "not a regular file (a device); skipped"},
		{"a symlink to a named pipe", func(t *testing.T, p string) {
			fifo := filepath.Join(t.TempDir(), "fifo")
			if err := mkfifo(fifo); err != nil {
				t.Skip(err)
			}
			symlink(t, fifo, p)
		}, "not a regular file (a named pipe); skipped"},
		{"a symlink to a proc file", func(t *testing.T, p string) {
			if runtime.GOOS != "linux" {
				t.Skip("procfs is Linux's")
			}
			// A regular file to stat, holding a number that would parse.
			symlink(t, "/proc/sys/kernel/ngroups_max", p)
		}, "on the kernel's proc file system, not a version file; skipped"},
	}
	for _, tt := range tests {
		for _, name := range []string{FileName, ToolVersionsName} {
			t.Run(tt.desc+" named "+name, func(t *testing.T) {
				sub, global := project(t)
				path := filepath.Join(sub, name)
				tt.make(t, path)
				sel, w, err := findQuickly(t, sub, global)
				if err != nil {
					t.Fatal(err)
				}
				if sel.Source.Path != filepath.Join(filepath.Dir(sub), FileName) || sel.Specs[0].String() != "12.4" {
					t.Errorf("selection = %+v, want the parent's 12.4", sel)
				}
				if want := path + ": " + tt.want; len(sel.Warnings) != 1 || sel.Warnings[0] != want {
					t.Errorf("warnings = %q, want [%q]", sel.Warnings, want)
				}
				if !w.Files[0].Exists && !w.Files[1].Exists {
					t.Errorf("the skipped file is not watched: %+v", w.Files)
				}
			})
		}
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skip(err)
	}
}

func TestAFileThatCannotBeReadInTimeIsSkipped(t *testing.T) {
	sub, global := project(t)
	write(t, filepath.Join(sub, FileName), "13.0\n")
	block := make(chan struct{})
	defer close(block)
	saved, savedTimeout := readRegular, readTimeout
	defer func() { readRegular, readTimeout = saved, savedTimeout }()
	readTimeout = 50 * time.Millisecond
	readRegular = func(path string, fi fs.FileInfo, limit int64) ([]byte, string, error) {
		if filepath.Dir(path) == sub {
			<-block // a hung network mount
		}
		return saved(path, fi, limit)
	}
	sel, _, err := findQuickly(t, sub, global)
	if err != nil || sel.Specs[0].String() != "12.4" {
		t.Fatalf("selection = %+v, %v; want the parent's 12.4", sel, err)
	}
	if len(sel.Warnings) != 1 || !strings.Contains(sel.Warnings[0], "not read within 50ms; skipped") {
		t.Errorf("warnings = %q", sel.Warnings)
	}
}

func TestToolVersionsFiles(t *testing.T) {
	big := strings.Repeat("nodejs 20.1.0 # a long comment to fill the file up\n", 40) // 2 KiB
	tests := []struct {
		desc, text, want, warning string
	}{
		{"a large one without cuda is skipped and the parent applies", big, "12.4", ""},
		{"a large one with a cuda line is read", big + "cuda 13.0\n", "13.0", ""},
		{"one over 64 KiB is skipped with a warning", strings.Repeat(big, 40) + "cuda 13.0\n", "12.4", "larger than 65536 bytes; skipped"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			sub, global := project(t)
			write(t, filepath.Join(sub, ToolVersionsName), tt.text)
			sel, _, err := Find(sub, noEnv, global)
			if err != nil || len(sel.Specs) != 1 || sel.Specs[0].String() != tt.want {
				t.Fatalf("selection = %+v, %v; want %s", sel, err, tt.want)
			}
			if tt.warning == "" && len(sel.Warnings) != 0 || tt.warning != "" && (len(sel.Warnings) != 1 || !strings.HasSuffix(sel.Warnings[0], tt.warning)) {
				t.Errorf("warnings = %q, want %q", sel.Warnings, tt.warning)
			}
		})
	}
	t.Run("a large one without cuda falls through to the global default", func(t *testing.T) {
		dir := t.TempDir()
		global := filepath.Join(dir, "version")
		write(t, global, "11.8\n")
		write(t, filepath.Join(dir, "p", ToolVersionsName), big)
		sel, _, err := Find(filepath.Join(dir, "p"), noEnv, global)
		if err != nil || sel.Source.Kind != FromGlobal {
			t.Errorf("selection = %+v, %v; want the global default", sel, err)
		}
	})
}

// A working directory given as the shell may have it, ending in "..", is
// the folder it names: the folder it leaves does not select.
func TestFindWalksUpFromTheFolderAPathWithDotDotNames(t *testing.T) {
	root := t.TempDir()
	sub := filepath.Join(root, "x", "sub")
	write(t, filepath.Join(sub, FileName), "13.0\n")
	global := filepath.Join(root, "cfg", "version")
	write(t, global, "11.8\n")
	sel, _, err := Find(sub+"/..", noEnv, global)
	if err != nil || len(sel.Specs) != 1 || sel.Specs[0].String() != "11.8" || sel.Source.Kind != FromGlobal {
		t.Errorf("Find(%q) = %+v, %v; want the global 11.8", sub+"/..", sel, err)
	}
}
