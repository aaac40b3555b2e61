// Package atomicfile writes small files (selection files, cached indexes
// and manifests) so that a reader sees the old content or the new, never
// half of either: the data goes to a temporary file beside the target,
// which one rename puts in place.
package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Write replaces path with data, creating its folder if needed. perm is
// the file's mode (umask not applied). On error path is untouched and no
// temporary file is left behind.
func Write(path string, data []byte, perm fs.FileMode) error {
	return WriteWith(path, perm, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
}

// WriteWith is Write with the content written by write, for callers that
// write through their own function (fetch counts and fakes disk errors).
func WriteWith(path string, perm fs.FileMode, write func(*os.File) error) error {
	dir := filepath.Dir(path)
	// Folders as mkdir -p makes them: what the umask (and a setgid
	// parent) asks for, so a cache a group shares stays shared.
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return err
	}
	// Beside the target, so the rename never crosses file systems.
	prefix := tmpPrefix(path)
	f, err := os.CreateTemp(dir, prefix+"*")
	if err != nil {
		return err
	}
	werr := write(f)
	merr := f.Chmod(perm)
	cerr := f.Close()
	if err := errors.Join(werr, merr, cerr); err != nil {
		os.Remove(f.Name())
		return err
	}
	beforeRename(f.Name())
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return err
	}
	removeStale(dir, prefix, f.Name())
	return nil
}

// tmpPrefix is the name of path's temporaries, less their random tail.
func tmpPrefix(path string) string { return ".tmp-" + filepath.Base(path) + "-" }

// beforeRename is a test hook: a test ends the process here, as a kill
// between the write and the rename would.
var beforeRename = func(string) {}

// staleAge is how old a temporary must be before a later write takes it
// for one a killed writer left: a live writer's lives for milliseconds.
const staleAge = 10 * time.Second

// removeStale deletes the temporaries of this file's name that killed
// writers left (a .cuda-version sits in the user's repository, where git
// sees them): regular files, older than staleAge, owned by this user, so
// that a concurrent writer's, or another user's, is never touched.
func removeStale(dir, prefix, mine string) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, de := range des {
		if !strings.HasPrefix(de.Name(), prefix) || !de.Type().IsRegular() {
			continue
		}
		p := filepath.Join(dir, de.Name())
		if p == mine {
			continue
		}
		fi, err := de.Info()
		if err != nil || time.Since(fi.ModTime()) < staleAge || !ownedByMe(fi) {
			continue
		}
		os.Remove(p)
	}
}
