package pypi

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// WheelName is a wheel file name split into its parts (PEP 427):
// {distribution}-{version}(-{build})?-{python}-{abi}-{platform}.whl.
// The tag fields hold the compressed tag sets split at '.'.
type WheelName struct {
	Project   string // normalized (PEP 503): nvidia-cuda-runtime-cu12
	Version   string
	Build     string // optional build tag, starts with a digit
	Python    []string
	ABI       []string
	Platforms []string
}

// ParseWheelName splits a wheel file name. It refuses names that are not
// wheels or do not have the five or six dash-separated parts.
func ParseWheelName(filename string) (WheelName, error) {
	stem, ok := strings.CutSuffix(filename, ".whl")
	if !ok {
		return WheelName{}, fmt.Errorf("parse wheel name %q: not a .whl file", filename)
	}
	parts := strings.Split(stem, "-")
	var w WheelName
	switch len(parts) {
	case 5:
	case 6:
		w.Build = parts[2]
		if w.Build == "" || w.Build[0] < '0' || w.Build[0] > '9' {
			return WheelName{}, fmt.Errorf("parse wheel name %q: build tag %q does not start with a digit", filename, w.Build)
		}
		parts = append(parts[:2], parts[3:]...)
	default:
		return WheelName{}, fmt.Errorf("parse wheel name %q: want 5 or 6 dash-separated parts, got %d", filename, len(parts))
	}
	for _, p := range parts {
		if p == "" {
			return WheelName{}, fmt.Errorf("parse wheel name %q: empty part", filename)
		}
	}
	w.Project = NormalizeProject(parts[0])
	w.Version = parts[1]
	w.Python = strings.Split(parts[2], ".")
	w.ABI = strings.Split(parts[3], ".")
	w.Platforms = strings.Split(parts[4], ".")
	return w, nil
}

var projectSeparators = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[-_.]+`) })

// NormalizeProject normalizes a project name as PEP 503 does: lower case,
// runs of '-', '_' and '.' become one '-'.
func NormalizeProject(name string) string {
	return projectSeparators().ReplaceAllString(strings.ToLower(name), "-")
}
