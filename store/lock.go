package store

import (
	"fmt"
	"os"
	"path/filepath"
)

// Lock takes the install lock of one entry, waiting while another process
// holds it. Release it with the returned function.
func (s *Store) Lock(k Kind, name string) (func(), error) {
	if err := os.MkdirAll(s.Dirs.Locks(), 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(s.Dirs.Locks(), string(k)+"-"+name+".lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	return func() { unlockFile(f); f.Close() }, nil
}
