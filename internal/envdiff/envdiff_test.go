package envdiff

import (
	"reflect"
	"testing"
)

func want124() Want {
	return Want{
		Prepend: map[string][]string{"PATH": {"/s/cuda/12.4.1/bin"}, "LD_LIBRARY_PATH": {"/s/cuda/12.4.1/lib64"}},
		Set:     map[string]string{"CUDA_HOME": "/s/cuda/12.4.1", "CUDA_PATH": "/s/cuda/12.4.1"},
		Active:  "12.4.1",
	}
}

func want118() Want {
	return Want{
		Prepend: map[string][]string{"PATH": {"/s/cuda/11.8.0/bin"}, "LD_LIBRARY_PATH": {"/s/cuda/11.8.0/lib64"}},
		Set:     map[string]string{"CUDA_HOME": "/s/cuda/11.8.0", "CUDA_PATH": "/s/cuda/11.8.0"},
		Active:  "11.8.0",
	}
}

// step applies want to env and returns the resulting environment and state.
func step(env Env, prev State, w Want) (Env, State) {
	changes, next := Apply(env, prev, w, ":")
	return Result(env, changes), next
}

func TestSwitchingAndLeavingRestoresTheUsersEnvironment(t *testing.T) {
	tests := []struct {
		desc string
		user Env
	}{
		{"with no CUDA variables set", Env{"PATH": "/usr/bin:/bin"}},
		{"with the user's own CUDA_HOME", Env{"PATH": "/usr/bin:/bin", "CUDA_HOME": "/opt/mine"}},
		{"with an empty LD_LIBRARY_PATH", Env{"PATH": "/usr/bin", "LD_LIBRARY_PATH": ""}},
		{"with an LD_LIBRARY_PATH of the user's", Env{"PATH": "/usr/bin", "LD_LIBRARY_PATH": "/opt/lib"}},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			env, st := step(tt.user, State{}, want124())
			env, st = step(env, st, want118())
			env, st = step(env, st, want124())
			env, st = step(env, st, Want{})
			if !reflect.DeepEqual(env, tt.user) {
				t.Errorf("after leaving: %v, want %v", env, tt.user)
			}
			if !st.IsZero() {
				t.Errorf("state after leaving = %+v, want zero", st)
			}
		})
	}
}

func TestEntriesTheUserAddsMeanwhileSurvive(t *testing.T) {
	env, st := step(Env{"PATH": "/usr/bin"}, State{}, want124())
	env["PATH"] = "/home/u/bin:" + env["PATH"] + ":/late"
	env, _ = step(env, st, Want{})
	if got, want := env["PATH"], "/home/u/bin:/usr/bin:/late"; got != want {
		t.Errorf("PATH = %q, want %q", got, want)
	}
}

func TestAScalarTheUserChangedMeanwhileIsLeftAlone(t *testing.T) {
	env, st := step(Env{"PATH": "/usr/bin"}, State{}, want124())
	env["CUDA_HOME"] = "/opt/theirs"
	env, _ = step(env, st, Want{})
	if got := env["CUDA_HOME"]; got != "/opt/theirs" {
		t.Errorf("CUDA_HOME = %q, want the user's /opt/theirs", got)
	}
	if _, ok := env["CUDA_PATH"]; ok {
		t.Errorf("CUDA_PATH still set: %q", env["CUDA_PATH"])
	}
}

func TestReapplyingTheSameSelectionChangesNothing(t *testing.T) {
	env, _ := step(Env{"PATH": "/usr/bin"}, State{}, want124())
	decoded, err := Decode(env[StateVar])
	if err != nil {
		t.Fatal(err)
	}
	changes, _ := Apply(env, decoded, want124(), ":")
	if len(changes) != 0 {
		t.Errorf("changes = %+v, want none", changes)
	}
}

func TestRepeatedSwitchingNeverDuplicatesOrReordersUserEntries(t *testing.T) {
	user := Env{"PATH": "/a:/s/cuda/12.4.1/bin:/b"}
	env, st := step(user, State{}, want124())
	for i := 0; i < 5; i++ {
		env, st = step(env, st, want118())
		env, st = step(env, st, want124())
	}
	if got, want := env["PATH"], "/s/cuda/12.4.1/bin:/a:/s/cuda/12.4.1/bin:/b"; got != want {
		t.Errorf("PATH = %q, want %q", got, want)
	}
	env, _ = step(env, st, Want{})
	if env["PATH"] != user["PATH"] {
		t.Errorf("PATH after leaving = %q, want %q", env["PATH"], user["PATH"])
	}
}

func TestChangesAreSortedByName(t *testing.T) {
	changes, _ := Apply(Env{"PATH": "/usr/bin"}, State{}, want124(), ":")
	var names []string
	for _, c := range changes {
		names = append(names, c.Name)
	}
	want := []string{"CUDA_HOME", "CUDA_PATH", "LD_LIBRARY_PATH", "PATH", StateVar}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("names = %v, want %v", names, want)
	}
}

func TestDecodeRejectsGarbage(t *testing.T) {
	if _, err := Decode("{not json"); err == nil {
		t.Error("Decode accepted garbage")
	}
	if s, err := Decode(""); err != nil || !s.IsZero() {
		t.Errorf("Decode(\"\") = %+v, %v", s, err)
	}
}
