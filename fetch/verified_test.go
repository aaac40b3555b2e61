package fetch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"runtime"
	"strings"
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

// Unpacking a wheel (a random-access read) trusts the check made on
// download only while nothing has written to the file since: an archive
// rewritten after its check is hashed again and refused, never unpacked.
func TestAnArchiveRewrittenAfterItsCheckIsHashedAgainAndRefused(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("change times are read on Linux only")
	}
	for _, rewrite := range []bool{false, true} {
		parent := t.TempDir()
		dest := filepath.Join(parent, "tree")
		os.MkdirAll(dest, 0o755)
		archive := filepath.Join(parent, "wheel.whl")
		good := []byte("the wheel as downloaded")
		os.WriteFile(archive, good, 0o644)
		sum := sha256.Sum256(good)
		var v verifiedFiles
		fi, _ := os.Lstat(archive)
		v.remember(hex.EncodeToString(sum[:]), fi)
		if rewrite {
			time.Sleep(20 * time.Millisecond) // change times tick in milliseconds
			os.WriteFile(archive, []byte("the wheel, now different"[:len(good)]), 0o644)
		}
		unpacked := false
		a := &Artifact{Component: "cuda_nvcc", RelativePath: "wheel.whl", SHA256: hex.EncodeToString(sum[:]), Size: int64(len(good)),
			Unpack: func(context.Context, *os.File, int64, string) error { unpacked = true; return nil }}
		m, err := newMerger(dest)
		if err != nil {
			t.Fatal(err)
		}
		err = m.extract(t.Context(), newUnpacker(), archive, a, 0, v.unchanged)
		m.close()
		switch {
		case !rewrite && (err != nil || !unpacked):
			t.Errorf("untouched: %v, unpacked %v", err, unpacked)
		case rewrite && (err == nil || !strings.Contains(err.Error(), "changed after it was checked") || unpacked):
			t.Errorf("rewritten: %v, unpacked %v; want a refusal", err, unpacked)
		}
	}
}
