package shell

import (
	"os/exec"
	"strings"
	"testing"
)

var hostile = []string{
	"",
	"plain",
	"with space",
	"it's",
	`double "quoted"`,
	`back\slash\`,
	`$HOME $(id) ${x} ` + "`id`",
	"semi;colon&amp|pipe>redirect<",
	"new\nline",
	"tab\there",
	"glob*?[a]",
	"~tilde",
	"=equals",
	"%self",
	"-dash",
	"ünïcödé ‘curly’ ’quotes‚ ‛",
	"!bang !! !$",
	"#hash",
	"{a,b}",
	"$'ansi'",
	`\'`,
	`'\''`,
	"not utf-8 \xff\xfe \xc3( end",
	"esc \x1b[31m red",
}

// TestQuotingRoundTripsThroughRealShells sets a variable to each hostile
// value with the shell's own code and reads it back byte for byte.
func TestQuotingRoundTripsThroughRealShells(t *testing.T) {
	for _, name := range []string{"bash", "zsh", "fish"} {
		t.Run(name, func(t *testing.T) {
			if _, err := exec.LookPath(name); err != nil {
				t.Skipf("%s is not installed", name)
			}
			sh, _ := Get(name)
			for _, v := range hostile {
				code := sh.Set("CUDAENV_Q", v) + "printf '%s' \"$CUDAENV_Q\"\n"
				args := []string{"-c", code}
				if name == "bash" {
					args = []string{"--norc", "--noprofile", "-c", code}
				} else if name == "zsh" {
					args = []string{"-f", "-c", code}
				} else {
					args = []string{"--no-config", "-c", code}
				}
				out, err := exec.Command(name, args...).Output()
				if err != nil {
					t.Errorf("%s failed on %q: %v\ncode: %s", name, v, err, code)
					continue
				}
				if string(out) != v {
					t.Errorf("%s read back %q, want %q\ncode: %s", name, out, v, code)
				}
			}
		})
	}
}

func TestPwshQuotingDoublesEverySingleQuoteKind(t *testing.T) {
	tests := []struct{ desc, in, want string }{
		{"a plain word is single-quoted", "a", "'a'"},
		{"an ASCII quote is doubled", "it's", "'it''s'"},
		{"typographic quotes are doubled too", "a‘b’c‚d‛", "'a‘‘b’’c‚‚d‛‛'"},
		{"dollars and backticks stay literal", "$x `y`", "'$x `y`'"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			if got := quotePwsh(tt.in); got != tt.want {
				t.Errorf("quotePwsh(%q) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestRenderIsSortedAndStable(t *testing.T) {
	sh, _ := Get("bash")
	got := Render(sh, []Var{{Name: "PATH", Value: "/a"}, {Name: "CUDA_HOME", Unset: true}, {Name: "CPATH", Value: "/i"}})
	want := "export CPATH=/i\nunset CUDA_HOME\nexport PATH=/a\n"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if !strings.HasPrefix(sh.Init("/p a/cudaenv", "/p a/cudaenv-shim"), "# cudaenv") {
		t.Error("init lost its header")
	}
}

func TestNoShellCodeComesFromAVariableName(t *testing.T) {
	bad := []string{"", "x;touch pwned", "A=$(id)", "PATH HOME", "1ABC", "a-b", "new\nline", "ü", "x`id`"}
	for _, name := range Names() {
		sh, _ := Get(name)
		for _, n := range bad {
			if ValidName(n) {
				t.Errorf("ValidName(%q) = true", n)
			}
			if code := sh.Set(n, "v") + sh.Unset(n) + Render(sh, []Var{{Name: n, Value: "v"}, {Name: n, Unset: true}}); code != "" {
				t.Errorf("%s renders name %q as %q", name, n, code)
			}
		}
		for _, n := range []string{"PATH", "CUDA_PATH_V12_4", "_x", "__CUDAENV_STATE"} {
			if !ValidName(n) || sh.Set(n, "v") == "" || sh.Unset(n) == "" {
				t.Errorf("%s refuses the name %q", name, n)
			}
		}
	}
}

func TestPwshQuotingKeepsBytesThatAreNotUTF8(t *testing.T) {
	if got, want := quotePwsh("a\xffb\u2019"), "'a\xffb\u2019\u2019'"; got != want {
		t.Errorf("quotePwsh = %q, want %q", got, want)
	}
}
