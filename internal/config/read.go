package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// MaxBytes bounds the settings file: a real one is a few lines.
const MaxBytes = 64 << 10

// Read returns the settings file of the config folder dir, nil when there
// is none. Every command reads it, the prompt hook included, so it is
// opened without waiting (a named pipe there would hang every prompt) and
// must be a regular file of at most MaxBytes; a link to one is followed,
// as dotfile managers make them.
func Read(dir string) ([]byte, error) {
	p := filepath.Join(dir, FileName)
	f, err := os.OpenFile(p, os.O_RDONLY|openNoWait, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file; make it one with cudaenv config set, after removing it", p)
	}
	if fi.Size() > MaxBytes {
		return nil, fmt.Errorf("%s holds %d bytes, more than a settings file (at most %d); make it key = value lines", p, fi.Size(), MaxBytes)
	}
	return io.ReadAll(io.LimitReader(f, MaxBytes))
}
