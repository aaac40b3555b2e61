package main

import (
	"strings"
	"testing"
	"time"

	"github.com/cudaenv/cudaenv/completions"
	"github.com/cudaenv/cudaenv/shell"
	"github.com/cudaenv/cudaenv/shims"
)

// The shim says what the CLI says when nothing is selected.
func TestShimNothingSelectedWording(t *testing.T) {
	if errNothingSelected.Error() != shims.NothingSelectedHelp {
		t.Errorf("errNothingSelected and shims.NothingSelectedHelp differ:\n%s\n%s", errNothingSelected, shims.NothingSelectedHelp)
	}
}

// Every shell has both a hook and a completion script.
func TestCompletionShells(t *testing.T) {
	if got, want := strings.Join(completions.Names(), " "), strings.Join(shell.Names(), " "); got != want {
		t.Errorf("completion scripts for %s, shells %s", got, want)
	}
	for _, n := range completions.Names() {
		s, err := completions.Get(n)
		if err != nil || !strings.Contains(s, "__complete") {
			t.Errorf("%s: %v", n, err)
		}
	}
	if _, err := completions.Get("tcsh"); err == nil {
		t.Error("Get(tcsh) succeeded")
	}
}

// checkPwsh fails when PowerShell code has unbalanced brackets or an
// unterminated string: a cheap stand-in for the parser, which is not
// available here. It knows '…' (with ”), "…" (with `x and ""), and #
// comments.
func checkPwsh(t *testing.T, what, code string) {
	t.Helper()
	var stack []rune
	closing := map[rune]rune{')': '(', '}': '{', ']': '['}
	rs := []rune(code)
	line := 1
	for i := 0; i < len(rs); i++ {
		switch c := rs[i]; c {
		case '\n':
			line++
		case '#':
			for i < len(rs) && rs[i] != '\n' {
				i++
			}
			line++
		case '\'', '‘', '’', '‚', '‛':
			start := line
			for i++; ; i++ {
				if i >= len(rs) {
					t.Errorf("%s: string from line %d never ends", what, start)
					return
				}
				if rs[i] == '\n' {
					line++
				}
				if strings.ContainsRune("'‘’‚‛", rs[i]) {
					if i+1 < len(rs) && strings.ContainsRune("'‘’‚‛", rs[i+1]) {
						i++
						continue
					}
					break
				}
			}
		case '"':
			start := line
			for i++; ; i++ {
				if i >= len(rs) {
					t.Errorf("%s: string from line %d never ends", what, start)
					return
				}
				if rs[i] == '`' {
					i++
					continue
				}
				if rs[i] == '"' {
					if i+1 < len(rs) && rs[i+1] == '"' {
						i++
						continue
					}
					break
				}
			}
		case '(', '{', '[':
			stack = append(stack, c)
		case ')', '}', ']':
			if len(stack) == 0 || stack[len(stack)-1] != closing[c] {
				t.Errorf("%s: unbalanced %q on line %d", what, c, line)
				return
			}
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) > 0 {
		t.Errorf("%s: %d brackets left open", what, len(stack))
	}
}

func TestPwshCodeIsBalanced(t *testing.T) {
	sh, _ := shell.Get("pwsh")
	hostile := []string{`C:\Program Files\it's "q" $x ‘curly’ (a) {b} [c]`, "/ho me/`id`/#not-a-comment", "multi\nline"}
	script, _ := completions.Get("pwsh")
	checkPwsh(t, "completion", script)
	for _, h := range hostile {
		checkPwsh(t, "init", sh.Init(h+`\cudaenv.exe`, h+`\cudaenv-shim.exe`))
		checkPwsh(t, "init --shims", shell.ShimsPath(sh, h))
		checkPwsh(t, "set", sh.Set("CUDA_PATH", h)+sh.Unset("CUDA_PATH")+sh.Alert(h))
		checkPwsh(t, "check", sh.Check(shell.Check{Dir: h, EnvName: "CUDAENV_VERSION", EnvSet: true, EnvValue: h,
			Files: []shell.File{{Path: h, Exists: true, ModTime: time.Unix(1700000000, 5)}, {Path: h + "2"}}}))
	}
	// The checker itself must catch what it is for.
	for _, bad := range []string{"if ($x) { 'a'", "'it's'", `"open`, "(]"} {
		ft := &testing.T{}
		checkPwsh(ft, "bad", bad)
		if !ft.Failed() {
			t.Errorf("checkPwsh accepted %q", bad)
		}
	}
}

func TestCompleteEngine(t *testing.T) {
	e := &env{goos: "linux"}
	e.dirs.Root = t.TempDir()
	e.dirs.Cache = t.TempDir()
	app := newApp(e)
	for _, c := range []struct {
		words []string
		want  string
	}{
		{[]string{"ini"}, "init"},
		{[]string{"--version", "ini"}, "init"},
		{[]string{"env", "--shell", "j"}, "json"},
		{[]string{"env", "--shell=j"}, ""}, // no value completion inside one word
		{[]string{"install", "--profile", "m"}, "minimal"},
		{[]string{"local", "--unset", "sys"}, "system"},
		{[]string{"uninstall", "--f"}, "--force"},
		{[]string{"link", ""}, completions.Dirs},
		{[]string{"exec", "--", ""}, completions.Commands},
		{[]string{"exec", "12.4", "make", "-"}, completions.Files},
		{[]string{"use", "--"}, "--unset"},
		{[]string{"hook-env", ""}, ""},
		{[]string{"__complete", ""}, ""},
		// The new commands' arguments and flag values (issue #32, #33).
		{[]string{"inspect", ""}, completions.Files},
		{[]string{"inspect", "--gpu", "sm_8"}, "sm_80"},
		{[]string{"inspect", "--driver", ""}, ""},
		{[]string{"image", "--push", ""}, ""},
		{[]string{"image", "--source", "p"}, "pypi"},
		{[]string{"install", "--source", "a"}, "auto"},
		{[]string{"image", "--profile", "m"}, "minimal"},
		{[]string{"config", "set", "source", "n"}, "nvidia"},
		// Flags whose values are a fixed set offer them, not file names.
		{[]string{"env", "--format", "c"}, "cmake"},
		{[]string{"env", "--format", ""}, "shell"},
		{[]string{"modulefile", "--format", "t"}, "tcl"},
		{[]string{"install", "--for", "torch", "--python", "3.13"}, "3.13"},
		{[]string{"install", "--python", "3.12"}, "3.12"},
		{[]string{"image", "--prefix", ""}, ""},
		{[]string{"install", "--for", ""}, completions.Files}, // a venv, uv.lock, pylock.toml or requirements.txt
	} {
		got := strings.Join(complete(e, app.Commands, c.words), " ")
		if first, _, _ := strings.Cut(got, "\t"); first != c.want {
			t.Errorf("complete(%q) = %q, want %q first", c.words, got, c.want)
		}
	}
	// Hidden commands are never offered.
	for _, l := range complete(e, app.Commands, []string{""}) {
		if strings.HasPrefix(l, "__") || strings.HasPrefix(l, "hook-env") || strings.HasPrefix(l, "shell-use") {
			t.Errorf("hidden command offered: %q", l)
		}
	}
}
