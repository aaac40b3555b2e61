package cudaenv_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cudaenv/cudaenv/fetch/fetchtest"
)

// node is a value of the YAML subset action.yml is written in: block
// mappings, block sequences of mappings, and plain or double-quoted
// scalars on one line.
type node struct {
	scalar string
	keys   []string
	m      map[string]*node
	list   []*node
}

func (n *node) get(path ...string) *node {
	for _, k := range path {
		if n == nil || n.m == nil {
			return nil
		}
		n = n.m[k]
	}
	return n
}

func (n *node) str(path ...string) string {
	if v := n.get(path...); v != nil {
		return v.scalar
	}
	return ""
}

type yline struct {
	indent int
	text   string
	no     int
}

// parseYAML reads the subset; anything else fails the test, so the action
// stays in a form this test reads exactly.
func parseYAML(t *testing.T, data []byte) *node {
	t.Helper()
	var lines []yline
	for i, l := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimLeft(l, " ")
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if strings.Contains(l, "\t") {
			t.Fatalf("action.yml:%d: a tab", i+1)
		}
		lines = append(lines, yline{len(l) - len(trimmed), strings.TrimRight(trimmed, " "), i + 1})
	}
	p := &yparser{t: t, lines: lines}
	n := p.block(0)
	if p.i != len(lines) {
		t.Fatalf("action.yml:%d: unexpected indentation", lines[p.i].no)
	}
	return n
}

type yparser struct {
	t     *testing.T
	lines []yline
	i     int
}

func (p *yparser) block(indent int) *node {
	if p.i < len(p.lines) && p.lines[p.i].indent == indent && strings.HasPrefix(p.lines[p.i].text, "- ") {
		n := &node{}
		for p.i < len(p.lines) && p.lines[p.i].indent == indent && strings.HasPrefix(p.lines[p.i].text, "- ") {
			// "- key: value" opens a mapping whose keys sit two columns in.
			p.lines[p.i].text = p.lines[p.i].text[2:]
			p.lines[p.i].indent += 2
			n.list = append(n.list, p.mapping(indent+2))
		}
		return n
	}
	return p.mapping(indent)
}

func (p *yparser) mapping(indent int) *node {
	n := &node{m: map[string]*node{}}
	for p.i < len(p.lines) && p.lines[p.i].indent == indent {
		l := p.lines[p.i]
		key, val, ok := strings.Cut(l.text, ":")
		if !ok || strings.HasPrefix(l.text, "- ") {
			p.t.Fatalf("action.yml:%d: expected key: value", l.no)
		}
		if _, dup := n.m[key]; dup {
			p.t.Fatalf("action.yml:%d: %s twice", l.no, key)
		}
		p.i++
		val = strings.TrimSpace(val)
		var child *node
		if val == "" {
			if p.i < len(p.lines) && p.lines[p.i].indent > indent {
				child = p.block(p.lines[p.i].indent)
			} else {
				child = &node{}
			}
		} else {
			if strings.HasPrefix(val, "\"") {
				if len(val) < 2 || !strings.HasSuffix(val, "\"") || strings.Contains(val[1:len(val)-1], "\"") || strings.Contains(val, "\\") {
					p.t.Fatalf("action.yml:%d: a double-quoted value this test does not read", l.no)
				}
				val = val[1 : len(val)-1]
			} else if strings.ContainsAny(val[:1], "'|>&*!{[") {
				p.t.Fatalf("action.yml:%d: YAML this test does not read: %s", l.no, val)
			}
			child = &node{scalar: val}
		}
		n.keys = append(n.keys, key)
		n.m[key] = child
	}
	return n
}

var scriptRun = regexp.MustCompile(`^bash "\$GITHUB_ACTION_PATH/(\.github/actions/cudaenv/[a-z]+\.sh)"$`)

