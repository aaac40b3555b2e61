package atomicfile

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestKilledWriterHelper is not a test: run by TestAWriteKilledBeforeItsRenameIsCleanedByTheNext
// in a child, it writes ATOMICFILE_KILL_PATH and dies just before the
// rename with os.Exit, which, like SIGKILL, runs no cleanup.
func TestKilledWriterHelper(t *testing.T) {
	path := os.Getenv("ATOMICFILE_KILL_PATH")
	if path == "" {
		t.Skip("run by TestAWriteKilledBeforeItsRenameIsCleanedByTheNext")
	}
	beforeRename = func(string) { os.Exit(9) }
	Write(path, []byte("12.6\n"), 0o644)
	os.Exit(0)
}

// A `cudaenv local` killed between writing its temporary and the rename
// leaves .tmp-.cuda-version-N beside the pin; the next write of that pin
// removes it once it is old enough that no live writer can own it, and
// leaves a fresh one (a writer at work) and other files' alone.
func TestAWriteKilledBeforeItsRenameIsCleanedByTheNext(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a subprocess")
	}
	dir := filepath.Join(t.TempDir(), `re po "$x"`)
	pin := filepath.Join(dir, ".cuda-version")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKilledWriterHelper$")
		cmd.Env = append(os.Environ(), "ATOMICFILE_KILL_PATH="+pin)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 9 {
			t.Fatalf("helper did not die at the rename: %v\n%s", err, out)
		}
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".tmp-.cuda-version-*"))
	if len(left) != 2 {
		t.Fatalf("the killed writers left %v; want two temporaries", left)
	}
	if _, err := os.Stat(pin); err == nil {
		t.Fatal("a killed write put the pin in place")
	}
	old := time.Now().Add(-time.Minute)
	os.Chtimes(left[0], old, old) // killed a minute ago; left[1] just now
	other := filepath.Join(dir, ".tmp-.cuda-version.lock-1")
	os.WriteFile(other, nil, 0o644)
	os.Chtimes(other, old, old)

	if err := Write(pin, []byte("12.4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(pin); string(got) != "12.4\n" {
		t.Errorf("pin = %q", got)
	}
	if _, err := os.Lstat(left[0]); err == nil {
		t.Errorf("the stale temporary %s is still there", left[0])
	}
	if _, err := os.Lstat(left[1]); err != nil {
		t.Errorf("a fresh temporary (a live writer's) was removed: %v", err)
	}
	if _, err := os.Lstat(other); err != nil {
		t.Errorf("another file's temporary was removed: %v", err)
	}
}
