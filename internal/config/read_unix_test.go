//go:build unix

package config

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// The settings file is read by every command and the prompt hook: a named
// pipe there is refused at once (it waited for a writer, forever), a
// device or a file larger than any settings file is refused, a link to a
// settings file (a dotfile manager's) is followed.
func TestReadRefusesWhatNoSettingsFileIs(t *testing.T) {
	dir := t.TempDir()
	if data, err := Read(dir); data != nil || err != nil {
		t.Errorf("none: %q, %v", data, err)
	}
	p := filepath.Join(dir, FileName)
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skip(err)
	}
	if _, err := Read(dir); err == nil || !strings.Contains(err.Error(), "is not a regular file") {
		t.Errorf("a named pipe: %v", err)
	}
	os.Remove(p)
	os.Symlink("/dev/zero", p)
	if _, err := Read(dir); err == nil || !strings.Contains(err.Error(), "is not a regular file") {
		t.Errorf("a link to /dev/zero: %v", err)
	}
	os.Remove(p)
	os.WriteFile(p, []byte(strings.Repeat("# x\n", MaxBytes/4+1)), 0o644)
	if _, err := Read(dir); err == nil || !strings.Contains(err.Error(), "more than a settings file") {
		t.Errorf("a huge file: %v", err)
	}
	real := filepath.Join(t.TempDir(), "dotfiles-config")
	os.WriteFile(real, []byte("source = pypi\n"), 0o644)
	os.Remove(p)
	os.Symlink(real, p)
	if data, err := Read(dir); err != nil || string(data) != "source = pypi\n" {
		t.Errorf("a link to a settings file: %q, %v", data, err)
	}
}
