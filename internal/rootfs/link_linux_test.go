package rootfs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLinkFileNamesTheOpenFileAndNeverWritesThroughALink(t *testing.T) {
	cases := []struct {
		name    string
		entries []string
		rel     string
		want    string // in the error; "" links
	}{
		{"a new name in a new folder", nil, "lib/sub/libx.so.1", ""},
		{"over a regular file", []string{"lib/libx.so.1"}, "lib/libx.so.1", ""},
		{"over a symlink", []string{"lib/y", "lib/libx.so.1 -> y"}, "lib/libx.so.1", "symlink"},
		{"over a folder", []string{"lib/libx.so.1/"}, "lib/libx.so.1", "is a folder"},
		{"through a folder that links outside", []string{"lib -> ../outside"}, "lib/libx.so.1", "through a symlink"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, outside := tree(t, tc.entries...)
			src := filepath.Join(t.TempDir(), "src")
			if err := os.WriteFile(src, []byte("ELF"), 0o444); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(src)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			// The name src had is gone: the link is to the open file.
			os.Rename(src, src+".moved")
			tr, _ := Open(dir)
			defer tr.Close()
			err = tr.LinkFile(tc.rel, f)
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("LinkFile = %v, want %q", err, tc.want)
				}
				if des, _ := os.ReadDir(outside); len(des) != 1 {
					t.Errorf("outside holds %v", des)
				}
				return
			}
			if errors.Is(err, ErrNoLink) {
				t.Skip(err) // no /proc, or a file system without links
			}
			if err != nil {
				t.Fatal(err)
			}
			a, _ := os.Stat(filepath.Join(dir, filepath.FromSlash(tc.rel)))
			b, _ := os.Stat(src + ".moved")
			if !os.SameFile(a, b) {
				t.Error("the name is not the open file")
			}
		})
	}
}

func TestOpenReadReadsWithoutFollowingOrMakingFolders(t *testing.T) {
	dir, _ := tree(t, "lib/libx.so.1", "lib/link -> libx.so.1", "up -> ../outside")
	tr, err := OpenRead(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	f, err := tr.OpenFile("lib/libx.so.1")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	for rel, want := range map[string]string{
		"lib/link":      "too many levels of symbolic links",
		"up/secret":     "through a symlink",
		"missing/x.so":  "no such file",
		"lib/nothing.h": "no such file",
	} {
		if f, err := tr.OpenFile(rel); err == nil || !strings.Contains(err.Error(), want) {
			if f != nil {
				f.Close()
			}
			t.Errorf("OpenFile(%s) = %v, want %q", rel, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "missing")); err == nil {
		t.Error("OpenFile made a folder")
	}
}
