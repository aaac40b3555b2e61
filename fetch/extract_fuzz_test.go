package fetch

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzExtractArchive unpacks a fuzzed tar into a staging folder the way
// Fetch does (extract, layout links, the final check) and holds that
// nothing outside the folder changes, and that when the install succeeds
// no symlink in the tree resolves outside it or dangles.
//
// The input is a script, one entry a line, "KIND NAME[\tARG]", so the
// fuzzer mutates entries rather than tar checksums: f NAME\tBODY, d NAME,
// l NAME\tTARGET, h NAME\tTARGET (hard link), p NAME (fifo). Names are
// under the archive's top folder "t/" unless they start with "!".
func FuzzExtractArchive(f *testing.F) {
	for _, seed := range []string{
		"f bin/nvcc\t#!/bin/sh\nl lib/libx.so\tlibx.so.1\nf lib/libx.so.1\telf",
		// Links that dangle while unpacking and leave once the layout is made.
		"f lib/libx.so.1\telf\nl lib/up1\t../targets/x86_64-linux/lib64/..\nl lib/up2\t../targets/x86_64-linux/lib64/up1/..\nl lib/up3\t../targets/x86_64-linux/lib64/up2/..\nl lib/s\t../targets/x86_64-linux/lib64/up3/sentinel/secret",
		// The receipt through the same chain.
		"f lib/a\tx\nl lib/up1\t../targets/x86_64-linux/lib64/..\nl lib/up2\t../targets/x86_64-linux/lib64/up1/..\nl receipt.json\ttargets/x86_64-linux/lib64/up2/sentinel/secret",
		// Wheel-style chain, and targets through it.
		"d lib\nl lib/z1\t..\nl lib/z2\tz1/..\nl targets\tlib/z2/sentinel",
		"l x\t.\nl k\tx/..",
		"l lib/d\t.\nf lib/d/evil\tx",
		"l lib/escape\t../../sentinel/secret",
		"l lib/abs\t/etc/passwd",
		"f ../../evil\tx",
		"f !../sentinel/secret\tpwned",
		"f !/tmp/evil\tx",
		"h lib/h\tt/lib/a\nf lib/a\tx",
		"f lib/a\tx\nh lib/h\tt/lib/a",
		"h lib/h\t../../sentinel/secret",
		"p lib/fifo",
		"f .cudaenv-1.tmp\tx",
		"l lib64\tlib\nd lib\nl targets/x86_64-linux/lib\t../../lib64",
		"d targets/x86_64-linux/lib\nf lib/x\tx\nl targets/x86_64-linux/include\t../../sentinel",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, script string) {
		data, ok := scriptTar(script)
		if !ok {
			return
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
		archive := filepath.Join(parent, "a.tar")
		if err := os.WriteFile(archive, data, 0o644); err != nil {
			t.Fatal(err)
		}
		before := hashTree(t, parent, dest)

		m, err := newMerger(dest)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		err = m.extract(t.Context(), newUnpacker(), archive, &Artifact{RelativePath: "a.tar", SHA256: hex.EncodeToString(sum[:]), Size: int64(len(data))}, 0, nil)
		if err == nil {
			_, err = m.finish("linux-x86_64")
		}
		m.close()

		if after := hashTree(t, parent, dest); after != before {
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
				t.Errorf("installed tree has a link that does not resolve: %s: %v", p, err)
				return nil
			}
			if rel, err := filepath.Rel(real, r); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				t.Errorf("installed tree has a link leading outside: %s → %s", p, r)
			}
			return nil
		})
	})
}

// scriptTar builds FuzzExtractArchive's tar; ok is false for scripts that
// archive/tar cannot write.
func scriptTar(script string) ([]byte, bool) {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	if tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: "t/", Mode: 0o755}) != nil {
		return nil, false
	}
	for _, line := range strings.Split(script, "\n") {
		if len(line) < 3 || line[1] != ' ' {
			continue
		}
		name, arg, _ := strings.Cut(line[2:], "\t")
		if raw, ok := strings.CutPrefix(name, "!"); ok {
			name = raw
		} else {
			name = "t/" + name
		}
		h := &tar.Header{Name: name, Mode: 0o644}
		switch line[0] {
		case 'f':
			h.Typeflag, h.Size = tar.TypeReg, int64(len(arg))
		case 'd':
			h.Typeflag, h.Mode = tar.TypeDir, 0o755
		case 'l':
			h.Typeflag, h.Linkname = tar.TypeSymlink, arg
		case 'h':
			h.Typeflag, h.Linkname = tar.TypeLink, arg
		case 'p':
			h.Typeflag = tar.TypeFifo
		default:
			continue
		}
		if tw.WriteHeader(h) != nil {
			return nil, false
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write([]byte(arg)); err != nil {
				return nil, false
			}
		}
	}
	if tw.Close() != nil {
		return nil, false
	}
	return b.Bytes(), true
}

// hashTree describes every entry under root but skip: path, type, link
// target or content hash.
func hashTree(t *testing.T, root, skip string) string {
	t.Helper()
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

// An archive swapped in the cache after its check (a shared cache another
// user can write to) is refused while it is unpacked: what is read is
// hashed again, from the one open file.
func TestAnArchiveChangedAfterItsCheckIsNotInstalled(t *testing.T) {
	good, _ := scriptTar("f lib/libcudart.so.12 runtime")
	evil, _ := scriptTar("f lib/libcudart.so.12 evil-runtime")
	parent := t.TempDir()
	dest := filepath.Join(parent, "tree")
	os.MkdirAll(dest, 0o755)
	archive := filepath.Join(parent, "a.tar")
	os.WriteFile(archive, evil, 0o644) // what the cache holds now
	sum := sha256.Sum256(good)         // what was checked
	m, err := newMerger(dest)
	if err != nil {
		t.Fatal(err)
	}
	err = m.extract(t.Context(), newUnpacker(), archive, &Artifact{Component: "cuda_cudart", RelativePath: "a.tar", SHA256: hex.EncodeToString(sum[:]), Size: int64(len(good))}, 0, nil)
	m.close()
	if err == nil || !strings.Contains(err.Error(), "changed after it was checked") {
		t.Fatalf("err = %v, want a refusal", err)
	}
}
