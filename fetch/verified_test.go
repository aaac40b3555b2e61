package fetch

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// An archive checked once is not hashed again as it is unpacked only while
// it is the very file checked and nothing has written to it since.
func TestACheckedArchiveCountsAsCheckedOnlyUntilItChanges(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("change times are read on Linux only")
	}
	sha := "ab"
	dir := t.TempDir()
	p := filepath.Join(dir, "archive")
	stat := func() os.FileInfo {
		t.Helper()
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi
	}
	write := func(data string, perm os.FileMode) {
		t.Helper()
		// Change times tick with the kernel's clock, a few milliseconds.
		time.Sleep(20 * time.Millisecond)
		if err := os.WriteFile(p, []byte(data), perm); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, perm)
	}
	cases := []struct {
		name  string
		after func()
		want  bool
	}{
		{"untouched", func() {}, true},
		{"rewritten at the same size", func() { write("BBBB", 0o644) }, false},
		{"replaced by another file of the same size", func() {
			os.Remove(p)
			write("AAAA", 0o644)
		}, false},
		{"made group-writable", func() { os.Chmod(p, 0o664) }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(p)
			write("AAAA", 0o644)
			var v verifiedFiles
			v.remember(sha, stat())
			tc.after()
			if got := v.unchanged(sha, stat()); got != tc.want {
				t.Errorf("unchanged = %v, want %v", got, tc.want)
			}
			if v.unchanged("cd", stat()) {
				t.Error("the file counts as checked for another sha256")
			}
		})
	}

	var v verifiedFiles
	write("AAAA", 0o666)
	v.remember(sha, stat())
	if v.unchanged(sha, stat()) {
		t.Error("a file others can write counts as checked")
	}
}
