// Package envdiff computes the environment changes that switch from one
// cudaenv selection to another, taking back exactly what cudaenv added before.
//
// List variables (PATH, LD_LIBRARY_PATH) are edited entry by entry, so entries
// the user adds meanwhile survive a switch; scalar variables get the value the
// user had before back, or are unset again if they were unset. What cudaenv
// changed is carried in one exported variable, so nested shells, tmux panes
// and exec'd shells revert correctly too. That variable comes back from an
// environment cudaenv does not control, so Decode believes it only when
// it is the shape cudaenv writes and names only the variables cudaenv
// manages; and it is encoded losslessly, so bytes that are not UTF-8 come
// back as they were.
package envdiff

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// StateVar is the variable that carries State between prompts and shells.
const StateVar = "__CUDAENV_STATE"

// State is what cudaenv changed in an environment.
type State struct {
	Lists   map[string]ListState   `json:"lists,omitempty"`
	Scalars map[string]ScalarState `json:"scalars,omitempty"`
	// Active names what is active, for display and for shims.
	Active string `json:"active,omitempty"`
}

// ListState records entries prepended to one list variable.
type ListState struct {
	Added []string `json:"added"`
	// Created is set when the variable did not exist before, so that
	// removing the last entry unsets it instead of leaving it empty.
	Created bool `json:"created,omitempty"`
}

// ScalarState records a variable cudaenv set and what it held before.
type ScalarState struct {
	Value string  `json:"value"`
	Prev  *string `json:"prev,omitempty"` // nil: it was unset
}

// IsZero reports whether the state records no change at all.
func (s State) IsZero() bool { return len(s.Lists) == 0 && len(s.Scalars) == 0 }

// Format is the version of the encoding Encode writes. In format 2 every
// string is escaped with EscapeString, so that values that are not UTF-8
// (a user's CUDA_HOME, a store path) survive JSON byte for byte. A state
// without "v" is format 1, written by earlier releases: raw strings.
const Format = 2

// wire is State as encoded: the format first.
type wire struct {
	V       int                    `json:"v"`
	Lists   map[string]ListState   `json:"lists,omitempty"`
	Scalars map[string]ScalarState `json:"scalars,omitempty"`
	Active  string                 `json:"active,omitempty"`
}

// Encode renders the state as compact JSON with sorted keys, every string
// escaped with EscapeString.
func Encode(s State) string {
	w := wire{V: Format, Active: EscapeString(s.Active)}
	if s.Lists != nil {
		w.Lists = make(map[string]ListState, len(s.Lists))
		for k, ls := range s.Lists {
			if ls.Added != nil {
				added := make([]string, len(ls.Added))
				for i, a := range ls.Added {
					added[i] = EscapeString(a)
				}
				ls.Added = added
			}
			w.Lists[k] = ls
		}
	}
	if s.Scalars != nil {
		w.Scalars = make(map[string]ScalarState, len(s.Scalars))
		for k, ss := range s.Scalars {
			ss.Value = EscapeString(ss.Value)
			if ss.Prev != nil {
				p := EscapeString(*ss.Prev)
				ss.Prev = &p
			}
			w.Scalars[k] = ss
		}
	}
	b, _ := json.Marshal(w) // only strings, maps and slices: cannot fail
	return string(b)
}

// EscapeString makes s valid UTF-8 that reads back exactly: '%' becomes
// %25 and each byte that is not part of valid UTF-8 becomes %XX. A valid
// UTF-8 string without '%' is returned as it is.
func EscapeString(s string) string {
	if utf8.ValidString(s) && !strings.Contains(s, "%") {
		return s
	}
	const hex = "0123456789ABCDEF"
	b := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		c := s[i]
		if c == '%' {
			b = append(b, "%25"...)
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, '%', hex[c>>4], hex[c&0xF])
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return string(b)
}

