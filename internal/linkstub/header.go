package linkstub

import (
	"fmt"
	"slices"
	"strings"
)

// MaxHeader is the largest header Functions reads; NVIDIA's cuda.h is
// about 1.1 MB, nvml.h 0.7 MB.
const MaxHeader = 16 << 20

// MaxFunctions bounds the symbols one stub exports (cuda.h declares about
// 800 functions with their versioned names, nvml.h about 500).
const MaxFunctions = 1 << 16

// maxName bounds one symbol's name.
const maxName = 255

// Functions lists, sorted and once each, the functions a C header
// declares whose names start with prefix ("cu" for cuda.h, "nvml" for
// nvml.h), with the names its #defines map them to: cuda.h declares
// cuCtxCreate and defines it as cuCtxCreate_v4, and as
// __CUDA_API_PTDS(cuMemcpyHtoD_v2) a name that is cuMemcpyHtoD_v2 or,
// per thread, cuMemcpyHtoD_v2_ptds; all of them are exported by the real
// library, so all of them are listed. Every branch of #if is read: what
// some configuration declares is declared.
//
// It is not a C compiler: it reads top-level declarations (inside extern
// "C" blocks too) of the form `type [macros] name(params) [attributes];`,
// skips typedefs, struct bodies, static and inline definitions, and
// function-like macro calls (DEPRECATED(13.0), __attribute__((…))) before
// the name. The header is data from an archive or a wheel: a name is an
// ASCII C identifier with the prefix, at most 255 bytes, and a header
// larger than MaxHeader or declaring more than MaxFunctions is refused.
func Functions(header []byte, prefix string) ([]string, error) {
	if len(header) > MaxHeader {
		return nil, fmt.Errorf("header of %d bytes is larger than the %d this reads", len(header), MaxHeader)
	}
	if prefix == "" || !isIdent(prefix) {
		return nil, fmt.Errorf("prefix %q is not a C identifier", prefix)
	}
	src := stripComments(joinLines(string(header)))
	var code strings.Builder
	defs := macros{obj: map[string][][]string{}, fn: map[string][]fnMacro{}}
	for _, line := range strings.Split(src, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "#") {
			defs.directive(strings.TrimSpace(t[1:]))
			code.WriteByte('\n')
			continue
		}
		code.WriteString(line)
		code.WriteByte('\n')
	}
	names := map[string]bool{}
	var tooMany error
	add := func(n string) {
		if tooMany != nil || names[n] || !strings.HasPrefix(n, prefix) || len(n) > maxName || !isIdent(n) {
			return
		}
		if len(names) >= MaxFunctions {
			tooMany = fmt.Errorf("the header declares more than %d functions", MaxFunctions)
			return
		}
		names[n] = true
	}
	for _, n := range declarations(tokenize(code.String()), defs) {
		for _, e := range defs.expand(n) {
			add(e)
		}
	}
	if tooMany != nil {
		return nil, tooMany
	}
	out := make([]string, 0, len(names))
	for n := range names {
		out = append(out, n)
	}
	slices.Sort(out)
	return out, nil
}

// joinLines splices lines ending in a backslash, as the preprocessor does.
func joinLines(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\\\n", " ")
}

