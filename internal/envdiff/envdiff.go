// Package envdiff computes the environment changes that switch from one
// cudaenv selection to another, taking back exactly what cudaenv added before.
//
// List variables (PATH, LD_LIBRARY_PATH) are edited entry by entry, so entries
// the user adds meanwhile survive a switch; scalar variables get the value the
// user had before back, or are unset again if they were unset. What cudaenv
// changed is carried in one exported variable, so nested shells, tmux panes
// and exec'd shells revert correctly too.
package envdiff

import (
	"encoding/json"
	"sort"
	"strings"
)

// StateVar is the variable that carries State between prompts and shells.
const StateVar = "__CUDAENV_STATE"

// State is what cudaenv changed in an environment.
type State struct {
	Lists   map[string]ListState   `json:"lists,omitempty"`
	Scalars map[string]ScalarState `json:"scalars,omitempty"`
	// Active names what is active, for display and for shims.
	Active string `json:"active,omitempty"`
}

// ListState records entries prepended to one list variable.
type ListState struct {
	Added []string `json:"added"`
	// Created is set when the variable did not exist before, so that
	// removing the last entry unsets it instead of leaving it empty.
	Created bool `json:"created,omitempty"`
}

// ScalarState records a variable cudaenv set and what it held before.
type ScalarState struct {
	Value string  `json:"value"`
	Prev  *string `json:"prev,omitempty"` // nil: it was unset
}

// IsZero reports whether the state records no change at all.
func (s State) IsZero() bool { return len(s.Lists) == 0 && len(s.Scalars) == 0 }

// Encode renders the state as compact JSON with sorted keys.
func Encode(s State) string {
	b, _ := json.Marshal(s) // only strings, maps and slices: cannot fail
	return string(b)
}

// Decode reads a state written by Encode. An empty string is the empty state.
func Decode(text string) (State, error) {
	var s State
	if text == "" {
		return s, nil
	}
	if err := json.Unmarshal([]byte(text), &s); err != nil {
		return State{}, err
	}
	return s, nil
}

// Want is the environment a selection asks for.
type Want struct {
	Prepend map[string][]string // list variable → entries, in order
	Set     map[string]string   // scalar variable → value
	Active  string
}

// Change is one variable to set or unset.
type Change struct {
	Name  string
	Value string
	Unset bool
}

// Env is a copy of an environment that Apply can edit.
type Env map[string]string

// Apply takes back prev from env and then applies want. It returns the
// changes against env, sorted by name (the state variable included), and
// the state to carry forward. An empty Want simply reverts.
func Apply(env Env, prev State, want Want, sep string) ([]Change, State) {
	cur := make(Env, len(prev.Lists)+len(prev.Scalars)+len(want.Prepend)+len(want.Set))
	unset := map[string]bool{}
	get := func(name string) (string, bool) {
		if unset[name] {
			return "", false
		}
		if v, ok := cur[name]; ok {
			return v, true
		}
		v, ok := env[name]
		return v, ok
	}
	put := func(name, value string) { cur[name] = value; delete(unset, name) }
	del := func(name string) { delete(cur, name); unset[name] = true }

	// Take back the previous selection.
	for name, ls := range prev.Lists {
		v, ok := get(name)
		if !ok {
			continue
		}
		entries := Split(v, sep)
		for _, a := range ls.Added {
			entries = removeFirst(entries, a)
		}
		if len(entries) == 0 && ls.Created {
			del(name)
		} else {
			put(name, strings.Join(entries, sep))
		}
	}
	for name, ss := range prev.Scalars {
		v, ok := get(name)
		if !ok || v != ss.Value {
			continue // the user changed it since: theirs now
		}
		if ss.Prev == nil {
			del(name)
		} else {
			put(name, *ss.Prev)
		}
	}

	// Apply the new one.
	next := State{Active: want.Active}
	for name, add := range want.Prepend {
		if len(add) == 0 {
			continue
		}
		v, ok := get(name)
		entries := append(append([]string{}, add...), Split(v, sep)...)
		put(name, strings.Join(entries, sep))
		if next.Lists == nil {
			next.Lists = map[string]ListState{}
		}
		next.Lists[name] = ListState{Added: append([]string{}, add...), Created: !ok}
	}
	for name, value := range want.Set {
		var prevValue *string
		if v, ok := get(name); ok {
			prevValue = &v
		}
		put(name, value)
		if next.Scalars == nil {
			next.Scalars = map[string]ScalarState{}
		}
		next.Scalars[name] = ScalarState{Value: value, Prev: prevValue}
	}
	if next.IsZero() {
		next.Active = ""
		del(StateVar)
	} else {
		put(StateVar, Encode(next))
	}

	var changes []Change
	for name, v := range cur {
		if old, ok := env[name]; !ok || old != v {
			changes = append(changes, Change{Name: name, Value: v})
		}
	}
	for name := range unset {
		if _, ok := env[name]; ok {
			changes = append(changes, Change{Name: name, Unset: true})
		}
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].Name < changes[j].Name })
	return changes, next
}

// Split breaks a list variable into entries; an empty value has none.
func Split(v, sep string) []string {
	if v == "" {
		return nil
	}
	return strings.Split(v, sep)
}

func removeFirst(entries []string, e string) []string {
	for i, x := range entries {
		if x == e {
			return append(entries[:i:i], entries[i+1:]...)
		}
	}
	return entries
}

// Result applies changes to env and returns the new environment.
func Result(env Env, changes []Change) Env {
	out := make(Env, len(env)+len(changes))
	for k, v := range env {
		out[k] = v
	}
	for _, c := range changes {
		if c.Unset {
			delete(out, c.Name)
		} else {
			out[c.Name] = c.Value
		}
	}
	return out
}
