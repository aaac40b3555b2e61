package hookenv

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cudaenv/cudaenv/internal/dirs"
	"github.com/cudaenv/cudaenv/internal/envdiff"
	"github.com/cudaenv/cudaenv/internal/resolve"
	"github.com/cudaenv/cudaenv/shell"
)

func TestCheckForGivesExistingFilesAReferenceWithTheirMtime(t *testing.T) {
	dir := t.TempDir()
	stamps := filepath.Join(dir, "stamps")
	f := filepath.Join(dir, ".cuda-version")
	os.WriteFile(f, []byte("12.4\n"), 0o644)
	mt := time.Unix(1700000000, 123456789)
	os.Chtimes(f, mt, mt)
	w := resolve.Watch{Dir: dir, Files: []resolve.FileState{
		{Path: filepath.Join(dir, "sub", ".cuda-version")},
		{Path: f, Exists: true, ModTime: mt},
	}}
	c := CheckFor(stamps, w)
	if c.Files[0].Ref != "" {
		t.Errorf("a missing file got a reference: %q", c.Files[0].Ref)
	}
	ref := c.Files[1].Ref
	fi, err := os.Stat(ref)
	if err != nil || !fi.ModTime().Equal(mt) {
		t.Fatalf("reference %q: %v, mtime %v, want %v", ref, err, fi.ModTime(), mt)
	}
	if again := CheckFor(stamps, w).Files[1].Ref; again != ref {
		t.Errorf("a second check made another reference: %q", again)
	}
}

func TestTheStampsFolderStaysBounded(t *testing.T) {
	stamps := t.TempDir()
	for i := 0; i < maxRefs+5; i++ {
		os.WriteFile(filepath.Join(stamps, strconv.Itoa(i)), nil, 0o644)
	}
	ref := mtimeRef(stamps, time.Unix(1800000000, 0))
	des, _ := os.ReadDir(stamps)
	if len(des) > maxRefs || ref == "" {
		t.Errorf("%d entries after pruning, ref %q", len(des), ref)
	}
}

func TestAnUnwritableStampsFolderMakesTheCheckAlwaysFail(t *testing.T) {
	file := filepath.Join(t.TempDir(), "not-a-dir")
	os.WriteFile(file, nil, 0o644)
	if ref := mtimeRef(filepath.Join(file, "stamps"), time.Now()); ref != "" {
		t.Errorf("ref = %q, want none", ref)
	}
}

func TestParseEnvironKeysWindowsPathAsPATH(t *testing.T) {
	if got := envdiff.ParseEnv([]string{"Path=a;b", "x=1", "bad"}, "windows"); got["PATH"] != "a;b" || got["x"] != "1" || len(got) != 2 {
		t.Errorf("got %v", got)
	}
}

// hookDirs makes a store holding CUDA 12.4.1 and a global default of
// 12.4, and returns its layout.
func hookDirs(t *testing.T) dirs.Dirs {
	t.Helper()
	base := t.TempDir()
	d := dirs.Dirs{Root: filepath.Join(base, "root"), Config: filepath.Join(base, "cfg"), Cache: filepath.Join(base, "cache")}
	tk := filepath.Join(d.CUDA(), "12.4.1")
	for _, p := range []string{filepath.Join(tk, "bin"), filepath.Join(tk, "lib64"), d.Config} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(tk, "receipt.json"), []byte(`{"kind":"cuda","version":"12.4.1"}`), 0o644)
	os.WriteFile(d.GlobalFile(), []byte("12.4\n"), 0o644)
	return d
}

func runHook(t *testing.T, d dirs.Dirs, dir string, env envdiff.Env) (stdout, stderr string) {
	t.Helper()
	var out, errb strings.Builder
	sh, _ := shell.Get("bash")
	Run(Input{Shell: sh, Dir: dir, Env: env, Dirs: d, GOOS: "linux", Stdout: &out, Stderr: &errb}, "")
	return out.String(), errb.String()
}

