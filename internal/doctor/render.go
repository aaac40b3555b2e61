package doctor

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/cudaenv/cudaenv/internal/termsafe"
)

// Style selects how WriteText marks each check.
type Style int

const (
	// Plain marks checks with "ok", "warn", "FAIL" and "skip": for pipes,
	// files and NO_COLOR.
	Plain Style = iota
	// Fancy marks them with a coloured ✓, !, ✗ and -: for terminals.
	Fancy
)

const idWidth = len(IDHostCompiler)

// WriteText writes one line per check, "<mark> <id> <message>", and the
// hint, when there is one, on an indented line below it.
func WriteText(w io.Writer, r Report, style Style) error {
	var b strings.Builder
	markWidth := 4
	if style == Fancy {
		markWidth = 1
	}
	for _, c := range r.Checks {
		// Messages hold paths: the working directory's, PATH's, Python's.
		fmt.Fprintf(&b, "%s %-*s %s\n", mark(c.Status, style), idWidth, c.ID, termsafe.Escape(c.Message))
		if c.Hint != "" {
			fmt.Fprintf(&b, "%s hint: %s\n", strings.Repeat(" ", markWidth+1+idWidth), termsafe.Escape(c.Hint))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func mark(s Status, style Style) string {
	if style == Fancy {
		switch s {
		case OK:
			return "\x1b[32m✓\x1b[0m"
		case Warn:
			return "\x1b[33m!\x1b[0m"
		case Fail:
			return "\x1b[31m✗\x1b[0m"
		}
		return "\x1b[2m-\x1b[0m"
	}
	switch s {
	case OK:
		return "ok  "
	case Warn:
		return "warn"
	case Fail:
		return "FAIL"
	}
	return "skip"
}

// WriteJSON writes the report as indented JSON:
// {"status": "warn", "checks": [{"id": "driver", "status": "ok", "message": "...", "hint": ""}, ...]}.
func WriteJSON(w io.Writer, r Report) error {
	if r.Checks == nil {
		r.Checks = []Check{}
	}
	if r.Status == "" {
		r.Status = OK
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // keep "GCC <= 13" readable
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("encode doctor report: %w", err)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
