package envdiff

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
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

func TestStateCarriesBytesThatAreNotUTF8Exactly(t *testing.T) {
	root := "/st\xffre %41%/cuda/12.4.1"
	w := Want{
		Prepend: map[string][]string{"PATH": {root + "/bin"}, "LD_LIBRARY_PATH": {root + "/lib64"}},
		Set:     map[string]string{"CUDA_HOME": root, "CUDA_PATH": root},
		Active:  "12.4.1",
	}
	tests := []struct {
		desc string
		user Env
	}{
		{"with the user's own CUDA_HOME that is not UTF-8", Env{"PATH": "/usr/bin", "CUDA_HOME": "/opt/\xffmine\xfe"}},
		{"with a CUDA_HOME holding percent signs", Env{"PATH": "/usr/bin", "CUDA_HOME": "/opt/100%25%zz"}},
		{"with entries of the user's that are not UTF-8", Env{"PATH": "/h\xc3/bin:/usr/bin", "LD_LIBRARY_PATH": "/l\x80"}},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			env, st := tt.user, State{}
			for i := 0; i < 3; i++ {
				env, _ = step(env, st, w)
				if !utf8.ValidString(env[StateVar]) {
					t.Fatalf("state is not UTF-8: %q", env[StateVar])
				}
				decoded, err := Decode(env[StateVar])
				if err != nil {
					t.Fatalf("Decode: %v", err)
				}
				env, st = step(env, decoded, Want{})
				if !reflect.DeepEqual(env, tt.user) {
					t.Fatalf("after leaving %d times: %q, want %q", i+1, env, tt.user)
				}
			}
		})
	}
}

func TestDecodeReadsStatesOfEarlierReleases(t *testing.T) {
	old := `{"lists":{"PATH":{"added":["/s/cuda/12.4.1/bin"]}},"scalars":{"CUDA_HOME":{"value":"/s/cuda/12.4.1","prev":"/opt/100%41"},"CUDA_PATH":{"value":"/s/cuda/12.4.1"}},"active":"12.4.1"}`
	st, err := Decode(old)
	if err != nil {
		t.Fatal(err)
	}
	if got := *st.Scalars["CUDA_HOME"].Prev; got != "/opt/100%41" {
		t.Errorf("prev = %q, want it raw", got)
	}
}

func TestDecodeRefusesStatesCudaenvDidNotWrite(t *testing.T) {
	tests := []struct{ desc, state string }{
		{"a name that is shell code", `{"v":2,"scalars":{"x;touch pwned;y":{"value":"1"}}}`},
		{"a list name that is shell code", `{"lists":{"A=$(touch pwned)":{"added":["/s/bin"]}}}`},
		{"HOME with a value to restore", `{"scalars":{"HOME":{"value":"/home/me","prev":"/tmp/evil"}}}`},
		{"PATH as a scalar to restore", `{"scalars":{"PATH":{"value":"/usr/bin:/bin","prev":"/tmp/evil"}}}`},
		{"PATH as a scalar to unset", `{"v":2,"scalars":{"PATH":{"value":"/usr/bin:/bin"}}}`},
		{"a list that would strip and unset PATH", `{"lists":{"PATH":{"added":["/usr/bin","/bin"],"created":true}}}`},
		{"list entries under the file system's top", `{"lists":{"PATH":{"added":["/bin"],"created":true}},"scalars":{"CUDA_PATH":{"value":"/"}}}`},
		{"list entries that are not a toolkit's folders", `{"lists":{"PATH":{"added":["/usr/sbin"]}},"scalars":{"CUDA_PATH":{"value":"/usr"}}}`},
		{"a prefix that is no library's root", `{"lists":{"CMAKE_PREFIX_PATH":{"added":["/usr"]}},"scalars":{"CUDA_PATH":{"value":"/usr/local/cuda"}}}`},
		{"a prefix above a root", `{"lists":{"CMAKE_PREFIX_PATH":{"added":["/s"]}},"scalars":{"CUDSS_ROOT":{"value":"/s/cudss/1"}}}`},
		{"a link path entry that is not a toolkit's stubs", `{"lists":{"LIBRARY_PATH":{"added":["/t/lib/evil"]}},"scalars":{"CUDA_PATH":{"value":"/t"}}}`},
		{"an entry listed twice", `{"lists":{"PATH":{"added":["/t/bin","/t/bin"]}},"scalars":{"CUDA_PATH":{"value":"/t"}}}`},
		{"a variable cudaenv does not manage", `{"scalars":{"LD_PRELOAD":{"value":"x","prev":"/tmp/evil.so"}}}`},
		{"a stray percent sign", `{"v":2,"scalars":{"CUDA_HOME":{"value":"/opt/mine","prev":"%zz"}}}`},
		{"an unknown format", `{"v":3,"scalars":{"CUDA_HOME":{"value":"/opt/mine"}}}`},
		{"unknown fields", `{"scalars":{"CUDA_HOME":{"value":"/opt/mine","exec":"rm"}}}`},
		{"text after the JSON", `{} {}`},
		{"not JSON", `{not json`},
		{"too large", `{"active":"` + strings.Repeat("x", 1<<20) + `"}`},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			st, err := Decode(tt.state)
			if err == nil {
				t.Fatalf("Decode accepted it: %+v", st)
			}
			if !st.IsZero() {
				t.Errorf("Decode returned %+v with its error", st)
			}
		})
	}
	// What the hook then does with an ignored state: nothing but drop it.
	env := Env{"PATH": "/usr/bin:/bin", "HOME": "/home/me", StateVar: `{"scalars":{"PATH":{"value":"/usr/bin:/bin"}}}`}
	changes, _ := Apply(env, State{}, Want{}, ":")
	if want := []Change{{Name: StateVar, Unset: true}}; !reflect.DeepEqual(changes, want) {
		t.Errorf("changes = %+v, want only the state dropped", changes)
	}
}

func TestDecodeAcceptsWhatApplyWrites(t *testing.T) {
	wants := []Want{
		want124(),
		{Prepend: map[string][]string{"LD_LIBRARY_PATH": {"/s/cudnn/9/lib"}, "LIBRARY_PATH": {"/s/cudnn/9/lib"}, "CPATH": {"/s/cudnn/9/include"}},
			Set: map[string]string{"CUDNN_PATH": "/s/cudnn/9"}},
		{Prepend: map[string][]string{"LIBRARY_PATH": {"/s/cuda/13.0.0/lib/stubs", "/s/cudss/1/lib"}, "CMAKE_PREFIX_PATH": {"/s/cudss/1"}, "CPATH": {"/s/cudss/1/include"}},
			Set: map[string]string{"CUDA_PATH": "/s/cuda/13.0.0", "CUDSS_ROOT": "/s/cudss/1"}},
		{Prepend: map[string][]string{"PATH": {`C:\s\cuda\13.0.0\bin`, `C:\s\cuda\13.0.0\bin\x64`, `C:\s\cudnn\9\bin`}},
			Set: map[string]string{"CUDA_PATH": `C:\s\cuda\13.0.0`, "CUDA_PATH_V13_0": `C:\s\cuda\13.0.0`, "CUDNN_PATH": `C:\s\cudnn\9`, "CUDACXX": `C:\s\cuda\13.0.0\bin\nvcc.exe`}},
	}
	for i, w := range wants {
		env, _ := step(Env{"PATH": "/usr/bin"}, State{}, w)
		if _, err := Decode(env[StateVar]); err != nil {
			t.Errorf("want %d: %v", i, err)
		}
	}
}
