// Package termsafe makes text from outside (directory names from a cloned
// repository, values from the environment) safe to print on a terminal:
// control characters, invalid UTF-8 and bidirectional overrides are
// written as visible escapes, so a name cannot move the cursor, retitle
// the window or hide text. Every message cudaenv prints goes through it.
package termsafe

import (
	"strings"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// Escape returns s with C0 and C1 control characters, DEL, invalid UTF-8
// bytes and Unicode bidirectional controls escaped: \n, \r and \t as such,
// other bytes as \xNN, runes as \uNNNN. Everything else, backslashes
// included (Windows paths), is kept, so ordinary text is unchanged.
func Escape(s string) string {
	i := 0
	for i < len(s) && s[i] >= 0x20 && s[i] < 0x7f {
		i++
	}
	if i == len(s) {
		return s // the common case: printable ASCII
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '\n':
				b.WriteString(`\n`)
			case c == '\r':
				b.WriteString(`\r`)
			case c == '\t':
				b.WriteString(`\t`)
			case c < 0x20 || c == 0x7f:
				b.WriteString(`\x`)
				b.WriteByte(hexDigits[c>>4])
				b.WriteByte(hexDigits[c&0xf])
			default:
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x`)
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&0xf])
		case unsafeRune(r):
			b.WriteString(`\u`)
			for shift := 12; shift >= 0; shift -= 4 {
				b.WriteByte(hexDigits[(r>>shift)&0xf])
			}
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// unsafeRune reports the runes a terminal acts on or that reorder text:
// C1 controls (U+0080–U+009F, which some terminals read as ESC sequences),
// bidirectional marks, embeddings, overrides and isolates, and the line
// and paragraph separators.
func unsafeRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x200e || r == 0x200f || r == 0x061c:
		return true
	case r >= 0x202a && r <= 0x202e:
		return true
	case r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0x2028 || r == 0x2029:
		return true
	}
	return false
}

// Join is errors.Join for messages printed one to a line: the errors'
// texts are joined with "; " instead of newlines (which Escape would show
// as \n), and errors.Is and errors.As still see each one. Nil errors are
// dropped; it is nil when all are.
func Join(errs ...error) error {
	var kept []error
	for _, err := range errs {
		if err != nil {
			kept = append(kept, err)
		}
	}
	if len(kept) == 0 {
		return nil
	}
	return &joined{kept}
}

type joined struct{ errs []error }

func (j *joined) Error() string {
	parts := make([]string, len(j.errs))
	for i, err := range j.errs {
		parts[i] = err.Error()
	}
	return strings.Join(parts, "; ")
}

func (j *joined) Unwrap() []error { return j.errs }

// Arg is s as one word of a command line a user copies into a POSIX
// shell (a hint in a message): bare when it is plain, else single-quoted,
// so brackets, spaces and quotes reach the command as they are
// ('jax[cuda13]==0.9.0', '/home/me/my dir'). Escape the message it goes
// into as every message is.
func Arg(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:@=,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
