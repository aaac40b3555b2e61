//go:build linux

package filelist

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// smallTree makes a small installed tree and lists it.
func smallTree(t *testing.T) (string, *List) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "entry with space")
	files := map[string]string{
		"bin/nvcc":            "#!/bin/sh\n",
		"lib/libcudart.so.13": "elf",
		"include/cuda.h":      "// cuda",
		"receipt.json":        "{}",
	}
	for rel, body := range files {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("libcudart.so.13", filepath.Join(root, "lib/libcudart.so")); err != nil {
		t.Fatal(err)
	}
	sums := NewSums()
	fi, _ := os.Lstat(filepath.Join(root, "bin/nvcc"))
	sums.Add(fi, sha256.Sum256([]byte("#!/bin/sh\n")))
	l, hashed, err := Build(root, sums, func(rel string) bool { return rel == "receipt.json" })
	if err != nil {
		t.Fatal(err)
	}
	if hashed != int64(len("elf")+len("// cuda")) {
		t.Errorf("hashed %d bytes; bin/nvcc's sum was given", hashed)
	}
	if data := l.Encode(); !bytes.Contains(data, []byte(" bin/nvcc\n")) || bytes.Contains(data, []byte("receipt.json")) {
		t.Errorf("list:\n%s", data)
	}
	return root, l
}

func TestAnUntouchedTreePassesBothChecks(t *testing.T) {
	root, l := smallTree(t)
	for _, full := range []bool{false, true} {
		res, err := Check(root, l, Options{Full: full})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Problems) != 0 {
			t.Errorf("full=%v: %v", full, res.Problems)
		}
		if want := int64(0); !full && res.Hashed != want {
			t.Errorf("the fast check read %d bytes", res.Hashed)
		}
	}
}

func TestTheFastCheckFindsEveryKindOfDamage(t *testing.T) {
	cases := []struct {
		name   string
		change func(t *testing.T, root string)
		want   string
	}{
		{"a file deleted", func(t *testing.T, root string) {
			must(t, os.Remove(filepath.Join(root, "lib/libcudart.so.13")))
		}, "lib/libcudart.so.13: deleted"},
		{"a folder deleted", func(t *testing.T, root string) {
			must(t, os.RemoveAll(filepath.Join(root, "include")))
		}, "include/: deleted"},
		{"a file made writable", func(t *testing.T, root string) {
			must(t, os.Chmod(filepath.Join(root, "bin/nvcc"), 0o755))
		}, "bin/nvcc: mode 0444 → 0755"},
		{"a file truncated", func(t *testing.T, root string) {
			p := filepath.Join(root, "include/cuda.h")
			must(t, os.Chmod(p, 0o644))
			must(t, os.Truncate(p, 0))
			must(t, os.Chmod(p, 0o444))
		}, "include/cuda.h: size 7 → 0"},
		{"a file rewritten at its size", func(t *testing.T, root string) {
			p := filepath.Join(root, "lib/libcudart.so.13")
			must(t, os.Chmod(p, 0o644))
			must(t, os.WriteFile(p, []byte("ELF"), 0o644))
			must(t, os.Chmod(p, 0o444))
		}, "lib/libcudart.so.13: modified"},
		{"a file replaced by another", func(t *testing.T, root string) {
			p := filepath.Join(root, "lib/libcudart.so.13")
			must(t, os.WriteFile(p+".new", []byte("elf"), 0o444))
			must(t, os.Rename(p+".new", p))
		}, "lib/libcudart.so.13: replaced"},
		{"a file replaced by a symlink", func(t *testing.T, root string) {
			p := filepath.Join(root, "bin/nvcc")
			must(t, os.Remove(p))
			must(t, os.Symlink("/bin/sh", p))
		}, "bin/nvcc: replaced by a symlink"},
		{"a symlink pointed elsewhere", func(t *testing.T, root string) {
			p := filepath.Join(root, "lib/libcudart.so")
			must(t, os.Remove(p))
			must(t, os.Symlink("/etc/passwd", p))
		}, `lib/libcudart.so: replaced by a link to "/etc/passwd"`},
		{"a file added", func(t *testing.T, root string) {
			must(t, os.WriteFile(filepath.Join(root, "lib/libevil.so"), nil, 0o644))
		}, "lib/libevil.so: added"},
		{"a file added at the top", func(t *testing.T, root string) {
			must(t, os.WriteFile(filepath.Join(root, "evil"), nil, 0o644))
		}, "evil: added"},
		{"a chmod undone", func(t *testing.T, root string) {
			p := filepath.Join(root, "bin/nvcc")
			must(t, os.Chmod(p, 0o644))
			must(t, os.Chmod(p, 0o444))
		}, "bin/nvcc: changed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root, l := smallTree(t)
			ageTree(t, root)
			l2, _, err := Build(root, nil, func(rel string) bool { return rel == "receipt.json" })
			must(t, err)
			tick(t, root)
			c.change(t, root)
			res, err := Check(root, l2, Options{})
			must(t, err)
			if len(res.Problems) == 0 || !strings.HasPrefix(res.Problems[0].String(), c.want) {
				t.Errorf("problems = %v, want %q", res.Problems, c.want)
			}
			if res.Hashed != 0 {
				t.Errorf("the fast check read %d bytes", res.Hashed)
			}
			_ = l
		})
	}
}

