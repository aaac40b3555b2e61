// Package shell renders cudaenv's environment changes and hooks in the
// dialect of each supported shell (bash, zsh, fish, PowerShell), quoting
// every value it splices in. It knows nothing about CUDA.
package shell

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Shell is one dialect.
type Shell interface {
	Name() string
	// Quote makes s a single literal word in this shell.
	Quote(s string) string
	// Set and Unset render one statement, newline included.
	Set(name, value string) string
	Unset(name string) string
	// Check renders the definition of __cudaenv_check, which succeeds while
	// nothing the selection depends on has changed, using builtins only.
	Check(c Check) string
	// Init renders the integration: the cudaenv function, which runs exe,
	// and the prompt hook, which runs hook's hook-env (the small
	// cudaenv-shim when installed, as it starts faster; else exe).
	Init(exe, hook string) string
	// Alert renders a statement that prints msg on standard error.
	Alert(msg string) string
}

// Var is one change to render.
type Var struct {
	Name  string
	Value string
	Unset bool
}

// Check is what the prompt hook compares against to skip the binary.
type Check struct {
	Dir      string
	EnvName  string // the variable that outranks version files
	EnvSet   bool
	EnvValue string
	Files    []File
	// Never makes the check fail always, e.g. when no reference file could
	// be written; correctness then costs a process start per prompt.
	Never bool
	// AnyDir: any working directory passes (the selection came from the
	// variable). Else, with Within set (bash, zsh, fish), a directory
	// below Within passes when no version file lies between it and Within;
	// else only Dir does.
	AnyDir bool
	Within string
	// StateName is the variable holding cudaenv's state; when set, the
	// check also fails once it no longer holds State (StateSet false:
	// once it is set), so a state changed behind the hook's back is
	// looked at.
	StateName string
	StateSet  bool
	State     string
}

// versionFiles are the names a directory's selection can come from.
var versionFiles = []string{".cuda-version", ".tool-versions"}

// withinPrefix is Within as a prefix that every folder below it starts
// with: "/" stays "/", "/p" becomes "/p/".
func withinPrefix(within string) string {
	if strings.HasSuffix(within, "/") {
		return within
	}
	return within + "/"
}

// File is one path whose existence and modification time matter.
type File struct {
	Path    string
	Exists  bool
	ModTime time.Time
	// Ref is a file whose mtime equals ModTime, for shells that can only
	// compare mtimes between two files (test -nt). Empty: cannot compare.
	Ref string
}

var shells = map[string]Shell{
	"bash": bash{},
	"zsh":  zsh{},
	"fish": fish{},
	"pwsh": pwsh{},
}

// Names lists the supported shells, sorted.
func Names() []string {
	var out []string
	for n := range shells {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Get returns a shell by name; "powershell" is accepted for pwsh.
func Get(name string) (Shell, error) {
	if name == "powershell" {
		name = "pwsh"
	}
	if sh, ok := shells[name]; ok {
		return sh, nil
	}
	return nil, fmt.Errorf("unknown shell %q; use one of: %s", name, strings.Join(Names(), ", "))
}

// ValidName reports whether name can be a variable name in every dialect:
// [A-Za-z_][A-Za-z0-9_]*. Names are spliced into code unquoted, so Set,
// Unset and Render render nothing for any other name.
func ValidName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c == '_' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || i > 0 && '0' <= c && c <= '9' {
			continue
		}
		return false
	}
	return true
}

// Render renders changes in name order, so output is byte-stable.
func Render(sh Shell, vars []Var) string {
	vars = append([]Var(nil), vars...)
	sort.SliceStable(vars, func(i, j int) bool { return vars[i].Name < vars[j].Name })
	var b strings.Builder
	for _, v := range vars {
		if v.Unset {
			b.WriteString(sh.Unset(v.Name))
		} else {
			b.WriteString(sh.Set(v.Name, v.Value))
		}
	}
	return b.String()
}