// unescapeString reverses EscapeString; a '%' not followed by two hex
// digits means the text was not written by it.
func unescapeString(s string) (string, error) {
	i := strings.IndexByte(s, '%')
	if i < 0 {
		return s, nil
	}
	b := make([]byte, 0, len(s))
	b = append(b, s[:i]...)
	for ; i < len(s); i++ {
		if s[i] != '%' {
			b = append(b, s[i])
			continue
		}
		if i+2 >= len(s) || unhex(s[i+1]) < 0 || unhex(s[i+2]) < 0 {
			return "", errors.New("a value has a stray %")
		}
		b = append(b, byte(unhex(s[i+1])<<4|unhex(s[i+2])))
		i += 2
	}
	return string(b), nil
}

func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'A' <= c && c <= 'F':
		return int(c - 'A' + 10)
	case 'a' <= c && c <= 'f':
		return int(c - 'a' + 10)
	}
	return -1
}

// MaxStateSize bounds the state variable; real ones are well under 4 KiB.
const MaxStateSize = 64 << 10

// Decode reads a state written by Encode (or by a release before format
// 2). An empty string is the empty state. The state comes from the
// environment, which cudaenv does not control, so it is checked before it
// is believed: it must be JSON of this shape, name only the variables
// cudaenv manages (see CheckNames), and list only entries under the
// toolkit and cuDNN folders it records. Anything else is an error, and
// the caller must ignore the whole state.
func Decode(text string) (State, error) {
	var w wire
	if text == "" {
		return State{}, nil
	}
	if len(text) > MaxStateSize {
		return State{}, fmt.Errorf("it is larger than %d bytes", MaxStateSize)
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return State{}, fmt.Errorf("it is not cudaenv's JSON: %v", err)
	}
	if dec.More() {
		return State{}, errors.New("it has text after its JSON")
	}
	s := State{Lists: w.Lists, Scalars: w.Scalars, Active: w.Active}
	switch w.V {
	case 0: // format 1: raw strings
	case Format:
		if err := unescapeState(&s); err != nil {
			return State{}, err
		}
	default:
		return State{}, fmt.Errorf("its format %d is not one this cudaenv reads", w.V)
	}
	if err := Check(s); err != nil {
		return State{}, err
	}
	return s, nil
}

func unescapeState(s *State) error {
	var err error
	un := func(p *string) {
		if err == nil {
			*p, err = unescapeString(*p)
		}
	}
	un(&s.Active)
	for k, ls := range s.Lists {
		for i := range ls.Added {
			un(&ls.Added[i])
		}
		s.Lists[k] = ls
	}
	for k, ss := range s.Scalars {
		un(&ss.Value)
		if ss.Prev != nil {
			p := *ss.Prev
			un(&p)
			ss.Prev = &p
		}
		s.Scalars[k] = ss
	}
	return err
}

// The variables cudaenv manages, and under which folder of a toolkit or
// cuDNN root each list variable's entries lie (activate.Want decides
// them; its tests keep the two in step).
var (
	listSuffixes = map[string][]string{
		"PATH":            {"bin", "bin/x64"},
		"LD_LIBRARY_PATH": {"lib64", "lib"},
		"LIBRARY_PATH":    {"lib", "lib/stubs", "lib64/stubs"},
		"CPATH":           {"include"},
		// The libraries' roots themselves, for find_package.
		"CMAKE_PREFIX_PATH": {""},
	}
	scalarNames = map[string]bool{"CUDA_PATH": true, "CUDA_HOME": true, "CUDACXX": true, "CUDAToolkit_ROOT": true, "CUDNN_PATH": true,
		"NCCL_HOME": true, "NCCL_ROOT": true, "NCCL_ROOT_DIR": true, "NCCL_INCLUDE_DIR": true, "NCCL_LIB_DIR": true,
		"CUSPARSELT_ROOT": true, "CUSPARSELT_PATH": true, "CUTENSOR_ROOT": true, "CUTENSOR_PATH": true,
		"CUDSS_ROOT": true, "CUDSS_PATH": true, "NVSHMEM_HOME": true, "NVSHMEM_ROOT": true}
	// rootScalars hold the roots that list entries lie under: the
	// toolkit's, cuDNN's and each other library's first root variable.
	rootScalars = []string{"CUDA_PATH", "CUDNN_PATH", "NCCL_HOME", "CUSPARSELT_ROOT", "CUTENSOR_ROOT", "CUDSS_ROOT", "NVSHMEM_HOME"}
)

