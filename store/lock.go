package store

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// CleanStaging removes what interrupted installs left in the staging
// folder. A folder whose install still holds its lock is left alone.
func (s *Store) CleanStaging() {
	des, err := os.ReadDir(s.Dirs.Staging())
	if err != nil {
		return
	}
	for _, de := range des {
		name := de.Name()
		if strings.HasPrefix(name, "trash-") {
			os.RemoveAll(filepath.Join(s.Dirs.Staging(), name))
			continue
		}
		kind, entry, ok := splitStageName(name)
		if !ok {
			continue
		}
		unlock, ok := s.tryLock(kind, entry)
		if !ok {
			continue
		}
		os.RemoveAll(filepath.Join(s.Dirs.Staging(), name))
		unlock()
	}
}

// splitStageName reads "<kind>-<name>-<random>" (see stagePrefix).
func splitStageName(n string) (Kind, string, bool) {
	kind, rest, ok := strings.Cut(n, "-")
	if !ok || (kind != string(CUDA) && kind != string(Cudnn)) {
		return "", "", false
	}
	i := strings.LastIndexByte(rest, '-')
	if i <= 0 {
		return "", "", false
	}
	name := strings.TrimSuffix(rest[:i], ".old")
	return Kind(kind), name, true
}

func (s *Store) tryLock(k Kind, name string) (func(), bool) {
	path := filepath.Join(s.Dirs.Locks(), string(k)+"-"+name+".lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, false
	}
	if !tryLockFile(f) {
		f.Close()
		return nil, false
	}
	return func() { unlockFile(f); f.Close() }, true
}
