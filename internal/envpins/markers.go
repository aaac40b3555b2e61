package envpins

import (
	"fmt"

	"github.com/cudaenv/cudaenv/fetch/pypi"
)

// markerEnv evaluates lock files' markers for a target.
type markerEnv struct {
	env    pypi.MarkerEnv
	passed *[]string
}

func newMarkerEnv(t Target, passed *[]string) (markerEnv, error) {
	env, err := pypi.PythonEnv(t.Platform, t.Python)
	if err != nil {
		return markerEnv{}, err
	}
	return markerEnv{env: env, passed: passed}, nil
}

// applies reports whether marker holds on the target ("" always does). A
// marker the evaluator cannot read (a newer syntax, or garbage) does not
// hold, and what it left out is said.
func (m markerEnv) applies(marker, what string) bool {
	if marker == "" {
		return true
	}
	ok, err := pypi.Dependency{Project: "x", Marker: marker}.Applies(m.env)
	if err != nil {
		*m.passed = append(*m.passed, fmt.Sprintf("%s: its marker does not evaluate (%v)", what, err))
		return false
	}
	return ok
}
