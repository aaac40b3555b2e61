package cudaenv_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
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

// make test, the README's test command and what .ci/run calls, passes the
// first time on a cold, busy 2-core machine (issue #36): every package
// gets more than Go's default 10 minutes (TestCrossBuilds builds the
// standard library twice from nothing), and no result comes from Go's
// test cache, which does not see bash, zsh, fish or cc appear.
func TestMakeTestRunsEveryTestWithRoomForAColdMachine(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	out, err := exec.Command("make", "-n", "test").CombinedOutput()
	if err != nil {
		t.Fatalf("make -n test: %v\n%s", err, out)
	}
	var goTest string
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) > 2 && f[1] == "test" && slices.Contains(f, "./...") {
			goTest = l
		}
	}
	if goTest == "" {
		t.Fatalf("make test runs no go test ./...:\n%s", out)
	}
	f := strings.Fields(goTest)
	if !slices.Contains(f, "-count=1") {
		t.Errorf("make test may replay cached results: %s", goTest)
	}
	i := slices.Index(f, "-timeout")
	if i < 0 || i+1 >= len(f) {
		t.Fatalf("make test keeps Go's 10-minute limit a package: %s", goTest)
	}
	if d, err := time.ParseDuration(f[i+1]); err != nil || d < 30*time.Minute || d > 90*time.Minute {
		t.Errorf("make test's -timeout %s: want 30m to CI's 90m", f[i+1])
	}
	ci, err := os.ReadFile(filepath.Join(".ci", "run"))
	if err != nil || !strings.Contains(string(ci), "\n  make test\n") {
		t.Errorf(".ci/run does not call make test (%v)", err)
	}
	readme, err := os.ReadFile("README.md")
	if err != nil || !strings.Contains(string(readme), "```sh\nmake test\n```") {
		t.Errorf("the README does not give make test as the test command (%v)", err)
	}
}
