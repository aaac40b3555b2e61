//go:build linux

package main

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/rogpeppe/go-internal/testscript"
)

// systemCmds are the testscript verbs of the system store's tests.
func systemCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		// snapshot DIR: print every file under DIR with its type, mode,
		// size, mtime and ctime (ctime moves on any write or chmod), so
		// that cmp tells whether anything there changed.
		"snapshot": func(ts *testscript.TestScript, neg bool, args []string) {
			if neg || len(args) != 1 {
				ts.Fatalf("usage: snapshot DIR")
			}
			root := ts.MkAbs(args[0])
			ts.Check(filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				fi, err := os.Lstat(p)
				if err != nil {
					return err
				}
				st := fi.Sys().(*syscall.Stat_t)
				rel, _ := filepath.Rel(root, p)
				fmt.Fprintf(ts.Stdout(), "%s %v %d %d %d.%09d\n", rel, fi.Mode(), fi.Size(), fi.ModTime().UnixNano(), st.Ctim.Sec, st.Ctim.Nsec)
				return nil
			}))
		},
		// opento PATH|PROGRAM...: let every user reach a path (or a program
		// found on PATH): o+x on each folder above it that is under the
		// temporary folder, o+rx on it. The tests' temporary folders are
		// 0700, which would keep an unprivileged user out of everything.
		"opento": func(ts *testscript.TestScript, neg bool, args []string) {
			tmp, _ := filepath.EvalSymlinks(os.TempDir())
			for _, a := range args {
				p := a
				if !strings.Contains(a, "/") {
					lp, err := exec.LookPath(a)
					if err != nil {
						for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
							if fi, err := os.Stat(filepath.Join(dir, a)); err == nil && fi.Mode()&0o111 != 0 {
								lp, err = filepath.Join(dir, a), nil
								break
							}
						}
					}
					p = lp
				} else {
					p = ts.MkAbs(a)
				}
				for _, q := range []string{p, mustEval(p)} {
					if q == "" {
						continue
					}
					addMode(ts, q, 0o005)
					for d := filepath.Dir(q); strings.HasPrefix(d, tmp+"/"); d = filepath.Dir(d) {
						addMode(ts, d, 0o001)
					}
				}
			}
		},
		// romount DIR: bind-mount DIR onto itself read-only (undone when
		// the script ends). Guard with [romount].
		"romount": func(ts *testscript.TestScript, neg bool, args []string) {
			if neg || len(args) != 1 {
				ts.Fatalf("usage: romount DIR")
			}
			dir := ts.MkAbs(args[0])
			if out, err := exec.Command("mount", "--bind", dir, dir).CombinedOutput(); err != nil {
				ts.Fatalf("mount --bind: %v: %s", err, out)
			}
			ts.Defer(func() { exec.Command("umount", dir).Run() })
			if out, err := exec.Command("mount", "-o", "remount,ro,bind", dir).CombinedOutput(); err != nil {
				ts.Fatalf("remount ro: %v: %s", err, out)
			}
		},
	}
}

// addMode adds permission bits where they are missing (a path on a
// read-only mount that has them already is left alone).
func addMode(ts *testscript.TestScript, p string, bits fs.FileMode) {
	fi, err := os.Stat(p)
	ts.Check(err)
	if fi.Mode().Perm()&bits != bits {
		ts.Check(os.Chmod(p, fi.Mode().Perm()|bits))
	}
}

func mustEval(p string) string {
	q, err := filepath.EvalSymlinks(p)
	if err != nil || q == p {
		return ""
	}
	return q
}

var (
	romountOnce sync.Once
	romountOK   bool
)

// systemCondition answers [romount] (a read-only bind mount can be made
// here: root in a sandbox that allows it) and [setpriv] (commands can run
// as the unprivileged user nobody).
func systemCondition(cond string) (bool, error) {
	switch cond {
	case "romount":
		romountOnce.Do(func() {
			dir, err := os.MkdirTemp("", "romount-")
			if err != nil {
				return
			}
			defer os.RemoveAll(dir)
			if exec.Command("mount", "--bind", dir, dir).Run() != nil {
				return
			}
			defer exec.Command("umount", dir).Run()
			romountOK = exec.Command("mount", "-o", "remount,ro,bind", dir).Run() == nil &&
				os.WriteFile(filepath.Join(dir, "x"), nil, 0o644) != nil
		})
		return romountOK, nil
	case "setpriv":
		if os.Geteuid() != 0 {
			return false, nil
		}
		_, err := exec.LookPath("setpriv")
		return err == nil && exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "true").Run() == nil, nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}