// TestActionStepsAreScriptsOfThisRepository checks the shape of action.yml:
// a composite action whose run steps are the scripts the next test runs.
func TestActionStepsAreScriptsOfThisRepository(t *testing.T) {
	data, err := os.ReadFile("action.yml")
	if err != nil {
		t.Fatal(err)
	}
	a := parseYAML(t, data)
	if a.str("runs", "using") != "composite" {
		t.Fatalf("runs.using = %q", a.str("runs", "using"))
	}
	steps := a.get("runs", "steps").list
	var names []string
	for _, s := range steps {
		names = append(names, s.str("id")+"/"+s.str("uses")+s.str("run"))
		if run := s.str("run"); run != "" {
			m := scriptRun.FindStringSubmatch(run)
			if m == nil || s.str("shell") != "bash" {
				t.Errorf("step %q: run %q, shell %q; want bash \"$GITHUB_ACTION_PATH/.github/actions/cudaenv/NAME.sh\"", s.str("name"), run, s.str("shell"))
				continue
			}
			if fi, err := os.Stat(m[1]); err != nil || !fi.Mode().IsRegular() {
				t.Errorf("step %q runs %s: %v", s.str("name"), m[1], err)
			}
		}
	}
	want := []string{
		"/actions/setup-go@v5",
		`setup/bash "$GITHUB_ACTION_PATH/.github/actions/cudaenv/setup.sh"`,
		"cache/actions/cache@v4",
		`/bash "$GITHUB_ACTION_PATH/.github/actions/cudaenv/install.sh"`,
		`/bash "$GITHUB_ACTION_PATH/.github/actions/cudaenv/export.sh"`,
	}
	if strings.Join(names, "\n") != strings.Join(want, "\n") {
		t.Errorf("steps:\n%s\nwant:\n%s", strings.Join(names, "\n"), strings.Join(want, "\n"))
	}
	cache := steps[2]
	if cache.str("with", "key") != "${{ steps.setup.outputs.cache-key }}" || cache.str("with", "path") != "${{ steps.setup.outputs.cache-dir }}" {
		t.Errorf("the cache step is not keyed by the setup step's outputs: %+v", cache.get("with").m)
	}
	if a.str("inputs", "locked", "default") != "true" {
		t.Error("locked does not default to true")
	}
}

// githubRun runs an action's run steps as the runner would: inputs and
// step outputs substituted into each step's env, $GITHUB_ENV and
// $GITHUB_PATH carried from one step to the next.
type githubRun struct {
	t         *testing.T
	action    *node
	base      []string // the environment every step starts from
	workspace string
	inputs    map[string]string
	outputs   map[string]map[string]string // step id → name → value
	envFile   string
	pathFile  string
}

var expr = regexp.MustCompile(`\$\{\{ *([a-z_.-]+) *\}\}`)

func (g *githubRun) eval(s string) string {
	return expr.ReplaceAllStringFunc(s, func(m string) string {
		ref := expr.FindStringSubmatch(m)[1]
		parts := strings.Split(ref, ".")
		switch {
		case ref == "github.action_path":
			wd, _ := os.Getwd()
			return wd
		case len(parts) == 2 && parts[0] == "inputs":
			if v, ok := g.inputs[parts[1]]; ok {
				return v
			}
			return g.action.str("inputs", parts[1], "default")
		case len(parts) == 4 && parts[0] == "steps" && parts[2] == "outputs":
			return g.outputs[parts[1]][parts[3]]
		}
		g.t.Fatalf("action.yml uses %s, which this test does not evaluate", m)
		return ""
	})
}

// fileVars reads $GITHUB_ENV or $GITHUB_OUTPUT: NAME=value lines and
// NAME<<DELIMITER blocks.
func fileVars(t *testing.T, path string) [][2]string {
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out [][2]string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if name, delim, ok := strings.Cut(line, "<<"); ok && !strings.Contains(name, "=") {
			var val []string
			for sc.Scan() && sc.Text() != delim {
				val = append(val, sc.Text())
			}
			out = append(out, [2]string{name, strings.Join(val, "\n")})
			continue
		}
		if name, val, ok := strings.Cut(line, "="); ok {
			out = append(out, [2]string{name, val})
		} else if line != "" {
			t.Fatalf("%s: unreadable line %q", path, line)
		}
	}
	return out
}

