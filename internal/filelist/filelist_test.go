package filelist

import (
	"crypto/sha256"
	"strings"
	"testing"
)

func TestAListReadsBackAsWritten(t *testing.T) {
	l := &List{Dev: 2049, Entries: []Entry{
		{Path: "bin", Type: Dir, Perm: 0o755, Ino: 10, Mtime: 1, Ctime: 2},
		{Path: "bin/\"quoted\"\nline", Type: File, Perm: 0o4755, Ino: 13},
		{Path: "bin/bad\xffutf8", Type: File, Perm: 0o644, Ino: 14},
		{Path: "bin/nvcc", Type: File, Perm: 0o555, Size: 3, SHA256: sha256.Sum256([]byte("abc")), Ino: 11, Mtime: 3, Ctime: 4},
		{Path: "bin/with space", Type: File, Perm: 0o644, Size: 0, SHA256: sha256.Sum256(nil), Ino: 12},
		{Path: "lib", Type: Dir, Perm: 0o755, Ino: 20},
		{Path: "lib/libx.so", Type: Link, Perm: 0o777, Size: 12, Target: "libx.so.1 \"a", Ino: 21, Mtime: -5, Ctime: 6},
		{Path: "lib-extra", Type: File, Perm: 0o644, Ino: 22},
	}}
	got, err := Decode(l.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if got.Dev != l.Dev || len(got.Entries) != len(l.Entries) {
		t.Fatalf("got %+v", got)
	}
	for i := range l.Entries {
		if got.Entries[i] != l.Entries[i] {
			t.Errorf("entry %d: got %+v, want %+v", i, got.Entries[i], l.Entries[i])
		}
	}
}

func TestAHostileListIsRefusedWhole(t *testing.T) {
	sum := strings.Repeat("ab", 32)
	good := "cudaenv-files 1 7\nd 755 0 - 1 2 3 bin\nf 644 1 " + sum + " 4 5 6 bin/x\n"
	if _, err := Decode([]byte(good)); err != nil {
		t.Fatalf("the good list: %v", err)
	}
	cases := map[string]string{
		"another header":                  "cudaenv-files 2 7\n",
		"no header":                       "",
		"a path that climbs out":          "cudaenv-files 1 7\nf 644 1 " + sum + " 4 5 6 ../etc/passwd\n",
		"an absolute path":                "cudaenv-files 1 7\nf 644 1 " + sum + " 4 5 6 /etc/passwd\n",
		"a dot path":                      "cudaenv-files 1 7\nf 644 1 " + sum + " 4 5 6 a/./b\n",
		"a quoted path that climbs":       "cudaenv-files 1 7\nf 644 1 " + sum + " 4 5 6 \"../x\"\n",
		"a file in an unlisted folder":    "cudaenv-files 1 7\nf 644 1 " + sum + " 4 5 6 lib/x\n",
		"a name twice":                    good + "f 644 1 " + sum + " 4 5 6 bin/x\n",
		"names out of order":              "cudaenv-files 1 7\nf 644 1 " + sum + " 4 5 6 b\nf 644 1 " + sum + " 4 5 6 a\n",
		"an unknown type":                 "cudaenv-files 1 7\np 644 1 - 4 5 6 fifo\n",
		"a short sum":                     "cudaenv-files 1 7\nf 644 1 abcd 4 5 6 x\n",
		"a negative size":                 "cudaenv-files 1 7\nf 644 -1 " + sum + " 4 5 6 x\n",
		"a mode out of range":             "cudaenv-files 1 7\nf 17777 1 " + sum + " 4 5 6 x\n",
		"a link target of the wrong size": "cudaenv-files 1 7\nl 777 9 \"abc\" 4 5 6 x\n",
		"a folder with a sum":             "cudaenv-files 1 7\nd 755 0 " + sum + " 4 5 6 x\n",
		"no end of line":                  "cudaenv-files 1 7\nf 644 1 " + sum + " 4 5 6 x",
		"a NUL in a quoted path":          "cudaenv-files 1 7\nf 644 1 " + sum + " 4 5 6 \"a\\x00b\"\n",
		"too few fields":                  "cudaenv-files 1 7\nf 644 1\n",
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			if l, err := Decode([]byte(data)); err == nil {
				t.Errorf("decoded %+v", l)
			}
		})
	}
}
