package detect

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// Compiler is a host C++ compiler nvcc could use.
type Compiler struct {
	Kind    string // "gcc" or "clang"
	Path    string // "/usr/bin/g++-13"
	Version string // "13.2.0"; "" when it could not be asked
	Via     string // how it was found: "NVCC_CCBIN", "CUDAHOSTCXX" or "PATH"
	Active  bool   // the compiler nvcc uses now
}

var reNumericVersion = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\d+(\.\d+)*$`) })

var reCompilerName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:[a-z0-9_]+-linux-gnu-)?(g\+\+|gcc|clang\+\+|clang)(-[0-9][0-9.]*)?$`)
})

// Compilers finds the host compilers: NVCC_CCBIN and CUDAHOSTCXX from Env
// (a file, a directory holding g++, or a name looked up on PATH), then every
// gcc, g++, clang, clang++ and versioned variant (g++-13) on PATH. The
// active one is NVCC_CCBIN's, else CUDAHOSTCXX's, else the g++ nvcc finds
// on PATH, else gcc. Versions come from `-dumpfullversion -dumpversion`
// (gcc) or `-dumpversion` (clang), asked once per program: g++, g++-12,
// x86_64-linux-gnu-g++-12 and /bin/g++ (where /bin is /usr/bin) are most
// often one file, asked of all at once.
func (h Host) Compilers(ctx context.Context) []Compiler {
	var out []Compiler
	seen := map[string]bool{}
	add := func(path, via string) {
		if path == "" || seen[path] {
			return
		}
		seen[path] = true
		out = append(out, Compiler{Kind: compilerKind(path), Path: path, Via: via})
	}
	for _, env := range []string{"NVCC_CCBIN", "CUDAHOSTCXX"} {
		add(h.resolveCompiler(h.Env[env]), env)
	}
	for _, dir := range h.PathList() {
		entries, err := os.ReadDir(h.file(dir))
		if err != nil {
			continue
		}
		var names []string
		for _, e := range entries {
			n := strings.TrimSuffix(e.Name(), ".exe")
			if reCompilerName().MatchString(n) && h.isExecutable(filepath.Join(dir, e.Name())) {
				names = append(names, e.Name())
			}
		}
		sort.Strings(names)
		for _, n := range names {
			add(filepath.Join(dir, n), "PATH")
		}
	}
	active := -1
	for i, c := range out {
		if c.Via != "PATH" {
			active = i
			break
		}
	}
	for _, name := range []string{"g++", "gcc"} {
		if active >= 0 {
			break
		}
		if p := h.LookPath(name); p != "" {
			for i, c := range out {
				if c.Path == p {
					active = i
				}
			}
		}
	}
	if active >= 0 {
		out[active].Active = true
	}
	h.compilerVersions(ctx, out)
	return out
}

// compilerVersions asks each distinct program (by the file its path
// resolves to, and its kind) its version, all at once, and gives every
// compiler its program's answer.
func (h Host) compilerVersions(ctx context.Context, cs []Compiler) {
	type program struct{ file, kind string }
	first := map[program]int{} // the compiler asked for each program
	of := make([]int, len(cs))
	var wg sync.WaitGroup
	for i, c := range cs {
		p := program{c.Path, c.Kind}
		if f, err := filepath.EvalSymlinks(h.file(c.Path)); err == nil {
			p.file = f
		}
		j, asked := first[p]
		if !asked {
			j, first[p] = i, i
			wg.Go(func() { cs[i].Version = h.compilerVersion(ctx, cs[i]) })
		}
		of[i] = j
	}
	wg.Wait()
	for i, j := range of {
		cs[i].Version = cs[j].Version
	}
}

// resolveCompiler turns an NVCC_CCBIN-style value into a compiler path.
func (h Host) resolveCompiler(v string) string {
	v = strings.TrimSpace(v)
	switch {
	case v == "":
		return ""
	case h.isDir(v):
		for _, n := range []string{"g++", "clang++", "gcc", "clang"} {
			if p := filepath.Join(v, h.exe(n)); h.isFile(p) {
				return p
			}
		}
		return ""
	case strings.ContainsAny(v, `/\`):
		return v
	}
	if p := h.LookPath(v); p != "" {
		return p
	}
	return v
}

func compilerKind(path string) string {
	if strings.Contains(filepath.Base(path), "clang") {
		return "clang"
	}
	return "gcc"
}

func (h Host) compilerVersion(ctx context.Context, c Compiler) string {
	args := []string{"-dumpfullversion", "-dumpversion"}
	if c.Kind == "clang" {
		args = []string{"-dumpversion"}
	}
	out, err := h.run(ctx, c.Path, args...)
	if err != nil {
		return ""
	}
	v := strings.TrimSpace(string(out))
	if !reNumericVersion().MatchString(v) {
		return ""
	}
	return v
}
