package store

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/cudaenv/cudaenv/internal/dirs"
	"github.com/cudaenv/cudaenv/internal/testfs"
)

// An install that runs out of inodes (issue #34: 7 of 7 left their
// .stage-* for good, up to 200 MiB, while list said the next install
// frees it): its half tree is deleted though no new folder can be made,
// by the failed install itself, or by the next command that settles it.
func TestAStageLeftWhenInodesRunOutIsDeletedWithoutANewOne(t *testing.T) {
	root := testfs.FewInodes(t, "16m", 300)
	s := New(dirs.Dirs{Root: root, Config: filepath.Join(root, "cfg"), Cache: filepath.Join(root, "cache")})

	t.Run("the failed install deletes its own stage", func(t *testing.T) {
		unlock, err := s.Lock(CUDA, "12.4.1")
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.Install(CUDA, "12.4.1", func(stage string) (Receipt, error) {
			return Receipt{}, testfs.Fill(t, filepath.Join(stage, "lib"))
		})
		unlock()
		if !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("Install = %v; want no space (inodes)", err)
		}
		if left := s.Leftovers(); len(left) != 0 {
			t.Fatalf("leftovers: %+v", left)
		}
	})

	t.Run("a killed install's stage is deleted by the next command", func(t *testing.T) {
		// What a kill leaves: the entry's lock file (the install took
		// it) and its stage, on a file system with no inode left.
		unlock, err := s.Lock(CUDA, "12.6.3")
		if err != nil {
			t.Fatal(err)
		}
		unlock()
		stage := filepath.Join(s.kindDir(CUDA), stagePrefix+"12.6.3-12345")
		if err := testfs.Fill(t, filepath.Join(stage, "lib")); err == nil {
			t.Fatal("never ran out")
		}
		if err := os.Mkdir(filepath.Join(root, "probe"), 0o755); !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("a new folder can still be made (%v): the inodes are not out", err)
		}
		if left := s.Leftovers(); len(left) != 1 {
			t.Fatalf("leftovers before: %+v", left)
		}
		s.CleanStaging()
		if left := s.Leftovers(); len(left) != 0 {
			t.Fatalf("leftovers after CleanStaging: %+v", left)
		}
		// And the space is there for the next install.
		unlock, err = s.Lock(CUDA, "12.6.3")
		if err != nil {
			t.Fatal(err)
		}
		defer unlock()
		if _, err := s.Install(CUDA, "12.6.3", func(stage string) (Receipt, error) {
			return Receipt{Source: "test"}, os.WriteFile(filepath.Join(stage, "f"), []byte("x"), 0o644)
		}); err != nil {
			t.Fatalf("the next install: %v", err)
		}
	})
}