func TestAStateCudaenvDidNotWriteIsDroppedWithOneWarning(t *testing.T) {
	d := hookDirs(t)
	dir := t.TempDir()
	states := map[string]string{
		"a name that is shell code": `{"scalars":{"x;touch pwned;y":{"value":"1"}}}`,
		"HOME with a value":         `{"scalars":{"HOME":{"value":"/home/me","prev":"/tmp/evil"}}}`,
		"PATH to unset":             `{"scalars":{"PATH":{"value":"/usr/bin:/bin"}}}`,
		"PATH's entries to strip":   `{"lists":{"PATH":{"added":["/usr/bin","/bin"],"created":true}}}`,
	}
	for desc, state := range states {
		t.Run(desc, func(t *testing.T) {
			env := envdiff.Env{"PATH": "/usr/bin:/bin", "HOME": "/home/me", envdiff.StateVar: state}
			stdout, stderr := runHook(t, d, dir, env)
			if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "cudaenv: warning: ignoring __CUDAENV_STATE, which cudaenv did not write: ") {
				t.Errorf("stderr = %q, want one warning", stderr)
			}
			for _, bad := range []string{"pwned", "export HOME", "unset HOME", "unset PATH", "/tmp/evil"} {
				if strings.Contains(stdout, bad) {
					t.Errorf("the hook's code obeys the state (%s):\n%s", bad, stdout)
				}
			}
			want := "export PATH=" + filepath.Join(d.CUDA(), "12.4.1", "bin") + ":/usr/bin:/bin\n"
			if !strings.Contains(stdout, quote(want)) {
				t.Errorf("PATH is not the user's with the toolkit in front:\n%s", stdout)
			}
		})
	}
}

// quote renders export NAME=VALUE as the bash dialect does.
func quote(line string) string {
	name, value, _ := strings.Cut(strings.TrimSuffix(strings.TrimPrefix(line, "export "), "\n"), "=")
	sh, _ := shell.Get("bash")
	return sh.Set(name, value)
}

func TestTheHookEscapesWhatItPrints(t *testing.T) {
	d := hookDirs(t)
	dir := filepath.Join(t.TempDir(), "evil\x1b]0;owned\x07\x1b[2J")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, ".cuda-version"), []byte("nope\n"), 0o644)
	_, stderr := runHook(t, d, dir, envdiff.Env{"PATH": "/usr/bin"})
	if strings.ContainsAny(stderr, "\x1b\x07") || !strings.Contains(stderr, `evil\x1b]0;owned\x07\x1b[2J/.cuda-version:1: invalid version "nope"`) {
		t.Errorf("stderr = %q", stderr)
	}
}

func TestAFileThatIsNotRegularFallsThroughWithOneWarning(t *testing.T) {
	d := hookDirs(t)
	dir := t.TempDir()
	if err := mkfifo(filepath.Join(dir, ".cuda-version")); err != nil {
		t.Skip(err)
	}
	stdout, stderr := runHook(t, d, dir, envdiff.Env{"PATH": "/usr/bin"})
	if want := "cudaenv: warning: " + filepath.Join(dir, ".cuda-version") + ": not a regular file (a named pipe); skipped\n"; stderr != want {
		t.Errorf("stderr = %q, want %q", stderr, want)
	}
	if !strings.Contains(stdout, "CUDA_HOME="+filepath.Join(d.CUDA(), "12.4.1")) {
		t.Errorf("the global default is not active:\n%s", stdout)
	}
}

func TestRefuseTakesBackWhatWasActive(t *testing.T) {
	d := hookDirs(t)
	tk := filepath.Join(d.CUDA(), "12.4.1")
	// Activate, then refuse with the environment that resulted.
	stdout, _ := runHook(t, d, t.TempDir(), envdiff.Env{"PATH": "/usr/bin"})
	if !strings.Contains(stdout, tk) {
		t.Fatalf("nothing activated:\n%s", stdout)
	}
	changes, _ := envdiff.Apply(envdiff.Env{"PATH": "/usr/bin"}, envdiff.State{}, envdiff.Want{
		Prepend: map[string][]string{"PATH": {filepath.Join(tk, "bin")}},
		Set:     map[string]string{"CUDA_PATH": tk, "CUDA_HOME": tk},
	}, ":")
	env := envdiff.Result(envdiff.Env{"PATH": "/usr/bin"}, changes)
	var out, errb strings.Builder
	sh, _ := shell.Get("bash")
	Refuse(Input{Shell: sh, Env: env, GOOS: "linux", Stdout: &out, Stderr: &errb}, errors.New("CUDAENV_ROOT=\"rel\" is not an absolute path"), "")
	if errb.String() != "cudaenv: CUDAENV_ROOT=\"rel\" is not an absolute path\n" {
		t.Errorf("stderr = %q", errb.String())
	}
	for _, want := range []string{"export PATH=/usr/bin\n", "unset CUDA_HOME\n", "unset CUDA_PATH\n", "unset __CUDAENV_STATE\n", "return 1"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q in:\n%s", want, out.String())
		}
	}
}