// LibraryRoots are the scalar variables besides CUDA_PATH whose values
// are roots list entries may lie under (activate's tests hold its
// variables to these).
func LibraryRoots() []string { return append([]string(nil), rootScalars[1:]...) }

// ManagedList and ManagedScalar report whether cudaenv may set name as a
// list or as a scalar variable. CUDA_PATH_V<major>_<minor> is NVIDIA's
// Windows name for one toolkit.
func ManagedList(name string) bool { _, ok := listSuffixes[name]; return ok }

func ManagedScalar(name string) bool {
	if scalarNames[name] {
		return true
	}
	rest, ok := strings.CutPrefix(name, "CUDA_PATH_V")
	if !ok {
		return false
	}
	maj, min, ok := strings.Cut(rest, "_")
	return ok && digits(maj) && digits(min)
}

func digits(s string) bool {
	if s == "" || len(s) > 4 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Check reports why a state cannot be one cudaenv wrote: a variable it
// does not manage (so never HOME, never PATH as a scalar, which taking
// back could rewrite or unset), or a list entry that is not a bin, lib or
// include folder of an absolute root the state sets in CUDA_PATH or
// CUDNN_PATH (so taking it back cannot strip or unset the user's PATH).
func Check(s State) error {
	for name := range s.Scalars {
		if !ManagedScalar(name) {
			return fmt.Errorf("it names %s, which cudaenv never sets", strconv.Quote(name))
		}
	}
	var roots []string
	for _, n := range rootScalars {
		if ss, ok := s.Scalars[n]; ok && absNotTop(ss.Value) {
			roots = append(roots, ss.Value)
		}
	}
	for name, ls := range s.Lists {
		suffixes, ok := listSuffixes[name]
		if !ok {
			return fmt.Errorf("it names %s, which cudaenv never edits", strconv.Quote(name))
		}
		seen := map[string]bool{}
		for _, a := range ls.Added {
			if seen[a] || !underRoot(a, roots, suffixes) {
				return fmt.Errorf("its %s entry %s is not a folder of a toolkit it activated", name, strconv.Quote(a))
			}
			seen[a] = true
		}
	}
	return nil
}

// absNotTop reports whether p is an absolute path, on Unix or Windows,
// other than a file system's top: "/", `C:\`, `\\server\share`.
func absNotTop(p string) bool {
	p = strings.ReplaceAll(p, `\`, "/")
	switch {
	case strings.HasPrefix(p, "//"): // UNC: //server/share/dir
		parts := strings.Split(strings.Trim(p, "/"), "/")
		return len(parts) >= 3
	case strings.HasPrefix(p, "/"):
	case len(p) >= 3 && p[1] == ':' && p[2] == '/':
		p = p[2:]
	default:
		return false
	}
	return strings.Trim(p, "/") != ""
}

// underRoot reports whether entry is root/suffix (or root\suffix) for one
// of roots and suffixes.
func underRoot(entry string, roots, suffixes []string) bool {
	for _, r := range roots {
		rest, ok := strings.CutPrefix(entry, r)
		if ok && rest == "" && slices.Contains(suffixes, "") {
			return true
		}
		if !ok || rest == "" || (rest[0] != '/' && rest[0] != '\\') {
			continue
		}
		rest = strings.ReplaceAll(rest[1:], "\\", "/")
		for _, s := range suffixes {
			if rest == s {
				return true
			}
		}
	}
	return false
}

// Want is the environment a selection asks for.
type Want struct {
	Prepend map[string][]string // list variable → entries, in order
	Set     map[string]string   // scalar variable → value
	Active  string
}

// Change is one variable to set or unset.
type Change struct {
	Name  string
	Value string
	Unset bool
}

// Env is a copy of an environment that Apply can edit.
type Env map[string]string

// ParseEnv reads KEY=VALUE pairs (a process's environment); a name given
// twice keeps the last value. Windows names are case-insensitive and its
// PATH usually arrives as "Path": it is renamed to PATH, the name cudaenv
// edits, so a child does not get two. Entries without a name (Windows'
// hidden "=C:=C:\dir") are dropped.
func ParseEnv(environ []string, goos string) Env {
	m := make(Env, len(environ)+8)
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		if goos == "windows" && k != "PATH" && strings.EqualFold(k, "PATH") {
			k = "PATH"
		}
		m[k] = v
	}
	return m
}

// Pairs renders the environment as KEY=VALUE pairs, sorted.
func (e Env) Pairs() []string {
	out := make([]string, 0, len(e))
	for k, v := range e {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// Apply takes back prev from env and then applies want. It returns the
// changes against env, sorted by name (the state variable included), and
// the state to carry forward. An empty Want simply reverts.
func Apply(env Env, prev State, want Want, sep string) ([]Change, State) {
	cur := make(Env, len(prev.Lists)+len(prev.Scalars)+len(want.Prepend)+len(want.Set))
	unset := map[string]bool{}
	get := func(name string) (string, bool) {
		if unset[name] {
			return "", false
		}
		if v, ok := cur[name]; ok {
			return v, true
		}
		v, ok := env[name]
		return v, ok
	}
	put := func(name, value string) { cur[name] = value; delete(unset, name) }
	del := func(name string) { delete(cur, name); unset[name] = true }

	// Take back the previous selection.
	for name, ls := range prev.Lists {
		v, ok := get(name)
		if !ok {
			continue
		}
		entries := Split(v, sep)
		for _, a := range ls.Added {
			entries = removeFirst(entries, a)
		}
		if len(entries) == 0 && ls.Created {
			del(name)
		} else {
			put(name, strings.Join(entries, sep))
		}
	}
	for name, ss := range prev.Scalars {
		v, ok := get(name)
		if !ok || v != ss.Value {
			continue // the user changed it since: theirs now
		}
		if ss.Prev == nil {
			del(name)
		} else {
			put(name, *ss.Prev)
		}
	}

	// Apply the new one.
	next := State{Active: want.Active}
	for name, add := range want.Prepend {
		if len(add) == 0 {
			continue
		}
		v, ok := get(name)
		entries := append(append([]string{}, add...), Split(v, sep)...)
		put(name, strings.Join(entries, sep))
		if next.Lists == nil {
			next.Lists = map[string]ListState{}
		}
		next.Lists[name] = ListState{Added: append([]string{}, add...), Created: !ok}
	}
	for name, value := range want.Set {
		var prevValue *string
		if v, ok := get(name); ok {
			prevValue = &v
		}
		put(name, value)
		if next.Scalars == nil {
			next.Scalars = map[string]ScalarState{}
		}
		next.Scalars[name] = ScalarState{Value: value, Prev: prevValue}
	}
	if next.IsZero() {
		next.Active = ""
		del(StateVar)
	} else {
		put(StateVar, Encode(next))
	}

	var changes []Change
	for name, v := range cur {
		if old, ok := env[name]; !ok || old != v {
			changes = append(changes, Change{Name: name, Value: v})
		}
	}
	for name := range unset {
		if _, ok := env[name]; ok {
			changes = append(changes, Change{Name: name, Unset: true})
		}
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].Name < changes[j].Name })
	return changes, next
}

// Split breaks a list variable into entries; an empty value has none.
func Split(v, sep string) []string {
	if v == "" {
		return nil
	}
	return strings.Split(v, sep)
}

func removeFirst(entries []string, e string) []string {
	for i, x := range entries {
		if x == e {
			return append(entries[:i:i], entries[i+1:]...)
		}
	}
	return entries
}

// Result applies changes to env and returns the new environment.
func Result(env Env, changes []Change) Env {
	out := make(Env, len(env)+len(changes))
	for k, v := range env {
		out[k] = v
	}
	for _, c := range changes {
		if c.Unset {
			delete(out, c.Name)
		} else {
			out[c.Name] = c.Value
		}
	}
	return out
}
