package store

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/cudaenv/cudaenv/internal/dirs"
	"github.com/cudaenv/cudaenv/internal/testwait"
)

// TestKilledHelper is not a test: run by killAt in a child process, it
// reinstalls, installs or uninstalls 12.4.1 and dies at the step named in
// STORE_KILL_AT with os.Exit, which, like SIGKILL, runs no deferred cleanup
// and releases the lock only by dying.
func TestKilledHelper(t *testing.T) {
	root := os.Getenv("STORE_KILL_ROOT")
	if root == "" {
		t.Skip("run by killAt")
	}
	at := os.Getenv("STORE_KILL_AT")
	step = func(s string) {
		if s == at {
			os.Exit(9)
		}
	}
	s := New(dirs.Dirs{Root: root})
	if _, err := s.Lock(CUDA, "12.4.1"); err != nil {
		t.Fatal(err)
	}
	if os.Getenv("STORE_KILL_OP") == "uninstall" {
		e, _ := s.Get(CUDA, "12.4.1")
		s.Remove(e)
	} else {
		s.Install(CUDA, "12.4.1", func(stage string) (Receipt, error) {
			entryTree(t, stage, "new")
			os.Remove(filepath.Join(stage, ReceiptName)) // Install writes it
			return Receipt{Source: "new"}, nil
		})
	}
	os.Exit(0)
}

// killAt runs op in a child that dies at step; it reports whether the child
// got that far.
func killAt(t *testing.T, s *Store, op, at string) bool {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledHelper$")
	cmd.Env = append(os.Environ(), "STORE_KILL_ROOT="+s.Dirs.Root, "STORE_KILL_AT="+at, "STORE_KILL_OP="+op)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 9 {
		return true
	}
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	return false
}

// A reinstall (--force, or adding components), a first install and an
// uninstall, each killed at every step: the next run that takes the lock,
// or CleanStaging, finds a whole old tree or a whole new one at the final
// name and no leftovers.
func TestAnInstallKilledAtAnyStepLeavesAWholeTree(t *testing.T) {
	if testing.Short() {
		t.Skip("runs subprocesses")
	}
	cases := []struct {
		op, at string
		had    bool   // 12.4.1 was installed before
		want   string // the tree found afterwards; "" for none
	}{
		{"reinstall", "filled", true, "old"},
		{"reinstall", "staged", true, "old"},
		{"reinstall", "aside", true, "old"},
		{"reinstall", "placed", true, "new"},
		{"reinstall", "trashed", true, "new"},
		{"install", "filled", false, ""},
		{"install", "staged", false, ""},
		{"install", "placed", false, "new"},
		{"uninstall", "trashed", true, ""},
	}
	for _, c := range cases {
		for _, next := range []string{"Lock", "CleanStaging"} {
			t.Run(c.op+" killed at "+c.at+", then "+next, func(t *testing.T) {
				s := newStore(t)
				if c.had {
					entryTree(t, filepath.Join(s.Dirs.CUDA(), "12.4.1"), "old")
				}
				if !killAt(t, s, c.op, c.at) {
					t.Fatalf("%s never reached %s", c.op, c.at)
				}
				// Before anyone cleans up, nothing half-built is listed.
				list, _ := s.List(CUDA)
				for _, e := range list {
					if e.Name != "12.4.1" {
						t.Errorf("listed %s", e.Dir)
					}
				}
				if next == "Lock" {
					unlock, err := s.Lock(CUDA, "12.4.1")
					if err != nil {
						t.Fatal(err)
					}
					unlock()
				} else {
					s.CleanStaging()
				}
				wantWhole(t, s, c.want)
				wantNoLeftovers(t, s)
				if list, _ = s.List(CUDA); len(list) != map[bool]int{true: 1}[c.want != ""] {
					t.Errorf("list = %+v", list)
				}
			})
		}
	}
}

// A second cudaenv that finds the lock taken says once what it waits for;
// one that takes a free lock says nothing.
func TestASecondLockSaysWhatItWaitsFor(t *testing.T) {
	for _, c := range []struct {
		k    Kind
		name string
		want string
	}{
		{CUDA, "12.4.1", "waiting for another cudaenv to finish installing CUDA 12.4.1 (lock "},
		{Cudnn, "9.5.1.17-cuda12", "waiting for another cudaenv to finish installing cuDNN 9.5.1.17-cuda12 (lock "},
		{"shims", "rehash", "waiting for another cudaenv to finish updating its shims (lock "},
	} {
		t.Run(c.want, func(t *testing.T) {
			first := newStore(t)
			var quiet lineBuf
			first.Wait = &quiet
			unlock, err := first.Lock(c.k, c.name)
			if err != nil {
				t.Fatal(err)
			}
			if quiet.s != "" {
				t.Errorf("a free lock said %q", quiet.s)
			}
			second := New(first.Dirs)
			r, w := io.Pipe()
			second.Wait = w
			got := make(chan func(), 1)
			go func() {
				u, err := second.Lock(c.k, c.name)
				if err != nil {
					t.Error(err)
				}
				got <- u
			}()
			line, err := bufio.NewReader(r).ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			want := c.want + filepath.Join(first.Dirs.Locks(), string(c.k)+"-"+c.name+".lock") + ")\n"
			if line != want {
				t.Errorf("said %q\nwant %q", line, want)
			}
			select {
			case <-got:
				t.Fatal("the second Lock did not wait")
			case <-time.After(50 * time.Millisecond):
			}
			unlock()
			select {
			case u := <-got:
				u()
			case <-testwait.After(t):
				t.Fatal("the second Lock never got the lock")
			}
		})
	}
}

type lineBuf struct{ s string }

func (b *lineBuf) Write(p []byte) (int, error) { b.s += string(p); return len(p), nil }

// An install waiting for another cudaenv's lock ends when its context
// does (the first Ctrl-C or SIGTERM), saying why; a blocking flock did
// not (issue #34: timeout 5 cudaenv install was still waiting 10 minutes
// later). The lock is not taken, and is free for the holder's next user.
func TestALockWaitEndsWithItsContext(t *testing.T) {
	first := newStore(t)
	unlock, err := first.Lock(CUDA, "12.4.1")
	if err != nil {
		t.Fatal(err)
	}
	second := New(first.Dirs)
	r, w := io.Pipe()
	second.Wait = w
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan error, 1)
	go func() {
		_, err := second.LockContext(ctx, CUDA, "12.4.1")
		got <- err
	}()
	if _, err := bufio.NewReader(r).ReadString('\n'); err != nil { // it waits
		t.Fatal(err)
	}
	cancel()
	select {
	case err := <-got:
		if !errors.Is(err, ErrLockWait) || err.Error() != "interrupted while waiting for another cudaenv to finish installing CUDA 12.4.1" {
			t.Fatalf("err = %v", err)
		}
	case <-testwait.After(t):
		t.Fatal("the wait did not end with its context")
	}
	unlock()
	u, err := New(first.Dirs).Lock(CUDA, "12.4.1")
	if err != nil {
		t.Fatal(err)
	}
	u()
}