func TestAFullCheckHashesAndTakesBackWhatIsWhole(t *testing.T) {
	root, _ := smallTree(t)
	ageTree(t, root)
	l, _, err := Build(root, nil, func(rel string) bool { return rel == "receipt.json" })
	must(t, err)
	tick(t, root)
	// Same content, new mtime: damage to the fast check, whole to a full one.
	p := filepath.Join(root, "include/cuda.h")
	must(t, os.Chmod(p, 0o644))
	must(t, os.WriteFile(p, []byte("// cuda"), 0o644))
	must(t, os.Chmod(p, 0o444))
	// Different content at the same size and an mtime put back.
	q := filepath.Join(root, "lib/libcudart.so.13")
	fi, _ := os.Stat(q)
	must(t, os.Chmod(q, 0o644))
	must(t, os.WriteFile(q, []byte("ELF"), 0o644))
	must(t, os.Chmod(q, 0o444))
	must(t, os.Chtimes(q, fi.ModTime(), fi.ModTime()))

	res, err := Check(root, l, Options{})
	must(t, err)
	if got := problemStrings(res); !strings.Contains(got, "include/cuda.h: modified") || !strings.Contains(got, "lib/libcudart.so.13: changed") {
		t.Errorf("fast: %s", got)
	}
	res, err = Check(root, l, Options{Full: true})
	must(t, err)
	if got := problemStrings(res); got != "lib/libcudart.so.13: modified (its content differs)" {
		t.Errorf("full: %s", got)
	}
	if len(res.Vouch) != 1 || res.Hashed != int64(len("#!/bin/sh\n")+len("elf")+len("// cuda")) {
		t.Errorf("vouch %d, hashed %d", len(res.Vouch), res.Hashed)
	}
}

func problemStrings(r *Result) string {
	var s []string
	for _, p := range r.Problems {
		s = append(s, p.String())
	}
	return strings.Join(s, "; ")
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// ageTree dates the tree's files and folders an hour back, so that a
// change made now gives them another mtime.
func ageTree(t *testing.T, root string) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode()&os.ModeSymlink == 0 {
			must(t, os.Chtimes(p, old, old))
		}
		return nil
	})
}

// tick waits until the file system's clock has moved past every ctime in
// the tree, so that a change made now gives another ctime (timestamps
// are taken from a clock that advances a few milliseconds at a time).
func tick(t *testing.T, root string) {
	t.Helper()
	var newest int64
	filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err == nil {
			if st := fi.Sys().(*syscall.Stat_t); st.Ctim.Nano() > newest {
				newest = st.Ctim.Nano()
			}
		}
		return nil
	})
	probe := filepath.Join(t.TempDir(), "probe")
	must(t, os.WriteFile(probe, nil, 0o644))
	for i := 0; i < 5000; i++ {
		must(t, os.Chmod(probe, os.FileMode(0o600+i%2)))
		fi, err := os.Lstat(probe)
		must(t, err)
		if fi.Sys().(*syscall.Stat_t).Ctim.Nano() > newest {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("the file system's clock did not move")
}

// BenchmarkCheck is the fast check of a tree of 1500 files in 50 folders,
// as list, doctor and install run it on every installed toolkit.
func BenchmarkCheck(b *testing.B) {
	root := b.TempDir()
	for i := range 1500 {
		p := filepath.Join(root, "include", fmt.Sprintf("d%02d", i/30), fmt.Sprintf("f%04d.h", i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("x"), 0o444)
	}
	l, _, err := Build(root, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		res, err := Check(root, l, Options{})
		if err != nil || len(res.Problems) != 0 {
			b.Fatal(err, res.Problems)
		}
	}
}
