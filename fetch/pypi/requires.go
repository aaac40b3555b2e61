package pypi

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Dependency is one Requires-Dist line (PEP 508, without URL forms):
// name[extras] specifiers ; marker.
type Dependency struct {
	Project    string // normalized
	Extras     []string
	Specifiers []Specifier // all must hold; none means any version
	Marker     string      // empty: always
}

// Specifier is one version clause: ==13.0.2, >=9.8, <10, ==12.*, ~=2.1.
type Specifier struct {
	Op, Version string
}

func (s Specifier) String() string { return s.Op + s.Version }

// Bounds on one requirement line and its marker: real ones are a few
// dozen characters and two levels deep.
const (
	maxRequirement = 1024
	maxMarkerDepth = 16
)

var (
	depName = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(?:\[([^\]]*)\])?\s*(.*)$`)
	})
	specClause = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(===|==|!=|<=|>=|~=|<|>)\s*(\S+)$`)
	})
	extraName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$`) })
	// arbitraryVersion is what === may compare with: any run of
	// printable characters but the separators of a requirement.
	arbitraryVersion = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9._+!*-]+$`) })
)

// ParseDependency parses a Requires-Dist value. It refuses what it does not
// understand (URL requirements, stray characters) rather than guess.
func ParseDependency(line string) (Dependency, error) {
	if len(line) > maxRequirement {
		return Dependency{}, fmt.Errorf("requirement longer than %d characters", maxRequirement)
	}
	req, marker, _ := strings.Cut(line, ";")
	m := depName().FindStringSubmatch(strings.TrimSpace(req))
	if m == nil {
		return Dependency{}, fmt.Errorf("requirement %s: no project name", strconv.Quote(truncate(line, 80)))
	}
	d := Dependency{Project: NormalizeProject(m[1]), Marker: strings.TrimSpace(marker)}
	if m[2] != "" || strings.Contains(req, "[") {
		for _, e := range strings.Split(m[2], ",") {
			e = strings.TrimSpace(e)
			if !extraName().MatchString(e) {
				return Dependency{}, fmt.Errorf("requirement %s: extra %s is not a name", strconv.Quote(truncate(line, 80)), strconv.Quote(e))
			}
			d.Extras = append(d.Extras, NormalizeProject(e))
		}
	}
	spec := strings.TrimSpace(m[3])
	if strings.HasPrefix(spec, "@") {
		return Dependency{}, fmt.Errorf("requirement %s: a URL requirement names no version on the index", strconv.Quote(truncate(line, 80)))
	}
	if strings.HasPrefix(spec, "(") && strings.HasSuffix(spec, ")") {
		spec = strings.TrimSpace(spec[1 : len(spec)-1])
	}
	if spec != "" {
		for _, c := range strings.Split(spec, ",") {
			s, err := ParseSpecifier(c)
			if err != nil {
				return Dependency{}, fmt.Errorf("requirement %s: %w", strconv.Quote(truncate(line, 80)), err)
			}
			d.Specifiers = append(d.Specifiers, s)
		}
	}
	if d.Marker != "" {
		if _, err := parseMarker(d.Marker); err != nil {
			return Dependency{}, fmt.Errorf("requirement %s: %w", strconv.Quote(truncate(line, 80)), err)
		}
	}
	return d, nil
}

// ParseSpecifier reads one version clause (PEP 440): an operator and a
// version, a trailing .* only after == or !=, a local label only with ==,
// != and ===, ~= with at least two release parts.
func ParseSpecifier(clause string) (Specifier, error) {
	c := strings.TrimSpace(clause)
	sm := specClause().FindStringSubmatch(c)
	if sm == nil {
		return Specifier{}, fmt.Errorf("cannot read version clause %s", strconv.Quote(truncate(c, 40)))
	}
	op, v := sm[1], sm[2]
	if op == "===" {
		if !arbitraryVersion().MatchString(v) {
			return Specifier{}, fmt.Errorf("cannot read version clause %s", strconv.Quote(truncate(c, 40)))
		}
		return Specifier{Op: op, Version: v}, nil
	}
	prefix, wild := strings.CutSuffix(v, ".*")
	if strings.Contains(prefix, "*") || wild && op != "==" && op != "!=" {
		return Specifier{}, fmt.Errorf("version clause %s: a wildcard goes only at the end of == or !=", strconv.Quote(truncate(c, 40)))
	}
	pv, ok := parseVersion(prefix)
	if !ok {
		return Specifier{}, fmt.Errorf("%s is not a version", strconv.Quote(truncate(v, 40)))
	}
	if pv.local != "" && (wild || op != "==" && op != "!=") {
		return Specifier{}, fmt.Errorf("version clause %s: a local version goes only with == or !=", strconv.Quote(truncate(c, 40)))
	}
	if op == "~=" && len(pv.release) < 2 {
		return Specifier{}, fmt.Errorf("version clause %s: ~= needs at least two release parts", strconv.Quote(truncate(c, 40)))
	}
	return Specifier{Op: op, Version: v}, nil
}

