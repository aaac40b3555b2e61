package fetch

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestCacheUsageLeavesOutUnpackedFilesAStoreShares(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no hard links counted here")
	}
	cache := t.TempDir()
	file := filepath.Join(cache, UnpackedFolder, "0123", "tree", "lib", "libx.so")
	os.MkdirAll(filepath.Dir(file), 0o755)
	if err := os.WriteFile(file, make([]byte, 1000), 0o444); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(cache, "archives"), 0o755)
	os.WriteFile(filepath.Join(cache, "archives", "0123"), make([]byte, 300), 0o644)
	if got := CacheUsage(cache); got != 1300 {
		t.Errorf("alone: %d, want 1300", got)
	}
	store := filepath.Join(t.TempDir(), "libx.so")
	if err := os.Link(file, store); err != nil {
		t.Skip(err)
	}
	if got := CacheUsage(cache); got != 300 {
		t.Errorf("shared with a store: %d, want 300", got)
	}
}
