package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cudaenv/cudaenv/internal/dirs"
)

// entryTree writes an installed-looking tree whose files all say which
// install made it, so a test can tell a whole old tree from a whole new one.
func entryTree(t *testing.T, dir, source string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "bin", "nvcc"), []byte(source), 0o755)
	os.WriteFile(filepath.Join(dir, ReceiptName), []byte(`{"kind":"cuda","version":"12.4.1","source":"`+source+`"}`), 0o644)
}

// wantWhole checks that 12.4.1 is installed from source with its files
// from the same install, or (source "") that it is not installed.
func wantWhole(t *testing.T, s *Store, source string) {
	t.Helper()
	e, ok := s.Get(CUDA, "12.4.1")
	if source == "" {
		if ok {
			t.Fatalf("12.4.1 is installed (%s); want nothing", e.Receipt.Source)
		}
		if _, err := os.Lstat(filepath.Join(s.Dirs.CUDA(), "12.4.1")); err == nil {
			t.Fatal("a half-built 12.4.1 is at the final name")
		}
		return
	}
	if !ok || e.Err != nil {
		t.Fatalf("12.4.1 is not installed (%v); want the %s tree", e.Err, source)
	}
	nvcc, _ := os.ReadFile(filepath.Join(e.Dir, "bin", "nvcc"))
	if e.Receipt.Source != source || string(nvcc) != source {
		t.Fatalf("12.4.1 has receipt %q and files %q; want %q", e.Receipt.Source, nvcc, source)
	}
}

// wantNoLeftovers checks that the kind folders hold only entries and the
// legacy staging folder holds nothing.
func wantNoLeftovers(t *testing.T, s *Store) {
	t.Helper()
	for _, dir := range []string{s.Dirs.CUDA(), s.Dirs.Cudnn(), s.Dirs.Staging()} {
		des, _ := os.ReadDir(dir)
		for _, de := range des {
			if strings.HasPrefix(de.Name(), ".") || dir == s.Dirs.Staging() {
				t.Errorf("left behind: %s", filepath.Join(dir, de.Name()))
			}
		}
	}
}

// An older cudaenv killed between its two renames left the old tree as
// .staging/<kind>-<name>-<n>.old and the new one beside it: the next run
// puts the old one back instead of deleting both.
func TestAReinstallKilledBetweenTheRenamesByAnOlderCudaenvIsUndone(t *testing.T) {
	for _, how := range []string{"CleanStaging", "Lock"} {
		t.Run("by "+how, func(t *testing.T) {
			s := newStore(t)
			entryTree(t, filepath.Join(s.Dirs.Staging(), "cuda-12.4.1-123"), "new")
			entryTree(t, filepath.Join(s.Dirs.Staging(), "cuda-12.4.1-123.old"), "old")
			if how == "Lock" {
				unlock, err := s.Lock(CUDA, "12.4.1")
				if err != nil {
					t.Fatal(err)
				}
				unlock()
			} else {
				s.CleanStaging()
			}
			wantWhole(t, s, "old")
			wantNoLeftovers(t, s)
		})
	}
}

