package termsafe

import (
	"errors"
	"io/fs"
	"os/exec"
	"testing"
)

func TestEscape(t *testing.T) {
	tests := []struct {
		desc, in, want string
	}{
		{"plain text is unchanged", "/home/me/src/proj/.cuda-version: invalid version \"x\"", "/home/me/src/proj/.cuda-version: invalid version \"x\""},
		{"an empty string stays empty", "", ""},
		{"Windows paths keep their backslashes", `C:\Users\me\.cuda-version`, `C:\Users\me\.cuda-version`},
		{"UTF-8 text is kept", "/home/jürgen/プロジェクト", "/home/jürgen/プロジェクト"},
		{"an escape sequence is made visible", "/tmp/\x1b]0;owned\x07\x1b[2J/x", `/tmp/\x1b]0;owned\x07\x1b[2J/x`},
		{"newlines, returns and tabs are escaped", "a\nb\rc\td", `a\nb\rc\td`},
		{"NUL and DEL are escaped", "a\x00b\x7fc", `a\x00b\x7fc`},
		{"invalid UTF-8 bytes are escaped one by one", "r\xff\xfeoot", `r\xff\xfeoot`},
		{"C1 controls are escaped", "a\u009b31mb\u0085c", `a\u009b31mb\u0085c`},
		{"bidirectional overrides are escaped", "evil\u202egpj.exe \u2066x\u2069", `evil\u202egpj.exe \u2066x\u2069`},
		{"line and paragraph separators are escaped", "a\u2028b\u2029c", `a\u2028b\u2029c`},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			if got := Escape(tt.in); got != tt.want {
				t.Errorf("Escape(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestEscapedTextHoldsNoControlCharacters(t *testing.T) {
	var all []byte
	for c := 0; c < 256; c++ {
		all = append(all, byte(c))
	}
	out := Escape(string(all) + "\u0080\u009f\u202e")
	for i := 0; i < len(out); i++ {
		if c := out[i]; c < 0x20 || c == 0x7f {
			t.Fatalf("byte %#x left at %d in %q", c, i, out)
		}
	}
	for _, r := range out {
		if r == 0xfffd || unsafeRune(r) {
			t.Fatalf("rune %U left in %q", r, out)
		}
	}
}

func TestJoinIsOneLineAndKeepsEachError(t *testing.T) {
	a, b := errors.New("read a: refused"), fs.ErrNotExist
	err := Join(nil, a, b, nil)
	if got := err.Error(); got != "read a: refused; file does not exist" {
		t.Errorf("Error() = %q", got)
	}
	if !errors.Is(err, a) || !errors.Is(err, fs.ErrNotExist) {
		t.Error("errors.Is does not see the joined errors")
	}
	if Join(nil, nil) != nil {
		t.Error("Join of nils is not nil")
	}
}

// A word Arg makes is read back by a shell as the very string: brackets
// (zsh globs them), spaces, quotes, $ and backquotes included.
func TestArgIsOneWordAShellReadsBack(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	for _, s := range []string{"torch==2.15.0", "jax[cuda13]==0.9.0", "/home/me/my dir/uv.lock", `it's "$HOME" and ` + "`id`", "a;b|c&d", "-", "~/x", "*"} {
		w := Arg(s)
		out, err := exec.Command(sh, "-c", "printf %s "+w).Output()
		if err != nil || string(out) != s {
			t.Errorf("Arg(%q) = %s: sh reads back %q (%v)", s, w, out, err)
		}
	}
	if Arg("nvidia-cublas-cu12==12.8.4.1") != "nvidia-cublas-cu12==12.8.4.1" || Arg("/opt/cuda-12.4") != "/opt/cuda-12.4" {
		t.Error("a plain word is quoted")
	}
}
