package shims

import (
	"reflect"
	"testing"

	"github.com/cudaenv/cudaenv/internal/envdiff"
)

// hostile strings for the state encoder: everything encoding/json escapes.
var hostile = []string{
	"", "plain", `q"uote`, `back\slash`, "<tag>&amp;", "new\nline\r\t\b\f", "\x00\x01\x1f\x7f",
	"bad utf8 \xff\xfe end", "line sep \u2028 para \u2029", "ünïcødé 日本", "$(touch pwned)`id`",
	"/ho me \"q\" $x/root/cuda/12.4.1/bin",
}

func TestEncodeStateMatchesEnvdiff(t *testing.T) {
	for _, s := range hostile {
		prev := s + "-prev"
		st := envdiff.State{
			Lists: map[string]envdiff.ListState{
				"PATH":            {Added: []string{s, "/b"}},
				"LD_LIBRARY_PATH": {Added: []string{s}, Created: true},
				s + "X":           {Added: nil},
			},
			Scalars: map[string]envdiff.ScalarState{
				"CUDA_HOME": {Value: s},
				"CUDA_PATH": {Value: "/v", Prev: &prev},
				"EMPTYPREV": {Value: "", Prev: new(string)},
			},
			Active: s,
		}
		if got, want := encodeState(st), envdiff.Encode(st); got != want {
			t.Errorf("encodeState(%q):\n got %s\nwant %s", s, got, want)
		}
	}
	for _, st := range []envdiff.State{{}, {Active: "x"}, {Scalars: map[string]envdiff.ScalarState{"A": {Value: "1"}}}} {
		if got, want := encodeState(st), envdiff.Encode(st); got != want {
			t.Errorf("encodeState(%+v) = %s, want %s", st, got, want)
		}
	}
}

func TestApplyFreshMatchesApply(t *testing.T) {
	wants := []envdiff.Want{
		{},
		{Prepend: map[string][]string{"PATH": {"/t/bin"}, "LD_LIBRARY_PATH": {"/t/lib64", "/d/lib"}, "EMPTY": nil},
			Set: map[string]string{"CUDA_HOME": "/t", "CUDA_PATH": "/t", "CUDACXX": "/t/bin/nvcc"}, Active: "12.4.1"},
		{Prepend: map[string][]string{"CPATH": {"/d/include"}}, Set: map[string]string{"CUDNN_PATH": "/d"}, Active: "cudnn@9.5.1"},
	}
	envs := []envdiff.Env{
		{},
		{"PATH": "/usr/bin:/bin", "CUDA_HOME": "/opt/mine", "LD_LIBRARY_PATH": ""},
		{"PATH": "", "CPATH": "/x", "CUDNN_PATH": ""},
	}
	for i, w := range wants {
		for j, env := range envs {
			changes, _ := envdiff.Apply(env, envdiff.State{}, w, ":")
			want := envdiff.Result(env, changes)
			got := envdiff.Result(env, nil)
			applyFresh(got, w, ":")
			if !reflect.DeepEqual(got, want) {
				t.Errorf("want %d, env %d:\n got %v\nwant %v", i, j, got, want)
			}
		}
	}
}

func TestEncodeStateReadsBackByteForByte(t *testing.T) {
	for _, s := range hostile {
		root := "/r" + s
		prev := s
		st := envdiff.State{
			Lists:   map[string]envdiff.ListState{"PATH": {Added: []string{root + "/bin"}}, "LD_LIBRARY_PATH": {Added: []string{root + "/lib64"}, Created: true}},
			Scalars: map[string]envdiff.ScalarState{"CUDA_PATH": {Value: root}, "CUDA_HOME": {Value: root, Prev: &prev}},
			Active:  s,
		}
		got, err := envdiff.Decode(encodeState(st))
		if err != nil {
			t.Fatalf("Decode(encodeState(%q)): %v", s, err)
		}
		if !reflect.DeepEqual(got, st) {
			t.Errorf("%q read back as %+v, want %+v", s, got, st)
		}
	}
}
