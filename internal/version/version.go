// Package version parses CUDA and cuDNN version numbers and version specs,
// orders them numerically and matches a spec against installed versions.
package version

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Version is a dotted numeric version: 12.4.1, or cuDNN's four-part 8.9.7.29.
type Version []int

// Parse reads a dotted numeric version of one to four components.
func Parse(s string) (Version, error) {
	if s == "" {
		return nil, errors.New("empty version")
	}
	fields := strings.Split(s, ".")
	if len(fields) > 4 {
		return nil, fmt.Errorf("version %q has more than four parts", s)
	}
	v := make(Version, len(fields))
	for i, f := range fields {
		if f == "" || len(f) > 9 {
			return nil, fmt.Errorf("invalid version %q", s)
		}
		for _, c := range f {
			if c < '0' || c > '9' {
				return nil, fmt.Errorf("invalid version %q", s)
			}
		}
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("invalid version %q", s)
		}
		v[i] = n
	}
	return v, nil
}

// MustParse is Parse for constants in tests and tables.
func MustParse(s string) Version {
	v, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return v
}

func (v Version) String() string {
	var b strings.Builder
	for i, n := range v {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(strconv.Itoa(n))
	}
	return b.String()
}

// Major is the first component, or 0 for an empty version.
func (v Version) Major() int {
	if len(v) == 0 {
		return 0
	}
	return v[0]
}

// Compare orders versions numerically per component (12.10 > 12.9); a
// shorter version sorts before a longer one with the same prefix.
// Spec matching: 12.4 and 12.4.0 differ here, unlike in compat's driver tables.
func Compare(a, b Version) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(a) < len(b):
		return -1
	case len(a) > len(b):
		return 1
	}
	return 0
}

// HasPrefix reports whether v begins with every component of p (12.4.1 has 12.4).
func (v Version) HasPrefix(p Version) bool {
	if len(p) > len(v) {
		return false
	}
	for i := range p {
		if v[i] != p[i] {
			return false
		}
	}
	return true
}

// Tool names what a spec selects.
type Tool string

const (
	CUDA  Tool = "cuda"
	Cudnn Tool = "cudnn"
)

// Kind is the form of a spec.
type Kind int

const (
	// Prefix matches the newest installed version that starts with the spec.
	Prefix Kind = iota
	// Latest matches the newest installed version.
	Latest
	// System makes cudaenv step aside.
	System
)

// Spec is one selection request: 12.4, latest, system or cudnn@9.5.
type Spec struct {
	Tool   Tool
	Kind   Kind
	Prefix Version
}

func (s Spec) String() string {
	var body string
	switch s.Kind {
	case Latest:
		body = "latest"
	case System:
		return "system"
	default:
		body = s.Prefix.String()
	}
	if s.Tool.Library() {
		return string(s.Tool) + "@" + body
	}
	return body
}

// ErrInvalid marks text that is not a version spec.
var ErrInvalid = errors.New("invalid version")

// ParseSpec reads one spec. Only digits, dots, letters and one '@' can form
// a valid spec, so anything that could be a path or shell code is refused.
func ParseSpec(s string) (Spec, error) {
	tool := CUDA
	body := s
	if name, rest, ok := strings.Cut(s, "@"); ok {
		t, ok := ToolNamed(strings.ToLower(name))
		if !ok {
			return Spec{}, ErrInvalid
		}
		tool = t
		body = rest
	}
	switch strings.ToLower(body) {
	case "latest":
		return Spec{Tool: tool, Kind: Latest}, nil
	case "system":
		if tool != CUDA {
			return Spec{}, ErrInvalid
		}
		return Spec{Tool: CUDA, Kind: System}, nil
	}
	v, err := Parse(body)
	if err != nil {
		return Spec{}, ErrInvalid
	}
	if tool == CUDA && len(v) > 3 {
		return Spec{}, ErrInvalid
	}
	return Spec{Tool: tool, Kind: Prefix, Prefix: v}, nil
}

// Match reports whether v satisfies the spec.
func (s Spec) Match(v Version) bool {
	switch s.Kind {
	case Latest:
		return true
	case Prefix:
		return v.HasPrefix(s.Prefix)
	}
	return false
}

// Best returns the newest candidate matching s, or false.
func Best(s Spec, candidates []Version) (Version, bool) {
	var best Version
	found := false
	for _, c := range candidates {
		if s.Match(c) && (!found || Compare(c, best) > 0) {
			best, found = c, true
		}
	}
	return best, found
}
