package shims

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/cudaenv/cudaenv/internal/dirs"
	"github.com/cudaenv/cudaenv/internal/envdiff"
	"github.com/cudaenv/cudaenv/store"
)

// fakeStore lays out a store under a temporary root. files maps paths
// inside the root to contents; a path under a bin folder is made executable
// unless it ends in ".noexec".
func fakeStore(t *testing.T, files map[string]string) *store.Store {
	t.Helper()
	root := t.TempDir()
	for p, body := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.Contains(p, "/bin/") && !strings.HasSuffix(p, ".noexec") {
			mode = 0o755
		}
		if err := os.WriteFile(full, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	return store.New(dirs.Dirs{Root: root, Config: filepath.Join(root, "config"), Cache: filepath.Join(root, "cache")})
}

const receipt = `{"kind":"cuda","source":"test"}`

func TestNames(t *testing.T) {
	st := fakeStore(t, map[string]string{
		"cuda/12.4.1/receipt.json":          receipt,
		"cuda/12.4.1/bin/nvcc":              "",
		"cuda/12.4.1/bin/ptxas":             "",
		"cuda/12.4.1/bin/readme.noexec":     "",
		"cuda/12.4.1/bin/.hidden":           "",
		"cuda/12.4.1/bin/cudaenv-x":         "",
		"cuda/13.0.0/receipt.json":          receipt,
		"cuda/13.0.0/bin/nvcc":              "",
		"cuda/13.0.0/bin/nsys":              "",
		"cuda/13.0.0/bin/x64/nvcc.exe":      "",
		"cuda/13.0.0/bin/x64/cublas.dll":    "",
		"cuda/13.0.0/bin/ncu.BAT":           "",
		"cuda/11.8.0/bin/gone":              "", // no receipt: not installed
		"cuda/12.2.0/receipt.json":          "{broken",
		"cuda/12.2.0/bin/nvcc":              "",
		"cudnn/9.5.1-cuda12/receipt.json":   receipt,
		"cudnn/9.5.1-cuda12/bin/cudnn_tool": "",
	})
	got, err := Names(st, "linux")
	if err != nil {
		t.Fatal(err)
	}
	// 12.2.0's receipt is broken, but its bin/nvcc is named by 12.4.1 too.
	want := []string{"cudnn_tool", "ncu.BAT", "nsys", "nvcc", "ptxas"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Names(linux) = %q, want %q", got, want)
	}
	got, _ = Names(st, "windows")
	if want := []string{"ncu", "nvcc"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Names(windows) = %q, want %q", got, want)
	}
}

func TestCommandName(t *testing.T) {
	for _, c := range []struct{ arg0, goos, want string }{
		{"nvcc", "linux", "nvcc"},
		{"/home/u/.local/share/cudaenv/shims/nvcc", "linux", "nvcc"},
		{`C:\Users\u\AppData\Local\cudaenv\shims\nvcc.exe`, "windows", "nvcc"},
		{`C:/x/NVCC.EXE`, "windows", "NVCC"},
		{`nvcc.exe`, "linux", "nvcc.exe"},
		{`a\b`, "linux", `a\b`},
	} {
		if got := CommandName(c.arg0, c.goos); got != c.want {
			t.Errorf("CommandName(%q, %s) = %q, want %q", c.arg0, c.goos, got, c.want)
		}
	}
	for name, want := range map[string]bool{"nvcc": true, "cudaenv": false, "cudaenv.test": false, "cudaenv-shim": false, "": false} {
		if got := IsShimName(name, "linux"); got != want {
			t.Errorf("IsShimName(%q) = %v", name, got)
		}
	}
	if IsShimName("CudaEnv", "windows") {
		t.Error("IsShimName(CudaEnv, windows) = true; Windows names are case-insensitive")
	}
}

func readShims(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, de := range des {
		out = append(out, de.Name())
	}
	sort.Strings(out)
	return out
}

func TestRehashUnix(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks")
	}
	st := fakeStore(t, map[string]string{
		"cuda/12.4.1/receipt.json": receipt,
		"cuda/12.4.1/bin/nvcc":     "",
		"cuda/12.4.1/bin/ptxas":    "",
	})
	self := filepath.Join(t.TempDir(), "cudaenv")
	os.WriteFile(self, nil, 0o755)
	dir := st.Dirs.Shims()
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "stale"), nil, 0o755)
	os.WriteFile(filepath.Join(dir, ".nvcc.tmp-123"), nil, 0o755)

	rep, err := Rehash(st, self, "linux", "")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rep.Added, []string{"nvcc", "ptxas"}) || !reflect.DeepEqual(rep.Removed, []string{"stale"}) || rep.Kept != 0 {
		t.Errorf("first rehash: %+v", rep)
	}
	if got := readShims(t, dir); !reflect.DeepEqual(got, []string{"nvcc", "ptxas"}) {
		t.Errorf("shims = %q", got)
	}
	if target, _ := os.Readlink(filepath.Join(dir, "nvcc")); target != self {
		t.Errorf("nvcc -> %q, want %q", target, self)
	}

	// Again: nothing to do. Then a tool goes away, and the binary moves.
	if rep, _ := Rehash(st, self, "linux", ""); len(rep.Added)+len(rep.Removed) != 0 || rep.Kept != 2 {
		t.Errorf("second rehash: %+v", rep)
	}
	os.Remove(filepath.Join(st.Dirs.CUDA(), "12.4.1", "bin", "ptxas"))
	moved := self + "-new"
	rep, err = Rehash(st, moved, "linux", "")
	if err != nil || !reflect.DeepEqual(rep.Added, []string{"nvcc"}) || !reflect.DeepEqual(rep.Removed, []string{"ptxas"}) {
		t.Errorf("third rehash: %+v, %v", rep, err)
	}
	if target, _ := os.Readlink(filepath.Join(dir, "nvcc")); target != moved {
		t.Errorf("nvcc -> %q, want %q", target, moved)
	}
	if _, err := Rehash(st, "relative/cudaenv", "linux", ""); err == nil {
		t.Error("Rehash with a relative binary path succeeded")
	}
}

