// Package config reads cudaenv's settings file (~/.config/cudaenv/config):
// `key = value` lines with # comments, for defaults that flags and
// environment variables override.
package config

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
)

// Keys are the settings the file may hold, with the variable that overrides each.
var Keys = map[string]string{
	"source":     "CUDAENV_SOURCE",
	"mirror":     "CUDAENV_MIRROR",
	"pypi_index": "CUDAENV_PYPI_INDEX",
	// system_root is the shared, read-only system store (see dirs.Dirs.System).
	"system_root": "CUDAENV_SYSTEM_ROOT",
}

// FileName is the settings file's name in the config directory.
const FileName = "config"

// Parse reads the file. Unknown keys and malformed lines are errors with
// the line number, so a typo does not silently do nothing.
func Parse(name string, data []byte) (map[string]string, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	out := map[string]string{}
	for i, line := range strings.Split(string(data), "\n") {
		if c := strings.IndexByte(line, '#'); c >= 0 {
			line = line[:c]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" {
			return nil, &LineError{File: name, Line: i + 1, Msg: "expected key = value"}
		}
		if _, known := Keys[k]; !known {
			le := &LineError{File: name, Line: i + 1, Msg: fmt.Sprintf("unknown setting %q; known: %s", k, strings.Join(keyNames(), ", "))}
			if !strings.ContainsFunc(k, func(r rune) bool { return !isKeyRune(r) }) {
				le.Key = k // one cudaenv config unset can name
			}
			return nil, le
		}
		out[k] = strings.Trim(v, `"`)
	}
	return out, nil
}

// LineError is a line of the settings file that Parse refuses.
type LineError struct {
	File string
	Line int
	// Key is the unknown key the line sets, "" for a line that is no
	// key = value (or whose key cudaenv config unset could not be given).
	Key string
	Msg string
}

func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// Fix says how to be rid of the line: cudaenv config unset removes a
// line that sets a key, not one that sets nothing.
func (e *LineError) Fix() string {
	if e.Key != "" {
		return "fix that line, or remove it with cudaenv config unset " + e.Key
	}
	return "fix that line, or delete it (it sets nothing)"
}

func isKeyRune(r rune) bool {
	return r == '_' || r == '-' || r == '.' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
}

func keyNames() []string {
	var ks []string
	for k := range Keys {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// Lookup returns one key's value from the file's text without judging the
// rest of it: the shims and the prompt hook read system_root this way on
// every call and must not fail on a typo elsewhere (the CLI's commands
// report those through Parse). The last line that sets the key wins, as
// in Parse.
func Lookup(data []byte, key string) (string, bool) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	var val string
	found := false
	for _, line := range strings.Split(string(data), "\n") {
		if c := strings.IndexByte(line, '#'); c >= 0 {
			line = line[:c]
		}
		k, v, ok := strings.Cut(line, "=")
		if ok && strings.TrimSpace(k) == key {
			val, found = strings.Trim(strings.TrimSpace(v), `"`), true
		}
	}
	return val, found
}
