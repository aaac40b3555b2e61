package cudaenv_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A fresh account: make install puts the binaries in a folder that is not
// on PATH. It says so with the line to add, and that line above the
// README's init line makes a new interactive bash find cudaenv (issue #22).
func TestMakeInstallPrintsTheLineAFreshAccountNeeds(t *testing.T) {
	if testing.Short() {
		t.Skip("builds both binaries; skipped with -short")
	}
	for _, tool := range []string{"make", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip(tool + " is not installed")
		}
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	root := t.TempDir()
	gobin := filepath.Join(root, `go bin`)
	home := filepath.Join(root, "home")
	os.MkdirAll(home, 0o755)
	// go and the basic tools only: the account's PATH lacks gobin.
	path := filepath.Dir(goBin) + ":/usr/bin:/bin"
	mk := exec.Command("make", "-s", "install")
	mk.Env = append(os.Environ(), "GOBIN="+gobin, "PATH="+path)
	out, err := mk.CombinedOutput()
	if err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	text := string(out)
	if !strings.Contains(text, "installed cudaenv and cudaenv-shim in "+gobin+"\n") {
		t.Errorf("make install does not say where the binaries are:\n%s", text)
	}
	var line string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "  export PATH=") {
			line = strings.TrimSpace(l)
		}
	}
	if line != `export PATH="`+gobin+`:$PATH"` {
		t.Fatalf("make install printed no PATH line for %s:\n%s", gobin, text)
	}
	rc := line + "\n" + `eval "$(cudaenv init bash)"` + "\n"
	if err := os.WriteFile(filepath.Join(home, ".bashrc"), []byte(rc), 0o644); err != nil {
		t.Fatal(err)
	}
	sh := exec.Command("bash", "-i", "-c", "type -t cudaenv")
	sh.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin", "TERM=dumb"}
	got, err := sh.CombinedOutput()
	if err != nil || strings.Contains(string(got), "not found") || !strings.Contains(string(got), "function") {
		t.Errorf("a new bash with that ~/.bashrc: %v\n%s", err, got)
	}

	// With the folder on PATH, no line to add.
	mk = exec.Command("make", "-s", "install")
	mk.Env = append(os.Environ(), "GOBIN="+gobin, "PATH="+gobin+":"+path)
	if out, err = mk.CombinedOutput(); err != nil || strings.Contains(string(out), "export PATH=") {
		t.Errorf("make install with its folder on PATH: %v\n%s", err, out)
	}
}
