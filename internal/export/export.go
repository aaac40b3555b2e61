// Package export renders an activated environment for tools that are not
// shells: GitHub Actions' environment files, dotenv files (docker
// --env-file, python-dotenv) and CMake initial-cache scripts (cmake -C).
// It renders text only; the caller computes the environment.
package export

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// GitHubEnv is the text to append to $GITHUB_ENV. Every variable uses the
// multi-line form (NAME<<DELIM … DELIM), which reads back any value; the
// delimiter is chosen so it does not occur in the value, and is
// deterministic so the output is byte-stable.
func GitHubEnv(vars map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		v := vars[k]
		delim := "CUDAENV_EOF"
		for i := 1; strings.Contains(v, delim); i++ {
			delim = fmt.Sprintf("CUDAENV_EOF_%d", i)
		}
		fmt.Fprintf(&b, "%s<<%s\n%s\n%s\n", k, delim, v, delim)
	}
	return b.String()
}

// GitHubPath is the text to append to $GITHUB_PATH so that dirs end up
// first on PATH, in this order: the runner prepends each line in turn,
// so the lines go in reverse. The file has one folder a line and no
// quoting: a folder with a line break (or a NUL) is refused, named, as
// its second line would be a PATH entry of its own.
func GitHubPath(dirs []string) (string, error) {
	var b strings.Builder
	for i := len(dirs) - 1; i >= 0; i-- {
		if strings.ContainsAny(dirs[i], "\r\n\x00") {
			return "", fmt.Errorf("PATH entry %q holds a line break, which $GITHUB_PATH cannot hold", dirs[i])
		}
		b.WriteString(dirs[i])
		b.WriteByte('\n')
	}
	return b.String(), nil
}

// Dotenv renders KEY=value lines. A value that both docker --env-file
// (which takes the rest of the line literally) and python-dotenv read
// back unchanged is written bare; a value that only python-dotenv reads
// back is single-quoted, as python-dotenv reads it, and its name is
// returned in needQuotes: docker would keep the quotes. A value that
// neither reads back is refused (*DotenvError, naming it): a line break
// (docker would read the next line as an assignment of its own) or a
// ${…} that python-dotenv would expand, which it does in every form of
// value, quoted or not, with no escape.
func Dotenv(vars map[string]string) (text string, needQuotes []string, err error) {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		v := vars[k]
		if why := dotenvProblem(v); why != "" {
			return "", nil, &DotenvError{Name: k, Value: v, Why: why}
		}
		if bareSafe(v) {
			fmt.Fprintf(&b, "%s=%s\n", k, v)
			continue
		}
		needQuotes = append(needQuotes, k)
		fmt.Fprintf(&b, "%s='%s'\n", k, strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v))
	}
	return b.String(), needQuotes, nil
}

// DotenvError is a value no dotenv reader reads back as it is.
type DotenvError struct {
	Name, Value string
	Why         string // "holds a line break"
}

func (e *DotenvError) Error() string {
	return fmt.Sprintf("%s=%q %s", e.Name, e.Value, e.Why)
}

// pythonDotenvVar is what python-dotenv (dotenv/variables.py) expands.
var pythonDotenvVar = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{[^}:]*(?::-[^}]*)?\}`) })

// dotenvProblem says why no dotenv reader reads v back ("" when one does).
func dotenvProblem(v string) string {
	if strings.ContainsAny(v, "\r\n\x00") {
		return "holds a line break, which docker --env-file would read as a line of its own"
	}
	if m := pythonDotenvVar().FindString(v); m != "" {
		return fmt.Sprintf("holds %q, which python-dotenv expands however it is quoted", m)
	}
	return ""
}

// bareSafe: no line breaks, no edge spaces (python-dotenv strips them),
// no leading quote, no " #" (a comment to python-dotenv) and no "${"
// (interpolated by python-dotenv).
func bareSafe(v string) bool {
	if v == "" {
		return true
	}
	if strings.ContainsAny(v, "\r\n\x00") || strings.TrimSpace(v) != v {
		return false
	}
	if strings.ContainsAny(v[:1], `"'`) || strings.Contains(v, " #") || strings.Contains(v, "\t#") || strings.Contains(v, "${") {
		return false
	}
	return true
}

// CMake is what a CMake initial cache sets.
type CMake struct {
	Compiler     string // nvcc; empty for a libraries-only toolkit
	ToolkitRoot  string
	CudnnRoot    string
	CudnnInclude string
	CudnnLibrary string
	// Libraries are the other libraries' path entries (NCCL_ROOT,
	// NCCL_INCLUDE_DIR, CUTENSOR_ROOT, …), written in name order.
	Libraries map[string]string
	// PrefixPath are the libraries' roots, for find_package(<pkg> CONFIG)
	// (CMAKE_PREFIX_PATH); a root holding ';' (CMake's list separator)
	// is left out.
	PrefixPath []string
}

// CMakeCache is a script for `cmake -C FILE`: cache entries that point
// CMake's CUDA language and FindCUDAToolkit (and the usual cuDNN find
// modules) at the selected versions.
func CMakeCache(c CMake) string {
	var b strings.Builder
	b.WriteString("# cmake -C this file: the CUDA toolkit and cuDNN selected by cudaenv.\n")
	set := func(name, value, typ string) {
		if value != "" {
			fmt.Fprintf(&b, "set(%s %s CACHE %s \"\")\n", name, cmakeQuote(value), typ)
		}
	}
	set("CMAKE_CUDA_COMPILER", c.Compiler, "FILEPATH")
	set("CUDAToolkit_ROOT", c.ToolkitRoot, "PATH")
	set("CUDNN_ROOT", c.CudnnRoot, "PATH")
	set("CUDNN_INCLUDE_DIR", c.CudnnInclude, "PATH")
	set("CUDNN_LIBRARY", c.CudnnLibrary, "FILEPATH")
	for _, n := range slices.Sorted(maps.Keys(c.Libraries)) {
		set(n, c.Libraries[n], "PATH")
	}
	var prefixes []string
	for _, p := range c.PrefixPath {
		if p != "" && !strings.Contains(p, ";") {
			prefixes = append(prefixes, p)
		}
	}
	set("CMAKE_PREFIX_PATH", strings.Join(prefixes, ";"), "STRING")
	return b.String()
}

// cmakeQuote is a CMake quoted argument that reads back as s: no
// variable reference, escape or line break is evaluated. A ';' stays a
// character of the cache value.
func cmakeQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, `$`, `\$`, "\n", `\n`, "\r", `\r`, "\t", `\t`, "@", `\@`)
	return `"` + r.Replace(s) + `"`
}