// stripComments replaces comments by a space (a newline stays a
// newline, so directives stay on their lines), leaving string and
// character literals as they are.
func stripComments(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '/' && i+1 < len(s) && s[i+1] == '/':
			for i < len(s) && s[i] != '\n' {
				i++
			}
			if i < len(s) {
				b.WriteByte('\n')
			}
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			i += 2
			for i < len(s) && !(s[i] == '*' && i+1 < len(s) && s[i+1] == '/') {
				if s[i] == '\n' {
					b.WriteByte('\n')
				}
				i++
			}
			i++ // the '/'
			b.WriteByte(' ')
		case c == '"' || c == '\'':
			j := literalEnd(s, i)
			b.WriteString(s[i:j])
			i = j - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// literalEnd is the index just past the string or character literal that
// starts at s[i]: past its closing quote, or the end of its line, or s's.
func literalEnd(s string, i int) int {
	q := s[i]
	j := i + 1
	for j < len(s) && s[j] != q && s[j] != '\n' {
		if s[j] == '\\' {
			j++
		}
		j++
	}
	return min(j+1, len(s))
}

// tokenize splits C code into identifiers, literals (one token each,
// strings as `"`), "##" and single punctuation characters.
func tokenize(s string) []string {
	var toks []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case isIdentStart(c):
			j := i + 1
			for j < len(s) && isIdentChar(s[j]) {
				j++
			}
			toks = append(toks, s[i:j])
			i = j
		case c >= '0' && c <= '9':
			j := i + 1
			for j < len(s) && (isIdentChar(s[j]) || s[j] == '.') {
				j++
			}
			toks = append(toks, "0")
			i = j
		case c == '"' || c == '\'':
			toks = append(toks, `"`)
			i = literalEnd(s, i)
		case c == '#' && i+1 < len(s) && s[i+1] == '#':
			toks = append(toks, "##")
			i += 2
		default:
			toks = append(toks, s[i:i+1])
			i++
		}
	}
	return toks
}

func isIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isIdentChar(c byte) bool  { return isIdentStart(c) || c >= '0' && c <= '9' }

func isIdent(s string) bool {
	if s == "" || !isIdentStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isIdentChar(s[i]) {
			return false
		}
	}
	return true
}

// macros are a header's #defines, every definition of a name kept (each
// #if branch may define it differently), a few per name.
type macros struct {
	obj map[string][][]string // NAME → bodies
	fn  map[string][]fnMacro  // NAME(params) → definitions
}

type fnMacro struct {
	params []string
	body   []string
}

// maxDefs is how many definitions of one name are kept.
const maxDefs = 8

// directive records a #define; other directives are read past.
func (m *macros) directive(d string) {
	rest, ok := strings.CutPrefix(d, "define")
	if !ok || rest == "" || (rest[0] != ' ' && rest[0] != '\t') {
		return
	}
	rest = strings.TrimLeft(rest, " \t")
	j := 0
	for j < len(rest) && isIdentChar(rest[j]) {
		j++
	}
	name := rest[:j]
	if !isIdent(name) {
		return
	}
	if j < len(rest) && rest[j] == '(' {
		end := strings.IndexByte(rest[j:], ')')
		if end < 0 {
			return
		}
		var params []string
		for _, p := range strings.Split(rest[j+1:j+end], ",") {
			params = append(params, strings.TrimSpace(p))
		}
		if len(m.fn[name]) < maxDefs {
			m.fn[name] = append(m.fn[name], fnMacro{params: params, body: tokenize(rest[j+end+1:])})
		}
		return
	}
	if len(m.obj[name]) < maxDefs {
		m.obj[name] = append(m.obj[name], tokenize(rest[j:]))
	}
}

// maxExpand bounds how deep a name's #defines are followed (a header's
// macros may name each other in a loop).
const maxExpand = 4

// expand is a name and the names its #defines turn it into: a body that
// is one identifier (cuCtxCreate → cuCtxCreate_v4), or a call of a
// function-like macro on one (__CUDA_API_PTDS(cuMemcpyHtoD_v2)) whose
// body is the parameter, maybe pasted to a suffix (api ## _ptds).
func (m *macros) expand(name string) []string {
	seen := map[string]bool{}
	var out []string
	var walk func(n string, depth int)
	walk = func(n string, depth int) {
		if seen[n] {
			return
		}
		seen[n] = true
		out = append(out, n)
		if depth >= maxExpand {
			return
		}
		for _, body := range m.obj[n] {
			switch {
			case len(body) == 1 && isIdent(body[0]):
				walk(body[0], depth+1)
			case len(body) == 4 && isIdent(body[0]) && body[1] == "(" && isIdent(body[2]) && body[3] == ")":
				for _, f := range m.fn[body[0]] {
					if r, ok := f.apply(body[2]); ok {
						walk(r, depth+1)
					}
				}
			}
		}
	}
	walk(name, 0)
	return out
}