func readLines(t *testing.T, path string) []string {
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

// step runs the action's step with that id or name; it returns the
// combined output and whether it succeeded.
func (g *githubRun) step(name string) (string, bool) {
	t := g.t
	t.Helper()
	var s *node
	for _, st := range g.action.get("runs", "steps").list {
		if st.str("id") == name || st.str("name") == name {
			s = st
		}
	}
	if s == nil || s.str("run") == "" {
		t.Fatalf("no run step %q in action.yml", name)
	}
	out := filepath.Join(t.TempDir(), "output")
	env := append([]string{}, g.base...)
	for _, kv := range fileVars(t, g.envFile) {
		env = append(env, kv[0]+"="+kv[1])
	}
	path := os.Getenv("PATH")
	for _, p := range readLines(t, g.pathFile) {
		path = p + string(os.PathListSeparator) + path
	}
	env = append(env, "PATH="+path, "GITHUB_OUTPUT="+out)
	if e := s.get("env"); e != nil {
		for _, k := range e.keys {
			env = append(env, k+"="+g.eval(e.m[k].scalar))
		}
	}
	cmd := exec.Command("bash", "-c", s.str("run"))
	cmd.Env = env
	cmd.Dir = filepath.Join(g.workspace, g.eval(s.str("working-directory")))
	b, err := cmd.CombinedOutput()
	outs := map[string]string{}
	for _, kv := range fileVars(t, out) {
		outs[kv[0]] = kv[1]
	}
	if id := s.str("id"); id != "" {
		g.outputs[id] = outs
	}
	return string(b), err == nil
}

func sha256File(t *testing.T, p string) string {
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// TestActionInstallsTheLockAndExportsIt runs action.yml's steps (the Go
// and cache actions aside) with fake $GITHUB_* files and a local mirror:
// cudaenv is built from this checkout, the cache key is the lock's
// sha256, the lock is installed with --locked, and the selection is
// exported.
func TestActionInstallsTheLockAndExportsIt(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cudaenv")
	}
	for _, tool := range []string{"go", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s", tool)
		}
	}
	data, err := os.ReadFile("action.yml")
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(t.TempDir(), `run "q" $x`)
	dirs := map[string]string{}
	for _, d := range []string{"workspace/proj", "home", "temp", "root", "config", "files"} {
		dirs[d] = filepath.Join(base, d)
		if err := os.MkdirAll(dirs[d], 0o755); err != nil {
			t.Fatal(err)
		}
	}
	proj := dirs["workspace/proj"]
	if err := os.WriteFile(filepath.Join(proj, ".cuda-version"), []byte("12.4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mirror := fetchtest.NewMirror(t, fetchtest.Options{})
	wd, _ := os.Getwd()
	g := &githubRun{
		t: t, action: parseYAML(t, data), workspace: filepath.Join(base, "workspace"),
		inputs:   map[string]string{"working-directory": "proj", "mirror": mirror.URL()},
		outputs:  map[string]map[string]string{},
		envFile:  filepath.Join(dirs["files"], "env"),
		pathFile: filepath.Join(dirs["files"], "path"),
	}
	g.base = []string{
		"HOME=" + dirs["home"], "RUNNER_TEMP=" + dirs["temp"], "RUNNER_OS=Linux", "RUNNER_ARCH=X64",
		"GITHUB_WORKSPACE=" + g.workspace, "GITHUB_ACTION_PATH=" + wd,
		"GITHUB_ENV=" + g.envFile, "GITHUB_PATH=" + g.pathFile,
		"CUDAENV_ROOT=" + dirs["root"], "CUDAENV_CONFIG_DIR=" + dirs["config"],
		"GOPROXY=off", "GOFLAGS=-mod=readonly",
	}
	// The build reuses this machine's Go caches (HOME is a fresh folder).
	goenv, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH", "GOROOT", "GOTOOLCHAIN").Output()
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOROOT", "GOTOOLCHAIN"} {
		g.base = append(g.base, k+"="+strings.Split(string(goenv), "\n")[i])
	}

	// A first build gives the cudaenv that writes the lock.
	if out, ok := g.step("setup"); !ok {
		t.Fatalf("setup step:\n%s", out)
	}
	bin := g.outputs["setup"]["cudaenv"]
	lock := exec.Command(bin, "lock", "--profile", "minimal")
	lock.Dir, lock.Env = proj, append(append([]string{}, g.base...), "CUDAENV_MIRROR="+mirror.URL(), "PATH="+os.Getenv("PATH"))
	if out, err := lock.CombinedOutput(); err != nil {
		t.Fatalf("cudaenv lock: %v\n%s", err, out)
	}
	for _, f := range []string{g.envFile, g.pathFile} {
		os.Remove(f)
	}

	// The action, step by step.
	if out, ok := g.step("setup"); !ok {
		t.Fatalf("setup step:\n%s", out)
	}
	setup := g.outputs["setup"]
	wantKey := "cudaenv-Linux-X64-" + sha256File(t, filepath.Join(proj, ".cuda-version.lock"))
	cacheDir := filepath.Join(dirs["home"], ".cache", "cudaenv")
	if setup["cache-key"] != wantKey || setup["cache-dir"] != cacheDir || setup["cache-prefix"] != "cudaenv-Linux-X64-" {
		t.Errorf("setup outputs = %v, want the key %s and the folder %s", setup, wantKey, cacheDir)
	}
	if got := readLines(t, g.pathFile); len(got) != 1 || got[0] != filepath.Join(dirs["temp"], "cudaenv-bin") {
		t.Errorf("GITHUB_PATH = %v", got)
	}
	if envs := fileVars(t, g.envFile); len(envs) != 1 || envs[0] != [2]string{"CUDAENV_CACHE_DIR", cacheDir} {
		t.Errorf("GITHUB_ENV = %v", envs)
	}

	out, ok := g.step("Install CUDA from the lock")
	if !ok || !strings.Contains(out, "installed CUDA 12.4.1 (3 components)") {
		t.Fatalf("install step (ok %v):\n%s", ok, out)
	}
	if _, err := os.Stat(filepath.Join(dirs["root"], "cuda", "12.4.1", "bin", "nvcc")); err != nil {
		t.Error(err)
	}
	ents, _ := os.ReadDir(filepath.Join(cacheDir, "archives"))
	var archives []string
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".lock") { // each archive's download lock
			archives = append(archives, e.Name())
		}
	}
	if len(archives) != 3 {
		t.Errorf("the download cache holds %v, want the 3 locked archives", archives)
	}

	t.Run("a stale lock fails the install step", func(t *testing.T) {
		vf := filepath.Join(proj, ".cuda-version")
		os.WriteFile(vf, []byte("12.6\n"), 0o644)
		defer os.WriteFile(vf, []byte("12.4\n"), 0o644)
		out, ok := g.step("Install CUDA from the lock")
		if ok || !strings.Contains(out, "install --locked: ") || !strings.Contains(out, "is out of date") {
			t.Errorf("install step (ok %v):\n%s", ok, out)
		}
	})

	t.Run("the selection is exported to later steps", func(t *testing.T) {
		help, _ := exec.Command(bin, "env", "--help").CombinedOutput()
		if !bytes.Contains(help, []byte("--github")) {
			t.Skip("cudaenv env --github is not in this build yet; the step is checked up to that call")
		}
		out, ok := g.step("Export the selection to later steps")
		if !ok {
			t.Fatalf("export step:\n%s", out)
		}
		tk := filepath.Join(dirs["root"], "cuda", "12.4.1")
		if got := readLines(t, g.pathFile); !strings.Contains(strings.Join(got, "\n"), filepath.Join(tk, "bin")) {
			t.Errorf("GITHUB_PATH = %v, want %s/bin", got, tk)
		}
		found := false
		for _, kv := range fileVars(t, g.envFile) {
			if kv[0] == "CUDA_HOME" && kv[1] == tk {
				found = true
			}
		}
		if !found {
			t.Errorf("GITHUB_ENV = %v, want CUDA_HOME=%s", fileVars(t, g.envFile), tk)
		}
	})

	// A cache restored through restore-keys was saved by a run for another
	// lock (another branch's): there, an archive was planted and the
	// cached manifest made to list it, and the lock here names it. The
	// install step keeps the archives but not the manifests, so the lock
	// is checked against what the mirror lists now.
	t.Run("a cache restored for another lock vouches for nothing", func(t *testing.T) {
		lockPath := filepath.Join(proj, ".cuda-version.lock")
		good, err := os.ReadFile(lockPath)
		if err != nil {
			t.Fatal(err)
		}
		defer os.WriteFile(lockPath, good, 0o644)
		// The setup step's environment only, not what the export step added.
		envs, _ := os.ReadFile(g.envFile)
		defer os.WriteFile(g.envFile, envs, 0o644)
		os.WriteFile(g.envFile, []byte("CUDAENV_CACHE_DIR="+cacheDir+"\n"), 0o644)
		un := exec.Command(bin, "uninstall", "12.4.1", "--force")
		un.Env = append(append([]string{}, g.base...), "CUDAENV_CACHE_DIR="+cacheDir, "PATH="+os.Getenv("PATH"))
		if out, err := un.CombinedOutput(); err != nil {
			t.Fatalf("uninstall: %v\n%s", err, out)
		}
		planted := []byte("#!/bin/sh\necho pwned\n")
		sum := sha256.Sum256(planted)
		evil := hex.EncodeToString(sum[:])
		if err := os.WriteFile(filepath.Join(cacheDir, "archives", evil), planted, 0o644); err != nil {
			t.Fatal(err)
		}
		nvcc := regexp.MustCompile(`(?m)^cuda_nvcc = .*size = ([0-9]+), sha256 = "([0-9a-f]{64})" \}$`).FindSubmatch(good)
		if nvcc == nil {
			t.Fatalf("no cuda_nvcc line in\n%s", good)
		}
		hostile := bytes.Replace(good, []byte(fmt.Sprintf("size = %s, sha256 = \"%s\"", nvcc[1], nvcc[2])), []byte(fmt.Sprintf("size = %d, sha256 = \"%s\"", len(planted), evil)), 1)
		// The other run cached the manifest (as cudaenv lock does here), and
		// made it list the planted archive.
		relock := exec.Command(bin, "lock")
		relock.Dir, relock.Env = proj, append(append([]string{}, g.base...), "CUDAENV_CACHE_DIR="+cacheDir, "CUDAENV_MIRROR="+mirror.URL(), "PATH="+os.Getenv("PATH"))
		if out, err := relock.CombinedOutput(); err != nil {
			t.Fatalf("cudaenv lock: %v\n%s", err, out)
		}
		manifests, _ := filepath.Glob(filepath.Join(cacheDir, "manifests", "*", "cuda", "redistrib_12.4.1.json"))
		if len(manifests) == 0 {
			t.Fatal("no cached manifest to tamper with")
		}
		for _, m := range manifests {
			data, _ := os.ReadFile(m)
			if err := os.WriteFile(m, bytes.ReplaceAll(data, nvcc[2], []byte(evil)), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(lockPath, hostile, 0o644); err != nil {
			t.Fatal(err)
		}
		g.outputs["cache"] = map[string]string{"cache-hit": "false"}
		defer delete(g.outputs, "cache")
		out, ok := g.step("Install CUDA from the lock")
		if ok || !strings.Contains(out, "cuda_nvcc (cuda_nvcc-linux-x86_64-12.4.131-archive.tar.xz): sha256 mismatch: the lock has "+evil+", the mirror lists "+string(nvcc[2])) {
			t.Fatalf("install step (ok %v):\n%s", ok, out)
		}
		if _, err := os.Stat(filepath.Join(dirs["root"], "cuda", "12.4.1")); err == nil {
			t.Error("installed from the planted archive")
		}
		if data, err := os.ReadFile(filepath.Join(cacheDir, "archives", evil)); err != nil || !bytes.Equal(data, planted) {
			t.Errorf("the restored archive changed: %v", err)
		}
		// The lock as written installs from the same cache, its archives
		// checked against the manifest fetched now.
		os.WriteFile(lockPath, good, 0o644)
		if out, ok := g.step("Install CUDA from the lock"); !ok || !strings.Contains(out, "installed CUDA 12.4.1 (3 components)") {
			t.Fatalf("install step (ok %v):\n%s", ok, out)
		}
	})
}
