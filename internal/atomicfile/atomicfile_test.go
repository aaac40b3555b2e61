package atomicfile

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestWrite(t *testing.T) {
	tests := []struct {
		name string
		old  string // "" means no file before
		data string
	}{
		{name: "a new file is created with its folders", data: "12.4\n"},
		{name: "an existing file is replaced whole", old: "11.8 cudnn@8.9\n", data: "12.4\n"},
		{name: "empty data leaves an empty file", old: "x", data: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "a dir with 'quotes' and $dollar", "sub")
			path := filepath.Join(dir, ".cuda-version")
			if tt.old != "" {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(tt.old), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if err := Write(path, []byte(tt.data), 0o644); err != nil {
				t.Fatalf("Write: %v", err)
			}
			got, err := os.ReadFile(path)
			if err != nil || string(got) != tt.data {
				t.Fatalf("file holds %q (%v), want %q", got, err, tt.data)
			}
			if fi, _ := os.Stat(path); runtime.GOOS != "windows" && fi.Mode().Perm() != 0o644 {
				t.Errorf("mode %v, want 0644", fi.Mode().Perm())
			}
			ents, _ := os.ReadDir(dir)
			if len(ents) != 1 {
				t.Errorf("folder holds %d entries, want only the file (no temporary left)", len(ents))
			}
		})
	}
}

func TestWriteFailureLeavesTargetAndNoTemporary(t *testing.T) {
	dir := t.TempDir()
	// The target is a non-empty folder: the rename fails.
	path := filepath.Join(dir, "target")
	if err := os.MkdirAll(filepath.Join(path, "inside"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("data"), 0o644); err == nil {
		t.Fatal("Write over a non-empty folder succeeded")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != "target" || !ents[0].IsDir() {
		t.Errorf("folder holds %v, want only the untouched target", ents)
	}
}

func TestWriteRefusesAFolderPathThatIsAFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(filepath.Join(file, "child"), []byte("y"), 0o644); err == nil {
		t.Fatal("Write under a regular file succeeded")
	}
}