// apply is a one-parameter macro's body for the argument arg, when it is
// one identifier: `p` or `p ## suffix` or `prefix ## p`.
func (f fnMacro) apply(arg string) (string, bool) {
	if len(f.params) != 1 {
		return "", false
	}
	var b strings.Builder
	for i, t := range f.body {
		switch {
		case t == "##" && i%2 == 1:
		case i%2 == 0 && t == f.params[0]:
			b.WriteString(arg)
		case i%2 == 0 && isIdent(t):
			b.WriteString(t)
		default:
			return "", false
		}
	}
	if len(f.body)%2 == 0 || !isIdent(b.String()) {
		return "", false
	}
	return b.String(), true
}

// attributeCalls are the function-like keywords that may come before a
// declaration's name, besides the header's own function-like macros.
var attributeCalls = map[string]bool{"__attribute__": true, "__declspec": true, "_Pragma": true, "__pragma": true, "alignas": true, "_Alignas": true, "__asm__": true, "asm": true, "__typeof__": true, "decltype": true}

// declarations walks the top level of a header (and extern "C" blocks)
// statement by statement and returns the names declared as functions.
func declarations(toks []string, defs macros) []string {
	var out []string
	var stmt []string
	// braces: true for a transparent block (extern "C" {), false for one
	// whose insides are not declarations of the header (struct bodies,
	// inline function bodies).
	var braces []bool
	opaque := 0 // how many opaque blocks are open
	var bodyOpener []string
	for _, t := range toks {
		if opaque > 0 {
			switch t {
			case "{":
				braces = append(braces, false)
				opaque++
			case "}":
				braces = braces[:len(braces)-1]
				opaque--
				if opaque == 0 {
					// A function's body ends its definition, which declares
					// nothing to export; a struct's body goes on to its ';'.
					if n := len(bodyOpener); n > 0 && bodyOpener[n-1] == ")" {
						stmt = stmt[:0]
					} else {
						stmt = append(stmt, "{}")
					}
				}
			}
			continue
		}
		switch t {
		case "{":
			if len(stmt) == 2 && stmt[0] == "extern" && stmt[1] == `"` {
				braces = append(braces, true)
				stmt = stmt[:0]
				continue
			}
			braces = append(braces, false)
			opaque++
			bodyOpener = append(bodyOpener[:0], stmt...)
		case "}":
			if len(braces) > 0 {
				braces = braces[:len(braces)-1]
			}
			stmt = stmt[:0]
		case ";":
			if n, ok := declared(stmt, defs); ok {
				out = append(out, n)
			}
			stmt = stmt[:0]
		default:
			stmt = append(stmt, t)
		}
	}
	return out
}

// declared is the name a statement declares as a function.
func declared(stmt []string, defs macros) (string, bool) {
	if len(stmt) < 3 || stmt[0] == "typedef" {
		return "", false
	}
	for _, t := range stmt {
		if t == "static" || t == "inline" || t == "__inline__" || t == "__inline" || t == "=" {
			return "", false
		}
	}
	for i := 0; i+1 < len(stmt); i++ {
		t := stmt[i]
		if stmt[i+1] != "(" {
			continue
		}
		if !isIdent(t) {
			return "", false // int (*f)(void): a pointer, not a function
		}
		if attributeCalls[t] || len(defs.fn[t]) > 0 {
			// DEPRECATED(13.0), __attribute__((x)): past its parentheses.
			end := closing(stmt, i+1)
			if end < 0 {
				return "", false
			}
			i = end
			continue
		}
		if i == 0 || (i+2 < len(stmt) && (stmt[i+2] == "*" || stmt[i+2] == "^")) {
			return "", false
		}
		return t, true
	}
	return "", false
}

// closing is the index of the ')' that closes the '(' at open, -1 if none.
func closing(toks []string, open int) int {
	depth := 0
	for j := open; j < len(toks); j++ {
		switch toks[j] {
		case "(":
			depth++
		case ")":
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}
