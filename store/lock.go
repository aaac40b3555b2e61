package store

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cudaenv/cudaenv/internal/version"
)

// Lock takes the install lock of one entry, waiting while another process
// holds it (and saying so to s.Wait). Holding the lock, it first puts the
// entry back in order after an interrupted install (see settle), so every
// command that takes the lock sees a whole old or a whole new tree. Release
// it with the returned function.
func (s *Store) Lock(k Kind, name string) (func(), error) {
	if err := s.mkdirKind(s.Dirs.Root); err != nil { // a shared store's root: readable by all
		return nil, err
	}
	if err := os.MkdirAll(s.Dirs.Locks(), 0o755); err != nil {
		return nil, err
	}
	path := s.lockPath(k, name)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	if !tryLockFile(f) {
		if s.Wait != nil {
			fmt.Fprintf(s.Wait, "waiting for another cudaenv to finish %s (lock %s)\n", lockWhat(k, name), path)
		}
		if err := lockFile(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", name, err)
		}
	}
	s.settle(k, name)
	return func() { unlockFile(f); f.Close() }, nil
}

// lockWhat says what the holder of a lock is doing.
func lockWhat(k Kind, name string) string {
	if k.known() {
		return "installing " + lockLabel(k, name)
	}
	return "updating its " + string(k) // the shims' rehash lock
}

// lockLabel names an entry as the install command does: CUDA 12.4.1,
// cuDNN 9.5.1.17-cuda12.
func lockLabel(k Kind, name string) string {
	switch k {
	case CUDA:
		return "CUDA " + name
	}
	if k.Library() {
		return version.Tool(k).Title() + " " + name
	}
	return string(k) + " " + name
}

func (s *Store) lockPath(k Kind, name string) string {
	return filepath.Join(s.Dirs.Locks(), string(k)+"-"+name+".lock")
}

// CleanStaging finishes or undoes what interrupted installs and uninstalls
// left: it settles each entry that has a half-built tree, an aside or trash
// in its kind folder or in the older layout's .staging folder, and deletes
// the older layout's trash. An entry whose install still holds its lock is
// left alone.
func (s *Store) CleanStaging() {
	type entry struct {
		k    Kind
		name string
	}
	var todo []entry
	seen := map[entry]bool{}
	add := func(k Kind, name string) {
		if e := (entry{k, name}); !seen[e] {
			seen[e] = true
			todo = append(todo, e)
		}
	}
	for _, k := range Kinds() {
		dir := s.kindDir(k)
		des, _ := os.ReadDir(dir)
		for _, de := range des {
			n := de.Name()
			for _, prefix := range []string{stagePrefix, asidePrefix, trashPrefix} {
				if name, ok := leftoverName(n, prefix); ok {
					add(k, name)
				}
			}
		}
	}
	des, _ := os.ReadDir(s.Dirs.Staging())
	for _, de := range des {
		n := de.Name()
		if strings.HasPrefix(n, "trash-") {
			s.ledger.Remove(filepath.Join(s.Dirs.Staging(), n))
		} else if k, name, _, ok := splitLegacyStageName(n); ok {
			add(k, name)
		}
	}
	for _, e := range todo {
		if _, _, err := parseName(e.k, e.name); err != nil {
			continue // not a name cudaenv staged; leave it
		}
		unlock, ok := s.tryLock(e.k, e.name)
		if !ok {
			continue
		}
		s.settle(e.k, e.name)
		unlock()
	}
}

func (s *Store) tryLock(k Kind, name string) (func(), bool) {
	if os.MkdirAll(s.Dirs.Locks(), 0o755) != nil {
		return nil, false
	}
	f, err := os.OpenFile(s.lockPath(k, name), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, false
	}
	if !tryLockFile(f) {
		f.Close()
		return nil, false
	}
	return func() { unlockFile(f); f.Close() }, true
}
