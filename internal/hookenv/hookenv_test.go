package hookenv

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/cudaenv/cudaenv/internal/resolve"
)

func TestCheckForGivesExistingFilesAReferenceWithTheirMtime(t *testing.T) {
	dir := t.TempDir()
	stamps := filepath.Join(dir, "stamps")
	f := filepath.Join(dir, ".cuda-version")
	os.WriteFile(f, []byte("12.4\n"), 0o644)
	mt := time.Unix(1700000000, 123456789)
	os.Chtimes(f, mt, mt)
	w := resolve.Watch{Dir: dir, Files: []resolve.FileState{
		{Path: filepath.Join(dir, "sub", ".cuda-version")},
		{Path: f, Exists: true, ModTime: mt},
	}}
	c := CheckFor(stamps, w)
	if c.Files[0].Ref != "" {
		t.Errorf("a missing file got a reference: %q", c.Files[0].Ref)
	}
	ref := c.Files[1].Ref
	fi, err := os.Stat(ref)
	if err != nil || !fi.ModTime().Equal(mt) {
		t.Fatalf("reference %q: %v, mtime %v, want %v", ref, err, fi.ModTime(), mt)
	}
	if again := CheckFor(stamps, w).Files[1].Ref; again != ref {
		t.Errorf("a second check made another reference: %q", again)
	}
}

func TestTheStampsFolderStaysBounded(t *testing.T) {
	stamps := t.TempDir()
	for i := 0; i < maxRefs+5; i++ {
		os.WriteFile(filepath.Join(stamps, strconv.Itoa(i)), nil, 0o644)
	}
	ref := mtimeRef(stamps, time.Unix(1800000000, 0))
	des, _ := os.ReadDir(stamps)
	if len(des) > maxRefs || ref == "" {
		t.Errorf("%d entries after pruning, ref %q", len(des), ref)
	}
}

func TestAnUnwritableStampsFolderMakesTheCheckAlwaysFail(t *testing.T) {
	file := filepath.Join(t.TempDir(), "not-a-dir")
	os.WriteFile(file, nil, 0o644)
	if ref := mtimeRef(filepath.Join(file, "stamps"), time.Now()); ref != "" {
		t.Errorf("ref = %q, want none", ref)
	}
}

func TestParseEnvironKeysWindowsPathAsPATH(t *testing.T) {
	if got := ParseEnviron([]string{"Path=a;b", "x=1", "bad"}, "windows"); got["PATH"] != "a;b" || got["x"] != "1" || len(got) != 2 {
		t.Errorf("got %v", got)
	}
}
