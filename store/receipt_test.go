package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestInstallNeverWritesTheReceiptThroughALinkInTheTree(t *testing.T) {
	cases := []struct {
		name string
		fill func(t *testing.T, stage, outside string)
	}{
		{"a receipt.json link to a file outside", func(t *testing.T, stage, outside string) {
			symlink(t, filepath.Join(outside, "bashrc"), filepath.Join(stage, ReceiptName))
		}},
		{"a receipt.json link to a new file outside", func(t *testing.T, stage, outside string) {
			symlink(t, filepath.Join(outside, "new"), filepath.Join(stage, ReceiptName))
		}},
		{"a relative receipt.json link out of the tree", func(t *testing.T, stage, outside string) {
			rel, err := filepath.Rel(stage, filepath.Join(outside, "bashrc"))
			if err != nil {
				t.Fatal(err)
			}
			symlink(t, rel, filepath.Join(stage, ReceiptName))
		}},
		{"a receipt.json file shipped in the tree", func(t *testing.T, stage, outside string) {
			if err := os.WriteFile(filepath.Join(stage, ReceiptName), []byte(`{"kind":"cuda","version":"12.4.1","source":"archive"}`), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			outside := t.TempDir()
			bashrc := filepath.Join(outside, "bashrc")
			if err := os.WriteFile(bashrc, []byte("# mine\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := s.Install(CUDA, "12.4.1", func(stage string) (Receipt, error) {
				tc.fill(t, stage, outside)
				return Receipt{Source: "nvidia", Components: []Component{{ID: "cuda_nvcc", Version: "12.4.131"}}}, nil
			})
			if err == nil || !strings.Contains(err.Error(), ReceiptName) {
				t.Fatalf("Install = %v, want an error naming %s", err, ReceiptName)
			}
			if b, _ := os.ReadFile(bashrc); string(b) != "# mine\n" {
				t.Errorf("the file outside the store now holds %q", b)
			}
			if des, _ := os.ReadDir(outside); len(des) != 1 {
				t.Errorf("outside the store: %v", des)
			}
			if list, _ := s.List(CUDA); len(list) != 0 {
				t.Errorf("installed: %+v", list)
			}
		})
	}
}

func symlink(t *testing.T, target, name string) {
	t.Helper()
	if err := os.Symlink(target, name); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
}
