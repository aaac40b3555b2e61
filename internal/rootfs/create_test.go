package rootfs

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestCreateFileNeverWritesThroughALinkOrOverAFolder(t *testing.T) {
	cases := []struct {
		name    string
		entries []string
		rel     string
		want    string // in the error
	}{
		{"the name is a link to a file outside", []string{"lib/x -> ../../outside/secret"}, "lib/x", "symlink"},
		{"the name is a dangling link outside", []string{"lib/x -> ../../outside/new"}, "lib/x", "symlink"},
		{"the name is a link inside", []string{"lib/y", "lib/x -> y"}, "lib/x", "symlink"},
		{"the name is a folder", []string{"lib/x/"}, "lib/x", "is a folder"},
		{"a folder on the way links outside", []string{"lib -> ../outside"}, "lib/x", "through a symlink"},
		{"a deeper folder links outside", []string{"a/b -> ../../outside"}, "a/b/c/x", "through a symlink"},
		{"a folder on the way links inside", []string{"real/", "lib -> real"}, "lib/x", "through a symlink"},
		{"a folder on the way is a file", []string{"lib"}, "lib/x", "not a folder"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, outside := tree(t, tc.entries...)
			tr, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			f, err := tr.CreateFile(tc.rel, 0o644)
			if err == nil {
				f.Close()
				t.Fatalf("CreateFile(%s) made a file", tc.rel)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("CreateFile(%s) = %v, want %q in it", tc.rel, err, tc.want)
			}
			if b, _ := os.ReadFile(filepath.Join(outside, "secret")); string(b) != "secret\n" {
				t.Errorf("outside/secret = %q", b)
			}
			if des, _ := os.ReadDir(outside); len(des) != 1 {
				t.Errorf("outside holds %v", des)
			}
		})
	}
}

func TestCreateFileReplacesAFileWithExactlyTheModeAsked(t *testing.T) {
	dir, _ := tree(t, "bin/nvcc")
	tr, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	for _, c := range []struct {
		rel  string
		perm os.FileMode
	}{{"bin/nvcc", 0o755}, {"include/crt/host_config.h", 0o644}, {"include/crt/other.h", 0o644}} {
		f, err := tr.CreateFile(c.rel, c.perm)
		if err != nil {
			t.Fatalf("CreateFile(%s): %v", c.rel, err)
		}
		if _, err := f.WriteString("new\n"); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.FromSlash(c.rel))
		if b, _ := os.ReadFile(p); string(b) != "new\n" {
			t.Errorf("%s holds %q", c.rel, b)
		}
		if fi, err := os.Lstat(p); err != nil || (runtime.GOOS != "windows" && fi.Mode() != c.perm) {
			t.Errorf("%s: mode %v, err %v; want %v", c.rel, fi.Mode(), err, c.perm)
		}
	}
	if !tr.RealDir("include/crt") {
		t.Error("include/crt is not known as a real folder")
	}
}

func TestCreateFileWorksPastTheOpenFolderBound(t *testing.T) {
	dir, _ := tree(t)
	tr, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	for i := range 300 {
		rel := filepath.ToSlash(filepath.Join("include", "d"+strings.Repeat("x", i%7)+string(rune('a'+i%26)), "n"+string(rune('a'+i/26)), "f.h"))
		f, err := tr.CreateFile(rel, 0o644)
		if err != nil {
			t.Fatalf("CreateFile(%s): %v", rel, err)
		}
		f.Close()
	}
	n := 0
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			n++
		}
		return nil
	})
	if n != 300 {
		t.Errorf("the tree holds %d files, want 300", n)
	}
}
