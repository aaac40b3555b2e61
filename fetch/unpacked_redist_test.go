//go:build linux

package fetch_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cudaenv/cudaenv/fetch"
	"github.com/cudaenv/cudaenv/fetch/fetchtest"
)

// treeOf is every file and link of a tree with its content or target.
func treeOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "-> " + target
		case d.Type().IsRegular():
			out[rel] = readFile(t, p)
		default:
			out[rel] = "dir"
		}
		return nil
	})
	return out
}

// NVIDIA's archives go through the cache of unpacked trees: a reinstall
// (or another release with the same archives) decodes nothing and reads
// no file, and gets the same tree, the later archive still winning a name
// two of them ship. A changed entry is refused once and unpacked again.
func TestAReinstallFromCachedRedistArchivesDecodesNothing(t *testing.T) {
	m := newMirror(t, fetchtest.Options{Faults: map[string]fetchtest.Fault{
		"cuda_cudart": {Extra: []fetchtest.Entry{{Name: "include/both.h", Body: "cudart's\n"}}},
		"cuda_nvcc":   {Extra: []fetchtest.Entry{{Name: "include/both.h", Body: "nvcc's, longer\n"}}},
	}})
	c := newClient(t, m)
	var mu sync.Mutex
	var notices []string
	c.Notice = func(l string) { mu.Lock(); notices = append(notices, l); mu.Unlock() }
	arts := minimal124(t, c)
	winner := ""
	for _, a := range arts {
		switch a.Component {
		case "cuda_cudart":
			winner = "cudart's\n"
		case "cuda_nvcc":
			winner = "nvcc's, longer\n"
		}
	}
	unpacks, restore := fetch.CountUnpacks()
	defer restore()
	var read []string
	fetch.ReadHook = func(rel string) { mu.Lock(); read = append(read, rel); mu.Unlock() }
	defer func() { fetch.ReadHook = nil }()

	cold := t.TempDir()
	if _, err := c.Fetch(t.Context(), arts, cold); err != nil {
		t.Fatal(err)
	}
	if unpacks() != len(arts) {
		t.Fatalf("%d archives unpacked, want %d", unpacks(), len(arts))
	}
	want := treeOf(t, cold)
	if want["include/both.h"] != winner {
		t.Errorf("cold: include/both.h = %q, want the later archive's %q", want["include/both.h"], winner)
	}
	m.ResetCounts()
	read = nil
	for i := range 2 {
		warm := t.TempDir()
		if _, err := c.Fetch(t.Context(), arts, warm); err != nil {
			t.Fatal(err)
		}
		if unpacks() != len(arts) || len(read) != 0 || m.ArchiveRequests("") != 0 {
			t.Errorf("reinstall %d: %d more archives unpacked, files read %q, %d downloads", i, unpacks()-len(arts), read, m.ArchiveRequests(""))
		}
		got := treeOf(t, warm)
		for rel, body := range want {
			if got[rel] != body {
				t.Errorf("reinstall %d: %s = %q, want %q", i, rel, got[rel], body)
			}
		}
		if len(got) != len(want) {
			t.Errorf("reinstall %d: %d entries, want %d", i, len(got), len(want))
		}
		a, _ := os.Stat(filepath.Join(cold, "include/both.h"))
		b, _ := os.Stat(filepath.Join(warm, "include/both.h"))
		if !os.SameFile(a, b) {
			t.Errorf("reinstall %d: include/both.h is not the cache's file", i)
		}
	}

	// A cache file written through the cold tree's name: the entry is
	// refused, said once, and its archive unpacked again.
	p := filepath.Join(cold, "include/both.h")
	os.Chmod(p, 0o644)
	os.WriteFile(p, []byte("tampered\n"), 0o644)
	before := unpacks()
	again := t.TempDir()
	if _, err := c.Fetch(t.Context(), arts, again); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(again, "include/both.h")); got != winner {
		t.Errorf("after the tamper: include/both.h = %q", got)
	}
	if unpacks()-before != 1 || len(notices) != 1 || !strings.Contains(notices[0], "was changed since it was made") || !strings.HasSuffix(notices[0], "unpacking the archive again") {
		t.Errorf("after the tamper: %d unpacked, notices %q", unpacks()-before, notices)
	}
}
