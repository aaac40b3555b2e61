package store

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A linked toolkit's bin and lib64 go on PATH and LD_LIBRARY_PATH, and its
// path into $GITHUB_PATH and env files: a ':' would add the working
// directory's ./bin and ./lib64, a newline lines of its own.
func TestLinkRefusesATargetThatCannotBeOnePathEntry(t *testing.T) {
	for _, tc := range []struct{ name, dir, says string }{
		{"a colon, which splits a PATH entry in two", "cuda:bin", `holds ":", which separates PATH entries`},
		{"a newline, which adds lines to $GITHUB_PATH", "cuda\nLD_PRELOAD=x", "holds a control character"},
		{"a carriage return", "cuda\rx", "holds a control character"},
		{"an escape, which would reach the terminal", "cuda\x1b[2J", "holds a control character"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			target := filepath.Join(t.TempDir(), tc.dir)
			fakeToolkit(t, target, "12.4.1")
			_, err := s.Link(target, 0)
			if err == nil {
				t.Fatal("linked")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "link: path ") || !strings.Contains(msg, tc.says) ||
				!strings.Contains(msg, "move or rename it, or link a symbolic link to it whose path has none") {
				t.Errorf("error %q: want the path, %q and what to do", msg, tc.says)
			}
			if strings.ContainsAny(msg, "\n\r\x1b") {
				t.Errorf("the error holds the raw control character: %q", msg)
			}
			if _, err := os.Stat(s.Dirs.CUDA()); !os.IsNotExist(err) {
				t.Errorf("the store changed: %v", err)
			}
		})
	}
}

func TestLinkTakesASymlinkWithAPlainPathToSuchATarget(t *testing.T) {
	s := newStore(t)
	base := t.TempDir()
	target := filepath.Join(base, "cuda:12")
	fakeToolkit(t, target, "12.4.1")
	plain := filepath.Join(base, "cuda-12")
	symlink(t, target, plain)
	e, err := s.Link(plain, 0)
	if err != nil {
		t.Fatal(err)
	}
	if e.Path != plain {
		t.Errorf("Path = %q, want %q", e.Path, plain)
	}
}

// A receipt on disk is read back under the same rule: one written by
// hand, by an older cudaenv, or by whoever can write the store.
func TestAReceiptWhoseLinkedPathCannotBeOnePathEntryIsBroken(t *testing.T) {
	for _, tc := range []struct{ name, target, says string }{
		{"a colon", "/opt/cuda:.", `holds ":"`},
		{"a newline", "/opt/cuda\n/tmp/evil", "holds a control character"},
		{"a relative path", "cuda-12.4", "is not an absolute path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			dir := filepath.Join(s.Dirs.CUDA(), "12.4.1")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			data, _ := json.Marshal(Receipt{Kind: CUDA, Version: "12.4.1", Source: "link", Target: tc.target})
			if err := os.WriteFile(filepath.Join(dir, ReceiptName), data, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, get := range []func() (Entry, bool){
				func() (Entry, bool) { return s.Get(CUDA, "12.4.1") },
				func() (Entry, bool) {
					l, _ := s.List(CUDA)
					if len(l) != 1 {
						return Entry{}, false
					}
					return l[0], true
				},
			} {
				e, ok := get()
				if !ok || e.Err == nil {
					t.Fatalf("entry = %+v, %v; want it listed as broken", e, ok)
				}
				if !strings.Contains(e.Err.Error(), tc.says) || !strings.Contains(e.Err.Error(), "run: cudaenv uninstall 12.4.1") {
					t.Errorf("error %q: want %q and what to do", e.Err, tc.says)
				}
			}
		})
	}
}