// Exact is the version an exact pin (==X, without a wildcard) names, or "".
func (d Dependency) Exact() string {
	if len(d.Specifiers) == 1 && isExact(d.Specifiers[0]) {
		return d.Specifiers[0].Version
	}
	return ""
}

// isExact: ==V (no wildcard) or ===V, what PEP 592 lets install a yanked
// file.
func isExact(s Specifier) bool {
	return (s.Op == "==" || s.Op == "===") && !strings.HasSuffix(s.Version, ".*")
}

// SpecString is the specifiers as written, joined: ">=9.8,<10".
func (d Dependency) SpecString() string { return specString(d.Specifiers) }

func specString(specs []Specifier) string {
	parts := make([]string, len(specs))
	for i, s := range specs {
		parts[i] = s.String()
	}
	return strings.Join(parts, ",")
}

// Allows reports whether version v satisfies every specifier. As pip does,
// a pre-release or dev release is allowed only when a specifier names one.
func (d Dependency) Allows(v string) bool {
	return allowsAll(d.Specifiers, v, namesPre(d.Specifiers))
}

// namesPre reports whether a specifier names a pre-release (or dev)
// version, which lets pre-releases satisfy the set (PEP 440; != does not
// count).
func namesPre(specs []Specifier) bool {
	for _, s := range specs {
		if s.Op == "!=" {
			continue
		}
		if sv, ok := parseVersion(strings.TrimSuffix(s.Version, ".*")); ok && sv.isPre() {
			return true
		}
	}
	return false
}

// allowsAll reports whether v satisfies every specifier; a pre-release
// only when pre is set.
func allowsAll(specs []Specifier, v string, pre bool) bool {
	pv, ok := parseVersion(v)
	if !ok {
		// Only === can match what is not a version.
		for _, s := range specs {
			if s.Op != "===" || !strings.EqualFold(strings.TrimSpace(v), s.Version) {
				return false
			}
		}
		return len(specs) > 0
	}
	if pv.isPre() && !pre {
		return false
	}
	for _, s := range specs {
		if !s.allows(pv, v) {
			return false
		}
	}
	return true
}

// Allows reports whether v satisfies this one clause, pre-releases aside.
func (s Specifier) Allows(v string) bool {
	pv, ok := parseVersion(v)
	if !ok {
		return s.Op == "===" && strings.EqualFold(strings.TrimSpace(v), s.Version)
	}
	return s.allows(pv, v)
}

// allows is PEP 440's meaning of each operator (as the packaging library
// implements it).
func (s Specifier) allows(pv version, raw string) bool {
	if s.Op == "===" {
		return strings.EqualFold(strings.TrimSpace(raw), s.Version)
	}
	if prefix, ok := strings.CutSuffix(s.Version, ".*"); ok {
		sv, _ := parseVersion(prefix)
		match := prefixMatch(pv.public(), sv)
		if s.Op == "!=" {
			return !match
		}
		return match
	}
	sv, ok := parseVersion(s.Version)
	if !ok {
		return false
	}
	switch s.Op {
	case "==", "!=":
		cand := pv
		if sv.local == "" {
			cand = pv.public() // ==13.0.2 matches 13.0.2+cu130
		}
		eq := cand.compare(sv) == 0
		return eq == (s.Op == "==")
	case "<=":
		return pv.public().compare(sv) <= 0
	case ">=":
		return pv.public().compare(sv) >= 0
	case "<":
		// <V does not take a pre-release of V itself unless V is one.
		return pv.compare(sv) < 0 && !(!sv.isPre() && pv.isPre() && pv.base().compare(sv.base()) == 0)
	case ">":
		// >V takes no post-release of V (unless V is one) and no local
		// version of V.
		if pv.compare(sv) <= 0 {
			return false
		}
		if !sv.hasPost && pv.hasPost && pv.base().compare(sv.base()) == 0 {
			return false
		}
		return !(pv.local != "" && pv.base().compare(sv.base()) == 0)
	case "~=":
		n := len(sv.release) - 1
		return pv.public().compare(sv) >= 0 && prefixMatch(pv.public(), version{epoch: sv.epoch, release: sv.release[:n]})
	}
	return false
}

