package shims

import (
	_ "embed"
	"strings"
)

// knownCommands is commands.txt: NVIDIA's own toolkit commands, one a
// line, with the manifest component that ships each. It is a plain string
// read by hand, so a shim pays nothing for it until it asks.
//
//go:embed commands.txt
var knownCommands string

// Known reports whether name (without .exe) is a command NVIDIA ships in
// a CUDA toolkit's bin folder. Windows names are compared without case.
func Known(name, goos string) bool {
	if name == "" {
		return false
	}
	if goos == "windows" {
		name = strings.ToLower(name)
	}
	for rest := knownCommands; rest != ""; {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		if line == "" || line[0] == '#' {
			continue
		}
		entry := line
		if i := strings.IndexAny(line, " \t"); i >= 0 {
			entry = line[:i]
		}
		if prefix, ok := strings.CutSuffix(entry, "*"); ok {
			if strings.HasPrefix(name, prefix) {
				return true
			}
		} else if name == entry {
			return true
		}
	}
	return false
}