func TestRehashWindows(t *testing.T) {
	// Windows shims are hard links (or copies) named NAME.exe; the logic
	// is the same on any OS.
	st := fakeStore(t, map[string]string{
		"cuda/13.0.0/receipt.json":      receipt,
		"cuda/13.0.0/bin/nvcc.exe":      "",
		"cuda/13.0.0/bin/x64/ptxas.EXE": "",
		"cuda/13.0.0/bin/cudart64.dll":  "",
	})
	self := filepath.Join(t.TempDir(), "cudaenv-shim.exe")
	os.WriteFile(self, []byte("binary"), 0o755)
	rep, err := Rehash(st, self, "windows", "")
	if err != nil || !reflect.DeepEqual(rep.Added, []string{"nvcc", "ptxas"}) {
		t.Fatalf("rehash: %+v, %v", rep, err)
	}
	dir := st.Dirs.Shims()
	if got := readShims(t, dir); !reflect.DeepEqual(got, []string{"nvcc.exe", "ptxas.exe"}) {
		t.Errorf("shims = %q", got)
	}
	fi, _ := os.Stat(filepath.Join(dir, "nvcc.exe"))
	si, _ := os.Stat(self)
	if !os.SameFile(fi, si) {
		t.Error("nvcc.exe is not a hard link to the shim binary")
	}
	if rep, _ := Rehash(st, self, "windows", ""); rep.Kept != 2 || len(rep.Added) != 0 {
		t.Errorf("second rehash: %+v", rep)
	}
	// A copy (as made across volumes) with self's size and mtime is kept.
	os.Remove(filepath.Join(dir, "nvcc.exe"))
	if err := os.WriteFile(filepath.Join(dir, "nvcc.exe"), []byte("binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(filepath.Join(dir, "nvcc.exe"), si.ModTime(), si.ModTime())
	if rep, _ := Rehash(st, self, "windows", ""); rep.Kept != 2 {
		t.Errorf("a matching copy was replaced: %+v", rep)
	}
	// A new binary (installed as a new file) replaces them all.
	os.Remove(self)
	os.WriteFile(self, []byte("binary v2"), 0o755)
	if rep, _ := Rehash(st, self, "windows", ""); len(rep.Added) != 2 {
		t.Errorf("after an upgrade: %+v", rep)
	}
}

func TestLinkOrCopyCopies(t *testing.T) {
	src := filepath.Join(t.TempDir(), "src")
	os.WriteFile(src, []byte("payload"), 0o755)
	dst := filepath.Join(t.TempDir(), "dst")
	if err := linkOrCopy(src, dst); err != nil {
		t.Fatal(err)
	}
	if !upToDate(dst, src, "windows") {
		t.Error("a fresh link or copy is not up to date")
	}
}

func TestWithoutDir(t *testing.T) {
	for _, c := range []struct{ path, dir, goos, want string }{
		{"/s/shims:/usr/bin:/s/shims/:/s/shims", "/s/shims", "linux", "/usr/bin"},
		{"/usr/bin:/bin", "/s/shims", "linux", "/usr/bin:/bin"},
		{"/other/shims:/bin", "/s/shims", "linux", "/other/shims:/bin"},
		{"", "/s/shims", "linux", ""},
		{`C:\U\cudaenv\SHIMS;C:\Windows;c:\u\cudaenv\shims\`, `C:\U\cudaenv\shims`, "windows", `C:\Windows`},
	} {
		if runtime.GOOS != "windows" && c.goos == "windows" {
			continue // filepath.Clean is the host's
		}
		if got := withoutDir(c.path, c.dir, c.goos); got != c.want {
			t.Errorf("withoutDir(%q, %q) = %q, want %q", c.path, c.dir, got, c.want)
		}
	}
}

func TestParseEnvironWindowsPath(t *testing.T) {
	env := envdiff.ParseEnv([]string{"Path=C:\\x", "=C:=C:\\", "A=b=c"}, "windows")
	if env["PATH"] != `C:\x` || env["A"] != "b=c" || len(env) != 2 {
		t.Errorf("parseEnviron = %v", env)
	}
}

// call resolves a shim call in dir with the store's layout in the
// environment.
func call(t *testing.T, st *store.Store, name, dir string, extra ...string) (Target, error) {
	t.Helper()
	environ := append([]string{
		"CUDAENV_ROOT=" + st.Dirs.Root, "CUDAENV_CONFIG_DIR=" + st.Dirs.Config, "CUDAENV_CACHE_DIR=" + st.Dirs.Cache,
		"PATH=" + st.Dirs.Shims() + ":/usr/bin:/bin",
	}, extra...)
	return Resolve(Call{Name: name, Args: []string{name, "-x", "y z"}, Environ: environ, Dir: dir, GOOS: "linux"})
}

func envMap(t Target) map[string]string {
	m := map[string]string{}
	for _, kv := range t.Env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

func TestResolve(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("exec bits")
	}
	target := t.TempDir()
	os.MkdirAll(filepath.Join(target, "bin"), 0o755)
	os.WriteFile(filepath.Join(target, "bin", "nvcc"), nil, 0o755)
	st := fakeStore(t, map[string]string{
		"cuda/12.4.1/receipt.json":          receipt,
		"cuda/12.4.1/bin/nvcc":              "",
		"cuda/12.4.1/lib64/libcudart.so.12": "",
		"cuda/11.8.0/receipt.json":          receipt,
		"cuda/11.8.0/bin/nvcc":              "",
		"cuda/11.8.0/bin/only118":           "",
		"cuda/12.6.0/receipt.json":          `{"kind":"cuda","source":"link","target":` + quoteJSON(target) + `}`,
		"cudnn/9.5.1-cuda12/receipt.json":   receipt,
		"proj/.cuda-version":                "12.4 cudnn@9.5\n",
		"proj/sub/deeper/keep":              "",
		"linked/.cuda-version":              "12.6\n",
		"old/.cuda-version":                 "11\n",
		"none/keep":                         "",
	})
	root := st.Dirs.Root

	tg, err := call(t, st, "nvcc", filepath.Join(root, "proj", "sub", "deeper"))
	if err != nil {
		t.Fatal(err)
	}
	nvcc := filepath.Join(root, "cuda", "12.4.1", "bin", "nvcc")
	if tg.Path != nvcc || !reflect.DeepEqual(tg.Args, []string{nvcc, "-x", "y z"}) {
		t.Errorf("target = %+v", tg)
	}
	env := envMap(tg)
	if want := filepath.Join(root, "cuda", "12.4.1", "bin") + ":/usr/bin:/bin"; env["PATH"] != want {
		t.Errorf("PATH = %q, want %q (shims removed, toolkit first)", env["PATH"], want)
	}
	if env["CUDNN_PATH"] != filepath.Join(root, "cudnn", "9.5.1-cuda12") || env["CUDA_HOME"] != filepath.Join(root, "cuda", "12.4.1") {
		t.Errorf("env = %v", env)
	}
	if _, err := envdiff.Decode(env[envdiff.StateVar]); err != nil || env[envdiff.StateVar] == "" {
		t.Errorf("state %q: %v", env[envdiff.StateVar], err)
	}

	// A linked toolkit runs from its target.
	tg, err = call(t, st, "nvcc", filepath.Join(root, "linked"))
	if err != nil || tg.Path != filepath.Join(target, "bin", "nvcc") {
		t.Errorf("linked: %+v, %v", tg, err)
	}

	// The hook activated 11.8 in this environment: the shim takes that back.
	hooked, _ := call(t, st, "nvcc", filepath.Join(root, "old"))
	var hookedEnv []string
	for _, kv := range hooked.Env {
		if !strings.HasPrefix(kv, "CUDAENV_") {
			hookedEnv = append(hookedEnv, kv)
		}
	}
	tg, err = Resolve(Call{Name: "nvcc", Args: []string{"nvcc"}, Environ: append(hookedEnv,
		"CUDAENV_ROOT="+root, "CUDAENV_CONFIG_DIR="+st.Dirs.Config), Dir: filepath.Join(root, "proj"), GOOS: "linux"})
	if err != nil {
		t.Fatal(err)
	}
	if env := envMap(tg); strings.Contains(env["PATH"], "11.8.0") || strings.Contains(env["LD_LIBRARY_PATH"], "11.8.0") {
		t.Errorf("11.8 left behind: %v", env)
	}

	// Errors.
	_, err = call(t, st, "only118", filepath.Join(root, "proj"))
	var nf *NotFoundError
	if !errors.As(err, &nf) || !strings.Contains(err.Error(), "only118: not in CUDA 12.4.1 cudnn@9.5.1 (selected by ") || !strings.HasSuffix(err.Error(), "; it is in 11.8.0") {
		t.Errorf("missing command: %v", err)
	}
	if _, err = call(t, st, "nvcc", filepath.Join(root, "none")); !errors.Is(err, ErrNothingSelected) {
		t.Errorf("nothing selected: %v", err)
	}
	if _, err = call(t, st, "nvcc", filepath.Join(root, "none"), "CUDAENV_VERSION=13"); err == nil || !strings.Contains(err.Error(), "CUDA 13 (selected by CUDAENV_VERSION) is not installed") {
		t.Errorf("not installed: %v", err)
	}
	if _, err = call(t, st, "nvcc", filepath.Join(root, "none"), "CUDAENV_VERSION=system"); !errors.As(err, &nf) || !strings.Contains(err.Error(), "cudaenv steps aside here (system, set by CUDAENV_VERSION)") {
		t.Errorf("system without nvcc on PATH: %v", err)
	}
}

func quoteJSON(s string) string { return string(appendJSONString(nil, s)) }

// A Windows shim call, resolved with Windows rules on any host: nvcc.exe
// from bin or bin\x64, Path taken as PATH, ';' between entries,
// CUDA_PATH_V<major>_<minor> set.
func TestResolveWindowsRules(t *testing.T) {
	st := fakeStore(t, map[string]string{
		"cuda/13.0.2/receipt.json":      receipt,
		"cuda/13.0.2/bin/nvcc.exe":      "",
		"cuda/13.0.2/bin/x64/ptxas.exe": "",
		"proj/.cuda-version":            "13.0\n",
	})
	root := st.Dirs.Root
	environ := []string{"CUDAENV_ROOT=" + root, "CUDAENV_CONFIG_DIR=" + st.Dirs.Config,
		"Path=" + st.Dirs.Shims() + `;C:\Windows;` + st.Dirs.Shims()}
	for name, want := range map[string]string{
		"nvcc":  filepath.Join(root, "cuda", "13.0.2", "bin", "nvcc.exe"),
		"ptxas": filepath.Join(root, "cuda", "13.0.2", "bin", "x64", "ptxas.exe"),
	} {
		tg, err := Resolve(Call{Name: name, Args: []string{name + ".exe", "/?"}, Environ: environ, Dir: filepath.Join(root, "proj"), GOOS: "windows"})
		if err != nil {
			t.Fatal(err)
		}
		if tg.Path != want || !reflect.DeepEqual(tg.Args, []string{want, "/?"}) {
			t.Errorf("%s: %+v", name, tg)
		}
		env := envMap(tg)
		p13 := filepath.Join(root, "cuda", "13.0.2")
		wantPath := filepath.Join(p13, "bin") + ";" + filepath.Join(p13, "bin", "x64") + `;C:\Windows`
		if _, dup := env["Path"]; dup || env["PATH"] != wantPath {
			t.Errorf("%s: PATH %q (Path present: %v), want %q", name, env["PATH"], dup, wantPath)
		}
		if env["CUDA_PATH_V13_0"] != p13 || env["CUDA_PATH"] != p13 {
			t.Errorf("%s: env %v", name, env)
		}
	}
}
