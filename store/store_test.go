package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cudaenv/cudaenv/internal/dirs"
)

func newStore(t *testing.T) *Store {
	root := filepath.Join(t.TempDir(), `st ore "$x"`)
	return New(dirs.Dirs{Root: root, Config: filepath.Join(root, "cfg"), Cache: filepath.Join(root, "cache")})
}

func fakeToolkit(t *testing.T, dir, ver string) {
	t.Helper()
	for _, d := range []string{"bin", "lib64"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, "version.json"), []byte(`{"cuda":{"name":"CUDA SDK","version":"`+ver+`"}}`), 0o644)
}

func TestInstallIsInvisibleUntilItSucceeds(t *testing.T) {
	s := newStore(t)
	_, err := s.Install(CUDA, "12.4.1", func(stage string) (Receipt, error) {
		os.WriteFile(filepath.Join(stage, "half"), []byte("x"), 0o644)
		return Receipt{}, errors.New("download failed")
	})
	if err == nil {
		t.Fatal("install succeeded")
	}
	if list, _ := s.List(CUDA); len(list) != 0 {
		t.Fatalf("failed install is listed: %+v", list)
	}
	if des, _ := os.ReadDir(s.Dirs.Staging()); len(des) != 0 {
		t.Errorf("staging not cleaned: %v", des)
	}
	e, err := s.Install(CUDA, "12.4.1", func(stage string) (Receipt, error) {
		return Receipt{Source: "nvidia"}, os.MkdirAll(filepath.Join(stage, "bin"), 0o755)
	})
	if err != nil || e.Receipt.Version != "12.4.1" || e.Receipt.Source != "nvidia" {
		t.Fatalf("install: %+v %v", e, err)
	}
}

func TestListSkipsEntriesWithoutAReceiptAndFlagsBrokenOnes(t *testing.T) {
	s := newStore(t)
	os.MkdirAll(filepath.Join(s.Dirs.CUDA(), "12.4.1", "bin"), 0o755) // interrupted: no receipt
	os.MkdirAll(filepath.Join(s.Dirs.CUDA(), "11.8.0"), 0o755)
	os.WriteFile(filepath.Join(s.Dirs.CUDA(), "11.8.0", ReceiptName), []byte("{oops"), 0o644)
	os.MkdirAll(filepath.Join(s.Dirs.CUDA(), "not-a-version"), 0o755)
	list, err := s.List(CUDA)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Name != "11.8.0" || list[0].Err == nil {
		t.Fatalf("list = %+v", list)
	}
	if !strings.Contains(list[0].Err.Error(), "is broken") || !strings.Contains(list[0].Err.Error(), "cudaenv uninstall 11.8.0 --force") {
		t.Errorf("err = %v", list[0].Err)
	}
}

func TestLinkAdoptsAndRemoveNeverTouchesTheTarget(t *testing.T) {
	s := newStore(t)
	target := filepath.Join(t.TempDir(), "cuda-12.4")
	fakeToolkit(t, target, "12.4.1")
	e, err := s.Link(target, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !e.Linked() || e.Path != target || e.Name != "12.4.1" {
		t.Fatalf("entry = %+v", e)
	}
	if _, err := s.Link(target, 0); !errors.Is(err, ErrExists) {
		t.Errorf("second link: %v", err)
	}
	if err := s.Remove(e); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(target, "version.json")); err != nil {
		t.Errorf("target damaged: %v", err)
	}
	if list, _ := s.List(CUDA); len(list) != 0 {
		t.Errorf("still listed: %+v", list)
	}
}

func TestDetectReadsEveryVersionSource(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "version.txt"), []byte("CUDA Version 10.2.89\n"), 0o644)
	if v, err := DetectCUDA(dir, nil); err != nil || v.String() != "10.2.89" {
		t.Errorf("version.txt: %v %v", v, err)
	}
	nv := t.TempDir()
	os.MkdirAll(filepath.Join(nv, "bin"), 0o755)
	os.WriteFile(filepath.Join(nv, "bin", "nvcc"), []byte("#!/bin/sh\necho 'Cuda compilation tools, release 12.4, V12.4.131'\n"), 0o755)
	if v, err := DetectCUDA(nv, testTable); err != nil || v.String() != "12.4.1" {
		t.Errorf("nvcc: %v %v", v, err)
	}
	dn := t.TempDir()
	os.MkdirAll(filepath.Join(dn, "include"), 0o755)
	os.WriteFile(filepath.Join(dn, "include", "cudnn_version.h"), []byte("#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 5\n#define CUDNN_PATCHLEVEL 1\n"), 0o644)
	if v, err := DetectCudnn(dn); err != nil || v.String() != "9.5.1" {
		t.Errorf("cudnn: %v %v", v, err)
	}
	if _, err := DetectCUDA(t.TempDir(), testTable); err == nil || !strings.Contains(err.Error(), "does not look like a CUDA toolkit") {
		t.Errorf("empty dir: %v", err)
	}
}

// The receipt records how much the entry's files take, so that list
// reads it instead of walking thousands of files; links are not counted.
func TestInstallRecordsTheInstalledSize(t *testing.T) {
	s := newStore(t)
	e, err := s.Install(CUDA, "12.4.1", func(stage string) (Receipt, error) {
		os.MkdirAll(filepath.Join(stage, "bin"), 0o755)
		os.WriteFile(filepath.Join(stage, "bin", "nvcc"), make([]byte, 1000), 0o755)
		os.WriteFile(filepath.Join(stage, "bin", "ptxas"), make([]byte, 234), 0o755)
		os.Symlink("bin", filepath.Join(stage, "bin64"))
		return Receipt{Source: "nvidia"}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if e.Receipt.InstalledBytes != 1234 {
		t.Errorf("installed_bytes = %d, want 1234", e.Receipt.InstalledBytes)
	}
	got, ok := s.Get(CUDA, "12.4.1")
	if !ok || got.Receipt.InstalledBytes != 1234 {
		t.Errorf("read back: %+v", got.Receipt)
	}
}

// Leftovers are what a killed install or uninstall left (see
// TestAnInstallKilledAtAnyStepLeavesAWholeTree for the kills), with their
// size; an install that is running, holding its lock, is not one.
func TestLeftoversAreWhatNoRunningInstallOwns(t *testing.T) {
	s := newStore(t)
	entryTree(t, filepath.Join(s.Dirs.CUDA(), ".trash-12.4.1-7", "x"), "old")
	entryTree(t, filepath.Join(s.Dirs.CUDA(), ".stage-12.6.2-3"), "new")
	unlock, err := s.Lock(CUDA, "12.6.2")
	if err != nil {
		t.Fatal(err)
	}
	// Lock settled 12.6.2's staging; a running install makes another.
	entryTree(t, filepath.Join(s.Dirs.CUDA(), ".stage-12.6.2-4"), "new")
	left := s.Leftovers()
	if len(left) != 1 || left[0].Name != "12.4.1" || !left[0].Trash || left[0].Bytes != int64(len("old")+len(`{"kind":"cuda","version":"12.4.1","source":"old"}`)) {
		t.Errorf("leftovers while 12.6.2 installs = %+v", left)
	}
	unlock()
	if left := s.Leftovers(); len(left) != 2 {
		t.Errorf("leftovers once it is killed = %+v", left)
	}
	s.CleanStaging()
	if left := s.Leftovers(); len(left) != 0 {
		t.Errorf("leftovers after CleanStaging = %+v", left)
	}
}