// A store whose cuda/ folder is a link to another file system: staging
// happens next to the final folder, so the renames never cross devices.
func TestAKindFolderLinkedElsewhereInstallsReinstallsAndRemoves(t *testing.T) {
	s := newStore(t)
	elsewhere := t.TempDir()
	// /dev/shm is a tmpfs on most Linux machines: a rename from the store's
	// disk into it fails with EXDEV.
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if d, err := os.MkdirTemp("/dev/shm", "cudaenv-store-test-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(d) })
			elsewhere = d
			t.Logf("cuda/ links to %s", d)
		}
	}
	os.MkdirAll(s.Dirs.Root, 0o755)
	if err := os.Symlink(elsewhere, s.Dirs.CUDA()); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	resolved, _ := filepath.EvalSymlinks(elsewhere)
	for _, source := range []string{"first", "second"} {
		e, err := s.Install(CUDA, "12.4.1", func(stage string) (Receipt, error) {
			if got, _ := filepath.EvalSymlinks(filepath.Dir(stage)); got != resolved {
				t.Errorf("staging in %s, not beside the final folder in %s", got, resolved)
			}
			os.MkdirAll(filepath.Join(stage, "bin"), 0o755)
			return Receipt{Source: source}, os.WriteFile(filepath.Join(stage, "bin", "nvcc"), []byte(source), 0o755)
		})
		if err != nil {
			t.Fatalf("install (%s): %v", source, err)
		}
		if e.Receipt.Source != source {
			t.Fatalf("installed %q, want %q", e.Receipt.Source, source)
		}
	}
	wantWhole(t, s, "second")
	if _, err := os.Stat(filepath.Join(resolved, "12.4.1", "bin", "nvcc")); err != nil {
		t.Errorf("the toolkit is not in the linked folder: %v", err)
	}
	e, _ := s.Get(CUDA, "12.4.1")
	if err := s.Remove(e); err != nil {
		t.Fatalf("uninstall: %v", err)
	}
	wantWhole(t, s, "")
	wantNoLeftovers(t, s)
}

// mkBadDir makes a folder whose name is not valid UTF-8, or skips where
// the file system refuses such names (macOS, Windows).
func mkBadDir(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "bad \xff\xfe dir")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Skipf("this file system refuses names that are not UTF-8: %v", err)
	}
	return dir
}

func TestPathsThatAreNotUTF8AreRefusedWithTheBytesEscaped(t *testing.T) {
	t.Run("link of a toolkit whose path is not UTF-8", func(t *testing.T) {
		s := newStore(t)
		target := mkBadDir(t)
		fakeToolkit(t, target, "12.4.1")
		_, err := s.Link(target, 0)
		want := `link: path "` + strings.ReplaceAll(filepath.Dir(target), `"`, `\"`) + `/bad \xff\xfe dir" is not valid UTF-8; move or rename it`
		if err == nil || err.Error() != want {
			t.Errorf("err = %v\nwant  %s", err, want)
		}
		if list, _ := s.List(CUDA); len(list) != 0 {
			t.Errorf("linked anyway: %+v", list)
		}
	})
	badRoot := func(t *testing.T) *Store {
		root := filepath.Join(t.TempDir(), "st\xffore")
		return New(dirs.Dirs{Root: root, Config: filepath.Join(root, "cfg"), Cache: filepath.Join(root, "cache")})
	}
	t.Run("link into a store whose path is not UTF-8", func(t *testing.T) {
		s := badRoot(t)
		target := filepath.Join(t.TempDir(), "cuda")
		fakeToolkit(t, target, "12.4.1")
		_, err := s.Link(target, 0)
		if err == nil || !strings.HasPrefix(err.Error(), "link: store folder ") || !strings.Contains(err.Error(), `st\xffore" is not valid UTF-8; move or rename it, or set CUDAENV_ROOT to another folder`) {
			t.Errorf("err = %v", err)
		}
		if _, err := os.Stat(s.Dirs.CUDA()); err == nil {
			t.Error("the store was written to")
		}
	})
	t.Run("install into a store whose path is not UTF-8", func(t *testing.T) {
		s := badRoot(t)
		_, err := s.Install(CUDA, "12.4.1", func(string) (Receipt, error) {
			t.Error("install downloaded into a store it refuses")
			return Receipt{}, nil
		})
		if err == nil || !strings.HasPrefix(err.Error(), "install CUDA 12.4.1: store folder ") || !strings.Contains(err.Error(), `st\xffore" is not valid UTF-8; move or rename it, or set CUDAENV_ROOT to another folder`) {
			t.Errorf("err = %v", err)
		}
		if _, err := os.Stat(s.Dirs.CUDA()); err == nil {
			t.Error("the store was written to")
		}
	})
}
