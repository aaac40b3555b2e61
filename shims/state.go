package shims

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cudaenv/cudaenv/internal/envdiff"
)

// applyFresh is envdiff.Apply for an environment that carries no cudaenv
// state (no prompt hook ran), the usual case for a shim: the lists get
// their entries prepended, the scalars their values, and the state
// variable records both, byte for byte as envdiff.Encode writes it. It
// edits env in place. It exists because a shim runs on every call and
// encoding/json's first use in a process costs more than the rest of the
// shim together; the tests hold it to envdiff.Apply.
func applyFresh(env envdiff.Env, want envdiff.Want, sep string) {
	var st envdiff.State
	for name, add := range want.Prepend {
		if len(add) == 0 {
			continue
		}
		v, ok := env[name]
		if ok && v != "" {
			env[name] = strings.Join(add, sep) + sep + v
		} else {
			env[name] = strings.Join(add, sep)
		}
		if st.Lists == nil {
			st.Lists = map[string]envdiff.ListState{}
		}
		st.Lists[name] = envdiff.ListState{Added: add, Created: !ok}
	}
	for name, value := range want.Set {
		var prev *string
		if v, ok := env[name]; ok {
			prev = &v
		}
		env[name] = value
		if st.Scalars == nil {
			st.Scalars = map[string]envdiff.ScalarState{}
		}
		st.Scalars[name] = envdiff.ScalarState{Value: value, Prev: prev}
	}
	if st.IsZero() {
		return
	}
	st.Active = want.Active
	env[envdiff.StateVar] = encodeState(st)
}

// encodeState is envdiff.Encode without reflection: the JSON that
// json.Marshal writes for a State in format envdiff.Format, every string
// escaped with envdiff.EscapeString.
func encodeState(s envdiff.State) string {
	b := make([]byte, 0, 512)
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, envdiff.Format, 10)
	first := false
	field := func(name string) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendJSONString(b, name)
		b = append(b, ':')
	}
	if len(s.Lists) > 0 {
		field("lists")
		b = append(b, '{')
		for i, k := range slices.Sorted(maps.Keys(s.Lists)) {
			if i > 0 {
				b = append(b, ',')
			}
			ls := s.Lists[k]
			b = appendJSONString(b, k)
			b = append(b, `:{"added":`...)
			if ls.Added == nil {
				b = append(b, "null"...)
			} else {
				b = append(b, '[')
				for j, a := range ls.Added {
					if j > 0 {
						b = append(b, ',')
					}
					b = appendJSONString(b, envdiff.EscapeString(a))
				}
				b = append(b, ']')
			}
			if ls.Created {
				b = append(b, `,"created":true`...)
			}
			b = append(b, '}')
		}
		b = append(b, '}')
	}
	if len(s.Scalars) > 0 {
		field("scalars")
		b = append(b, '{')
		for i, k := range slices.Sorted(maps.Keys(s.Scalars)) {
			if i > 0 {
				b = append(b, ',')
			}
			ss := s.Scalars[k]
			b = appendJSONString(b, k)
			b = append(b, `:{"value":`...)
			b = appendJSONString(b, envdiff.EscapeString(ss.Value))
			if ss.Prev != nil {
				b = append(b, `,"prev":`...)
				b = appendJSONString(b, envdiff.EscapeString(*ss.Prev))
			}
			b = append(b, '}')
		}
		b = append(b, '}')
	}
	if s.Active != "" {
		field("active")
		b = appendJSONString(b, envdiff.EscapeString(s.Active))
	}
	b = append(b, '}')
	return string(b)
}

const hexDigits = "0123456789abcdef"

// appendJSONString quotes s as encoding/json does by default: invalid
// UTF-8 becomes U+FFFD, and <, >, &, U+2028 and U+2029 are escaped.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
