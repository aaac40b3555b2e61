package resolve

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A pin file that is a link to another file (a cloned repository's
// .cuda-version -> ~/.aws/credentials) never has that file's text shown.
func TestALinkedPinFilesTextIsNotShown(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "credentials")
	os.WriteFile(secret, []byte("aws_secret_access_key=AKIAEXAMPLESECRET\n"), 0o600)
	proj := filepath.Join(dir, "proj")
	os.Mkdir(proj, 0o755)
	if err := os.Symlink(secret, filepath.Join(proj, FileName)); err != nil {
		t.Skip(err)
	}
	_, _, err := Find(proj, func(string) (string, bool) { return "", false }, "")
	if err == nil || strings.Contains(err.Error(), "AKIA") || !strings.Contains(err.Error(), "link to another file") {
		t.Errorf("err = %v", err)
	}
	// A plain file still names the word, for typos.
	os.Remove(filepath.Join(proj, FileName))
	os.WriteFile(filepath.Join(proj, FileName), []byte("12.4.x\n"), 0o644)
	if _, _, err := Find(proj, func(string) (string, bool) { return "", false }, ""); err == nil || !strings.Contains(err.Error(), `"12.4.x"`) {
		t.Errorf("err = %v", err)
	}
}
