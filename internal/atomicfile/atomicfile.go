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
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// Beside the target, so the rename never crosses file systems.
	f, err := os.CreateTemp(dir, ".tmp-"+filepath.Base(path)+"-*")
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
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}
