package resolve

import (
	"errors"
	"strings"

	"github.com/cudaenv/cudaenv/internal/version"
)

// Options are the settings a selection may carry beside its specs, in
// the same words (a .cuda-version of `12.4 libraries=off`,
// CUDAENV_VERSION="12.4 libraries=off").
type Options struct {
	// NoLibraries (libraries=off): the toolkit is selected for building
	// only; activation leaves LD_LIBRARY_PATH alone, so a framework
	// installed from wheels keeps loading its own nvidia-* libraries
	// through its RUNPATH (LD_LIBRARY_PATH is searched first).
	NoLibraries bool
}

// LibrariesKey is the one setting's key.
const LibrariesKey = "libraries"

// LibrariesOff is the word that selects a toolkit without its libraries.
const LibrariesOff = LibrariesKey + "=off"

// Words are the options as the grammar writes them; none for defaults.
func (o Options) Words() []string {
	if o.NoLibraries {
		return []string{LibrariesOff}
	}
	return nil
}

// IsOption reports whether a word is a setting (key=value) rather than
// a version spec. Only the known key counts: any other word with = is a
// spec, and so a syntax error that names it.
func IsOption(word string) bool {
	k, _, ok := strings.Cut(word, "=")
	return ok && strings.EqualFold(k, LibrariesKey)
}

func parseOption(word string) (Options, error) {
	_, v, _ := strings.Cut(word, "=")
	switch strings.ToLower(v) {
	case "off":
		return Options{NoLibraries: true}, nil
	case "on":
		return Options{}, nil
	}
	return Options{}, errors.New("libraries takes on or off (libraries=off leaves LD_LIBRARY_PATH to the framework)")
}

// optionNeedsCUDA says what is wrong with settings beside specs: they
// belong to a CUDA selection, not to system or to cuDNN alone.
func optionNeedsCUDA(specs []version.Spec) string {
	for _, sp := range specs {
		if sp.Kind == version.System {
			return "cannot be combined with system"
		}
	}
	for _, sp := range specs {
		if sp.Tool == version.CUDA {
			return ""
		}
	}
	return "goes with a CUDA version, e.g. 12.4 " + LibrariesOff
}