// prefixMatch is ==P.*: the epoch, the release padded with zeros to P's
// length, and any pre-, post- or dev part P names, equal.
func prefixMatch(v, p version) bool {
	if v.epoch != p.epoch {
		return false
	}
	rel := v.release
	for len(rel) < len(p.release) {
		rel = append(rel[:len(rel):len(rel)], 0)
	}
	for i, n := range p.release {
		if rel[i] != n {
			return false
		}
	}
	// A prefix that goes past the release (1.0rc1.*) needs the rest to
	// match in order: the release must be exactly P's, then each part.
	if p.preKind == 0 && !p.hasPost && !p.hasDev {
		return true
	}
	if len(v.release) > len(p.release) && compareRelease(v.release[len(p.release):], nil) != 0 {
		return false
	}
	if p.preKind != 0 && (v.preKind != p.preKind || v.pre != p.pre) {
		return false
	}
	if p.hasPost && (!v.hasPost || v.post != p.post || p.preKind == 0 && v.preKind != 0) {
		return false
	}
	if p.hasDev && (!v.hasDev || v.dev != p.dev) {
		return false
	}
	return true
}

// MarkerEnv is what a marker is evaluated against: PEP 508's variables
// for the target (platform and Python) and the extras asked for.
type MarkerEnv struct {
	Vars   map[string]string
	Extras []string // normalized
}

// PythonEnv is the marker environment of CPython pyVersion ("3.12") on a
// redist platform (linux-x86_64, linux-sbsa, windows-x86_64, ...).
func PythonEnv(platform, pyVersion string, extras ...string) (MarkerEnv, error) {
	var osName, sys, system, machine string
	switch platform {
	case LinuxX86_64:
		osName, sys, system, machine = "posix", "linux", "Linux", "x86_64"
	case LinuxSBSA, "linux-aarch64":
		osName, sys, system, machine = "posix", "linux", "Linux", "aarch64"
	case WindowsX86_64:
		osName, sys, system, machine = "nt", "win32", "Windows", "AMD64"
	case WindowsARM64:
		osName, sys, system, machine = "nt", "win32", "Windows", "ARM64"
	default:
		return MarkerEnv{}, fmt.Errorf("platform %q has no Python wheels cudaenv knows", platform)
	}
	if !regexp.MustCompile(`^3\.[0-9]{1,2}$`).MatchString(pyVersion) {
		return MarkerEnv{}, fmt.Errorf("python version %q: want 3.N, e.g. 3.12", pyVersion)
	}
	env := MarkerEnv{Vars: map[string]string{
		"os_name": osName, "sys_platform": sys, "platform_system": system, "platform_machine": machine,
		"python_version": pyVersion, "python_full_version": pyVersion + ".0",
		"platform_python_implementation": "CPython", "implementation_name": "cpython",
		"implementation_version": pyVersion + ".0", "platform_release": "", "platform_version": "",
	}}
	for _, e := range extras {
		env.Extras = append(env.Extras, NormalizeProject(e))
	}
	return env, nil
}

// Applies reports whether the dependency's marker holds in env.
func (d Dependency) Applies(env MarkerEnv) (bool, error) {
	if d.Marker == "" {
		return true, nil
	}
	n, err := parseMarker(d.Marker)
	if err != nil {
		return false, err
	}
	return n.eval(env)
}

// A marker is parsed into a small tree: and/or nodes over comparisons.
type markerNode struct {
	op          string // "and", "or", or a comparison operator
	left, right *markerNode
	lhs, rhs    markerValue
}

type markerValue struct {
	variable string // set for a variable
	literal  string
}

var markerVariables = []string{"os_name", "sys_platform", "platform_system", "platform_machine", "python_version",
	"python_full_version", "platform_python_implementation", "implementation_name", "implementation_version",
	"platform_release", "platform_version", "extra", "os.name", "sys.platform", "platform.version",
	"platform.machine", "platform.python_implementation", "python_implementation"}

type markerParser struct {
	toks []string
	pos  int
}

func parseMarker(s string) (*markerNode, error) {
	toks, err := markerTokens(s)
	if err != nil {
		return nil, err
	}
	p := &markerParser{toks: toks}
	n, err := p.or(0)
	if err != nil {
		return nil, err
	}
	if p.pos != len(p.toks) {
		return nil, fmt.Errorf("marker: unexpected %s", strconv.Quote(truncate(p.toks[p.pos], 40)))
	}
	return n, nil
}

func markerTokens(s string) ([]string, error) {
	var toks []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			i++
		case c == '(' || c == ')':
			toks = append(toks, s[i:i+1])
			i++
		case c == '"' || c == '\'':
			end := strings.IndexByte(s[i+1:], c)
			if end < 0 {
				return nil, errors.New("marker: unterminated string")
			}
			toks = append(toks, s[i:i+end+2])
			i += end + 2
		case strings.IndexByte("<>=!~", c) >= 0:
			j := i
			for j < len(s) && strings.IndexByte("<>=!~", s[j]) >= 0 {
				j++
			}
			toks = append(toks, s[i:j])
			i = j
		case c == '_' || c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9':
			j := i
			for j < len(s) && (s[j] == '_' || s[j] == '.' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9') {
				j++
			}
			toks = append(toks, s[i:j])
			i = j
		default:
			return nil, fmt.Errorf("marker: unexpected character %q", c)
		}
	}
	return toks, nil
}

