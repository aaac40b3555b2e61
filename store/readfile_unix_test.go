//go:build !windows

package store

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cudaenv/cudaenv/internal/filelist"
	"github.com/cudaenv/cudaenv/internal/testwait"
)

// A receipt or file list that is a named pipe or a link is damage that
// list reports, never a read that waits for a writer (list, doctor and
// the prompt hook read them).
func TestAReceiptOrFileListThatIsAPipeOrALinkIsBrokenNotAHang(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, path string)
	}{
		{"a named pipe", func(t *testing.T, p string) {
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Skipf("no named pipes here: %v", err)
			}
		}},
		{"a link to a file that would do", func(t *testing.T, p string) {
			good := filepath.Join(t.TempDir(), "elsewhere")
			if err := os.WriteFile(good, []byte(`{"version":"12.4.1","source":"nvidia"}`), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(good, p); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run("receipt: "+tc.name, func(t *testing.T) {
			s := newStore(t)
			dir := filepath.Join(s.Dirs.CUDA(), "12.4.1")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			tc.plant(t, filepath.Join(dir, ReceiptName))
			done := make(chan []Entry, 1)
			go func() {
				l, _ := s.List(CUDA)
				done <- l
			}()
			select {
			case l := <-done:
				if len(l) != 1 || l[0].Err == nil || !strings.Contains(l[0].Err.Error(), "is broken") {
					t.Fatalf("list = %+v; want one broken entry", l)
				}
			case <-testwait.After(t):
				t.Fatal("list waited on the receipt")
			}
		})
		t.Run("file list: "+tc.name, func(t *testing.T) {
			s := newStore(t)
			e, err := s.Install(CUDA, "12.4.1", func(stage string) (Receipt, error) {
				return Receipt{Source: "nvidia", FileList: strings.Repeat("0", 64)}, os.MkdirAll(filepath.Join(stage, "bin"), 0o755)
			})
			if err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(e.Dir, filelist.Name)
			os.Remove(p)
			tc.plant(t, p)
			done := make(chan error, 1)
			go func() {
				_, err := e.FileList()
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || !strings.HasPrefix(err.Error(), "its file list: ") {
					t.Fatalf("err = %v; want its file list refused", err)
				}
			case <-testwait.After(t):
				t.Fatal("FileList waited on the file list")
			}
		})
	}
}
