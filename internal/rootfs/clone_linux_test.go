package rootfs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// CloneFile clones where the file system can; where it cannot, it says
// so, leaves nothing at the name, and does not try again.
func TestCloneFileClonesOrLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	if err := os.WriteFile(src, []byte("elf"), 0o444); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dest := filepath.Join(dir, "dest")
	os.Mkdir(dest, 0o755)
	tr, err := Open(dest)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	_, err = tr.CloneFile("lib/x.so", f, 0o444)
	switch {
	case err == nil:
		b, _ := os.ReadFile(filepath.Join(dest, "lib/x.so"))
		a, _ := os.Stat(src)
		c, _ := os.Stat(filepath.Join(dest, "lib/x.so"))
		if string(b) != "elf" || os.SameFile(a, c) || c.Mode().Perm() != 0o444 {
			t.Errorf("clone: %q, same file %v, mode %v", b, os.SameFile(a, c), c.Mode())
		}
	case errors.Is(err, ErrNoClone):
		if _, err := os.Lstat(filepath.Join(dest, "lib/x.so")); !os.IsNotExist(err) {
			t.Errorf("a failed clone left %v", err)
		}
		if _, err := tr.CloneFile("lib/y.so", f, 0o444); !errors.Is(err, ErrNoClone) {
			t.Errorf("second try: %v", err)
		}
		if _, err := os.Lstat(filepath.Join(dest, "lib/y.so")); !os.IsNotExist(err) {
			t.Error("the second try made a file")
		}
	default:
		t.Fatal(err)
	}
}
