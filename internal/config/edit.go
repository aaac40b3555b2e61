package config

import (
	"bytes"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
)

// Help says what each key takes, for `cudaenv config` and its errors;
// Use what it is for.
var (
	Help = map[string]string{
		"source":      "nvidia, pypi or auto",
		"mirror":      "an http(s) URL",
		"pypi_index":  "an http(s) URL",
		"system_root": "an absolute folder",
	}
	Use = map[string]string{
		"source":      "where install, install --for and ls-remote get CUDA (default nvidia)",
		"mirror":      "a server laid out like NVIDIA's redist one, used instead of it",
		"pypi_index":  "a PEP 691/503 simple index used instead of https://pypi.org/simple/",
		"system_root": "the shared, read-only system store, e.g. /opt/cudaenv",
	}
)

// Validate refuses a key the file does not know and a value the key does
// not take, saying what it takes. A value is one line without '#' (which
// starts a comment), quotes or control characters.
func Validate(key, value string) error {
	if _, ok := Keys[key]; !ok {
		return unknownKey(key)
	}
	if value == "" {
		return fmt.Errorf("%s: give a value (%s), or remove it with cudaenv config unset %s", key, Help[key], key)
	}
	if strings.ContainsAny(value, "#\"") || strings.TrimSpace(value) != value || strings.ContainsFunc(value, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return fmt.Errorf("%s: %q holds a '#', a quote, a control character or spaces at an end, which the settings file cannot keep; %s takes %s", key, value, key, Help[key])
	}
	bad := func() error { return fmt.Errorf("%s: %q is not %s", key, value, Help[key]) }
	switch key {
	case "source":
		if value != "nvidia" && value != "pypi" && value != "auto" {
			return bad()
		}
	case "mirror", "pypi_index":
		u, err := url.Parse(value)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return bad()
		}
	case "system_root":
		if !filepath.IsAbs(value) && !strings.HasPrefix(value, "/") {
			return bad()
		}
	}
	return nil
}

func unknownKey(key string) error {
	return fmt.Errorf("unknown setting %q; known: %s", key, strings.Join(keyNames(), ", "))
}

// KeyNames are the known keys, sorted.
func KeyNames() []string { return keyNames() }

// Set returns the file's text with key set to value: the line that set it
// last is rewritten in place (comments and other lines are kept), any
// earlier ones are dropped, and a key the file lacks is appended.
func Set(data []byte, key, value string) []byte {
	lines, last := settingLines(data, key)
	line := key + " = " + value
	var b bytes.Buffer
	for i, l := range lines {
		switch {
		case i == last:
			b.WriteString(line)
		case isSetting(l, key):
			continue
		default:
			b.WriteString(l)
		}
		b.WriteByte('\n')
	}
	if last < 0 {
		b.WriteString(line + "\n")
	}
	return b.Bytes()
}

// Unset returns the file's text without the lines that set key (any
// name, so a typo the file refuses can be removed), and whether there
// were any.
func Unset(data []byte, key string) ([]byte, bool) {
	lines, last := settingLines(data, key)
	if last < 0 {
		return data, false
	}
	var b bytes.Buffer
	for _, l := range lines {
		if !isSetting(l, key) {
			b.WriteString(l + "\n")
		}
	}
	return b.Bytes(), true
}

// settingLines splits the file into lines (without the final newline's
// empty one) and finds the last that sets key, -1 for none.
func settingLines(data []byte, key string) ([]string, int) {
	text := strings.TrimSuffix(string(data), "\n")
	if text == "" {
		return nil, -1
	}
	lines := strings.Split(text, "\n")
	last := -1
	for i, l := range lines {
		if isSetting(l, key) {
			last = i
		}
	}
	return lines, last
}

func isSetting(line, key string) bool {
	if c := strings.IndexByte(line, '#'); c >= 0 {
		line = line[:c]
	}
	k, _, ok := strings.Cut(line, "=")
	return ok && strings.TrimSpace(strings.TrimPrefix(k, "\xef\xbb\xbf")) == key
}
