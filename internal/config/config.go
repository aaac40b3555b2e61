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
			return nil, fmt.Errorf("%s:%d: expected key = value", name, i+1)
		}
		if _, known := Keys[k]; !known {
			return nil, fmt.Errorf("%s:%d: unknown setting %q; known: %s", name, i+1, k, strings.Join(keyNames(), ", "))
		}
		out[k] = strings.Trim(v, `"`)
	}
	return out, nil
}

func keyNames() []string {
	var ks []string
	for k := range Keys {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