func (p *markerParser) peek() string {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return ""
}

func (p *markerParser) or(depth int) (*markerNode, error) {
	n, err := p.and(depth)
	for err == nil && p.peek() == "or" {
		p.pos++
		var r *markerNode
		if r, err = p.and(depth); err == nil {
			n = &markerNode{op: "or", left: n, right: r}
		}
	}
	return n, err
}

func (p *markerParser) and(depth int) (*markerNode, error) {
	n, err := p.expr(depth)
	for err == nil && p.peek() == "and" {
		p.pos++
		var r *markerNode
		if r, err = p.expr(depth); err == nil {
			n = &markerNode{op: "and", left: n, right: r}
		}
	}
	return n, err
}

func (p *markerParser) expr(depth int) (*markerNode, error) {
	if p.peek() == "(" {
		if depth >= maxMarkerDepth {
			return nil, fmt.Errorf("marker: nested deeper than %d", maxMarkerDepth)
		}
		p.pos++
		n, err := p.or(depth + 1)
		if err != nil {
			return nil, err
		}
		if p.peek() != ")" {
			return nil, errors.New("marker: missing )")
		}
		p.pos++
		return n, nil
	}
	lhs, err := p.value()
	if err != nil {
		return nil, err
	}
	op := p.peek()
	switch op {
	case "==", "!=", "<", "<=", ">", ">=", "~=", "===", "in":
		p.pos++
	case "not":
		p.pos++
		if p.peek() != "in" {
			return nil, errors.New("marker: 'not' must be followed by 'in'")
		}
		p.pos++
		op = "not in"
	default:
		return nil, fmt.Errorf("marker: want a comparison, got %s", strconv.Quote(truncate(op, 40)))
	}
	rhs, err := p.value()
	if err != nil {
		return nil, err
	}
	if (lhs.variable == "") == (rhs.variable == "") {
		return nil, errors.New("marker: a comparison needs one variable and one quoted string")
	}
	return &markerNode{op: op, lhs: lhs, rhs: rhs}, nil
}

func (p *markerParser) value() (markerValue, error) {
	t := p.peek()
	if t == "" {
		return markerValue{}, errors.New("marker: ends early")
	}
	p.pos++
	if t[0] == '"' || t[0] == '\'' {
		return markerValue{literal: t[1 : len(t)-1]}, nil
	}
	if !slices.Contains(markerVariables, t) {
		return markerValue{}, fmt.Errorf("marker: unknown variable %s", strconv.Quote(truncate(t, 40)))
	}
	return markerValue{variable: strings.ReplaceAll(t, ".", "_")}, nil
}

func (n *markerNode) eval(env MarkerEnv) (bool, error) {
	switch n.op {
	case "and", "or":
		l, err := n.left.eval(env)
		if err != nil {
			return false, err
		}
		r, err := n.right.eval(env)
		if err != nil {
			return false, err
		}
		if n.op == "and" {
			return l && r, nil
		}
		return l || r, nil
	}
	if n.lhs.variable == "extra" || n.rhs.variable == "extra" {
		lit := NormalizeProject(n.lhs.literal + n.rhs.literal)
		has := slices.Contains(env.Extras, lit)
		switch n.op {
		case "==":
			return has, nil
		case "!=":
			return !has, nil
		}
		return false, fmt.Errorf("marker: extra takes == or !=, not %s", n.op)
	}
	val := func(v markerValue) string {
		if v.variable == "" {
			return v.literal
		}
		switch v.variable {
		case "python_implementation":
			return env.Vars["platform_python_implementation"]
		case "platform_version":
			return env.Vars["platform_version"]
		}
		return env.Vars[v.variable]
	}
	l, r := val(n.lhs), val(n.rhs)
	switch n.op {
	case "in":
		return strings.Contains(r, l), nil
	case "not in":
		return !strings.Contains(r, l), nil
	}
	if _, ok := parseVersion(l); ok {
		if _, ok := parseVersion(r); ok {
			return Dependency{Specifiers: []Specifier{{Op: n.op, Version: r}}}.allowsAny(l), nil
		}
	}
	switch n.op {
	case "==", "===":
		return l == r, nil
	case "!=":
		return l != r, nil
	}
	return false, fmt.Errorf("marker: %s %s %s compares strings that are not versions", strconv.Quote(truncate(l, 40)), n.op, strconv.Quote(truncate(r, 40)))
}

// allowsAny is Allows without the pre-release rule (markers compare
// versions as they are).
func (d Dependency) allowsAny(v string) bool {
	return allowsAll(d.Specifiers, v, true)
}
