package pypi

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cudaenv/cudaenv/fetch"
)

// FuzzExtractWheel unpacks fuzzed wheels into one tree, as a PyPI install
// does, adds the layout links, and holds that nothing outside the tree
// changes, and that when all of it succeeds no symlink in the tree
// resolves outside it or dangles, without any later check.
//
// The input is a script, one entry a line, "KIND NAME[\tARG]": f NAME\tBODY,
// x NAME\tBODY (executable), d NAME, l NAME\tTARGET, p NAME (fifo); a line
// "---" starts the next wheel.
func FuzzExtractWheel(f *testing.F) {
	for _, seed := range []string{
		"f nvidia/cu13/bin/nvcc\tx\nf nvidia/cu13/lib/libcudart.so.13\telf\nl nvidia/cu13/lib/libx.so\tlibcudart.so.13",
		"l nvidia/cu13/lib/z1\t..\nl nvidia/cu13/lib/z2\tz1/..",
		"l nvidia/cu13/lib/z1\t..\n---\nl nvidia/cuda_runtime/lib/z2\tz1/..",
		"f nvidia/cu13/lib/a\tx\nl nvidia/cu13/lib/z1\t..\nl nvidia/cu13/lib/z2\tz1/..\nl nvidia/cu13/targets\tlib/z2/sentinel",
		"d nvidia/cu13/lib/sub/\nl nvidia/cu13/lib/m\tsub\nl nvidia/cu13/lib/l1\tm/..\n---\nl nvidia/cu13/lib/m\t..",
		"f nvidia/cu13/lib/f\tx\nl nvidia/cu13/lib/l\tf\n---\nl nvidia/cu13/lib/f\t../..",
		"f nvidia/cu13/include/a.h\tx\nl nvidia/cu13/lib\tinclude\nf nvidia/cu13/lib/libx.so.1\tx",
		"l nvidia/cu13/receipt.json\tlib/z2/sentinel/secret",
		"f nvidia/cu13/receipt.json\t{}",
		"f nvidia/cu13/../../../sentinel/secret\tpwned",
		"l nvidia/cu13/lib/abs\t/etc/passwd",
		"l nvidia/cu13/lib/up\t../../sentinel",
		"p nvidia/cu13/lib/fifo",
		"l nvidia/cu13/lib64\tlib\nf nvidia/cu13/lib/x\tx",
		"l nvidia/cu13/targets/x86_64-linux/lib\t../../lib64\nf nvidia/cu13/lib/x\tx",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, script string) {
		var wheels [][]byte
		for _, part := range strings.Split(script, "\n---\n") {
			w, ok := scriptWheel(part)
			if !ok {
				return
			}
			wheels = append(wheels, w)
		}
		parent := t.TempDir()
		dest := filepath.Join(parent, "store", "staging", "tree")
		for _, d := range []string{dest, filepath.Join(parent, "sentinel", "dir")} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(parent, "sentinel", "secret"), []byte("secret"), 0o644); err != nil {
			t.Fatal(err)
		}
		before := hashTree(parent, dest)
		var err error
		for _, w := range wheels {
			if err = ExtractWheel(bytes.NewReader(w), int64(len(w)), dest); err != nil {
				break
			}
		}
		if err == nil {
			err = fetch.LinkLinuxLayout(dest, LinuxX86_64)
		}
		if after := hashTree(parent, dest); after != before {
			t.Fatalf("something outside the tree changed (err %v):\nbefore:\n%s\nafter:\n%s", err, before, after)
		}
		if err != nil {
			return
		}
		real, _ := filepath.EvalSymlinks(dest)
		filepath.WalkDir(dest, func(p string, d fs.DirEntry, werr error) error {
			if werr != nil || d.Type()&fs.ModeSymlink == 0 {
				return nil
			}
			r, err := filepath.EvalSymlinks(p)
			if err != nil {
				t.Errorf("the tree has a link that does not resolve: %s: %v", p, err)
				return nil
			}
			if rel, err := filepath.Rel(real, r); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				t.Errorf("the tree has a link leading outside: %s → %s", p, r)
			}
			return nil
		})
	})
}

// scriptWheel builds one of FuzzExtractWheel's wheels.
func scriptWheel(script string) ([]byte, bool) {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, line := range strings.Split(script, "\n") {
		if len(line) < 3 || line[1] != ' ' {
			continue
		}
		name, arg, _ := strings.Cut(line[2:], "\t")
		h := &zip.FileHeader{Name: name, Method: zip.Deflate}
		switch line[0] {
		case 'f':
			h.SetMode(0o644)
		case 'x':
			h.SetMode(0o755)
		case 'd':
			h.SetMode(fs.ModeDir | 0o755)
		case 'l':
			h.SetMode(fs.ModeSymlink | 0o777)
		case 'p':
			h.SetMode(fs.ModeNamedPipe | 0o644)
		default:
			continue
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			return nil, false
		}
		if _, err := w.Write([]byte(arg)); err != nil {
			return nil, false
		}
	}
	if zw.Close() != nil {
		return nil, false
	}
	return b.Bytes(), true
}

// hashTree describes every entry under root but skip: path, type, link
// target or content hash.
func hashTree(root, skip string) string {
	var out strings.Builder
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			fmt.Fprintf(&out, "%s error %v\n", p, err)
			return nil
		}
		if p == skip {
			return filepath.SkipDir
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			fmt.Fprintf(&out, "%s -> %s\n", p, l)
		case d.Type().IsRegular():
			b, _ := os.ReadFile(p)
			fmt.Fprintf(&out, "%s %x\n", p, sha256.Sum256(b))
		default:
			fmt.Fprintf(&out, "%s %v\n", p, d.Type())
		}
		return nil
	})
	return out.String()
}
