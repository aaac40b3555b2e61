package atomicfile

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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
// leaves .tmp-.cuda-version-* beside the pin, where git status shows it;
// the next write of that pin removes it at once, however fresh, because
// its name says a writer of this machine that is gone. A live writer's
// (this process's pid, another running process's), one of another
// machine or an older cudaenv (no pid: removed once old) and other
// files' are left alone.
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
	killed, _ := filepath.Glob(filepath.Join(dir, ".tmp-.cuda-version-*"))
	if len(killed) != 2 {
		t.Fatalf("the killed writers left %v; want two temporaries", killed)
	}
	if _, err := os.Stat(pin); err == nil {
		t.Fatal("a killed write put the pin in place")
	}
	sleeper := exec.Command("sleep", "60")
	if err := sleeper.Start(); err != nil {
		t.Skipf("cannot start a process to stand for a live writer: %v", err)
	}
	defer func() { sleeper.Process.Kill(); sleeper.Wait() }()
	old := time.Now().Add(-time.Minute)
	plant := func(name string, age time.Time) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, nil, 0o644)
		os.Chtimes(p, age, age)
		return p
	}
	now := time.Now()
	keep := []string{
		plant(".tmp-.cuda-version-"+host()+"."+strconv.Itoa(sleeper.Process.Pid)+"-1", now), // a live writer
		plant(".tmp-.cuda-version-"+host()+"."+strconv.Itoa(os.Getpid())+"-2", now),         // this process's
		plant(".tmp-.cuda-version-otherhost.1-3", now),                                      // another machine's, fresh
		plant(".tmp-.cuda-version-4", now),                                                  // an older cudaenv's, fresh
		plant(".tmp-.cuda-version.lock-1", old),                                             // another file's
	}
	gone := append(killed, plant(".tmp-.cuda-version-5", old), plant(".tmp-.cuda-version-otherhost.1-6", old))

	if err := Write(pin, []byte("12.4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(pin); string(got) != "12.4\n" {
		t.Errorf("pin = %q", got)
	}
	for _, p := range gone {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("the stale temporary %s is still there", filepath.Base(p))
		}
	}
	for _, p := range keep {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s was removed: %v", filepath.Base(p), err)
		}
	}
}
