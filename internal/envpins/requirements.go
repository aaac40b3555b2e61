package envpins

import (
	"fmt"
	"strings"

	"github.com/cudaenv/cudaenv/fetch/pypi"
)

// maxRequirementLines bounds a requirements file's logical lines.
const maxRequirementLines = 100000

// readRequirements reads a requirements file of exact pins (pip freeze,
// uv export): every NVIDIA line must pin one version (name==version),
// markers are evaluated for the target, hashes and other per-line options
// are ignored. Other files are not followed (-r, -c): pass them.
func readRequirements(data []byte, c *collector, t Target) error {
	m, err := newMarkerEnv(t, &c.passed)
	if err != nil {
		return err
	}
	lines := logicalLines(string(data))
	if len(lines) > maxRequirementLines {
		return fmt.Errorf("%d lines, more than any real requirements file", len(lines))
	}
	for _, l := range lines {
		n, line := l.n, l.text
		if strings.HasPrefix(line, "-") {
			opt, _, _ := strings.Cut(line, " ")
			switch opt {
			case "-r", "--requirement", "-c", "--constraint":
				c.passed = append(c.passed, fmt.Sprintf("line %d: %s is not followed; pass that file itself", n, opt))
			}
			continue
		}
		// Per-requirement options (--hash=…) follow the requirement.
		if i := strings.Index(line, " --"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		d, err := pypi.ParseDependency(line)
		if err != nil {
			name := leadingName(line)
			if isNVIDIA(pypi.NormalizeProject(name)) {
				return fmt.Errorf("line %d: %v", n, err)
			}
			continue // not NVIDIA's: a URL requirement, an editable path
		}
		if !isNVIDIA(d.Project) && frameworkName(d.Project) == "" {
			continue
		}
		if !m.applies(d.Marker, fmt.Sprintf("line %d (%s)", n, d.Project)) {
			continue
		}
		v := d.Exact()
		if v == "" || strings.ContainsAny(v, "*") {
			if frameworkName(d.Project) != "" {
				continue
			}
			return fmt.Errorf("line %d: %s%s is not an exact pin (name==version); pass the environment itself, or a requirements file from pip freeze or uv export", n, d.Project, d.SpecString())
		}
		if err := c.add(d.Project, v, fmt.Sprintf("line %d", n)); err != nil {
			return err
		}
	}
	return nil
}

type logicalLine struct {
	n    int // the number of its first physical line
	text string
}

// logicalLines joins continued lines (a trailing backslash), drops
// comments (# at the start or after a space) and blank lines.
func logicalLines(s string) []logicalLine {
	var out []logicalLine
	var cur strings.Builder
	start := 0
	for i, raw := range strings.Split(s, "\n") {
		raw = strings.TrimRight(raw, "\r")
		if cur.Len() == 0 {
			start = i + 1
		}
		if j := commentStart(raw); j >= 0 {
			raw = raw[:j]
		}
		if strings.HasSuffix(raw, "\\") {
			cur.WriteString(strings.TrimSuffix(raw, "\\"))
			cur.WriteByte(' ')
			continue
		}
		cur.WriteString(raw)
		if text := strings.Join(strings.Fields(cur.String()), " "); text != "" {
			out = append(out, logicalLine{start, text})
		}
		cur.Reset()
	}
	if text := strings.Join(strings.Fields(cur.String()), " "); text != "" {
		out = append(out, logicalLine{start, text})
	}
	return out
}

func commentStart(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] == '#' && (i == 0 || s[i-1] == ' ' || s[i-1] == '\t') {
			return i
		}
	}
	return -1
}

// leadingName is the name a line starts with.
func leadingName(s string) string {
	end := strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.')
	})
	if end < 0 {
		return s
	}
	return s[:end]
}
