package completions

import (
	"os/exec"
	"strings"
	"testing"
)

func TestGetAndNames(t *testing.T) {
	if got := strings.Join(Names(), " "); got != "bash fish pwsh zsh" {
		t.Errorf("Names() = %q", got)
	}
	for _, n := range append(Names(), "powershell") {
		s, err := Get(n)
		if err != nil || !strings.Contains(s, "cudaenv __complete") {
			t.Errorf("Get(%q): %v", n, err)
		}
	}
	if _, err := Get("tcsh"); err == nil || !strings.Contains(err.Error(), "bash, fish, pwsh, zsh") {
		t.Errorf("Get(tcsh) = %v", err)
	}
}

// Each script parses in its own shell, where that shell is installed.
func TestScriptsParse(t *testing.T) {
	for _, c := range []struct{ shell, flag string }{{"bash", "-n"}, {"zsh", "-n"}, {"fish", "--no-execute"}} {
		if _, err := exec.LookPath(c.shell); err != nil {
			t.Logf("%s is not installed", c.shell)
			continue
		}
		s, _ := Get(c.shell)
		cmd := exec.Command(c.shell, c.flag)
		cmd.Stdin = strings.NewReader(s)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s %s: %v\n%s", c.shell, c.flag, err, out)
		}
	}
}
