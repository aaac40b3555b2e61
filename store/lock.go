package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cudaenv/cudaenv/internal/version"
)

// Lock takes the install lock of one entry, waiting while another process
// holds it (and saying so to s.Wait). Holding the lock, it first puts the
// entry back in order after an interrupted install (see settle), so every
// command that takes the lock sees a whole old or a whole new tree. Release
// it with the returned function.
func (s *Store) Lock(k Kind, name string) (func(), error) {
	return s.LockContext(context.Background(), k, name)
}

// ErrLockWait wraps the error of a wait for an entry's lock that ctx ended
// (the first Ctrl-C or SIGTERM).
var ErrLockWait = errors.New("interrupted while waiting for another cudaenv")

// LockContext is Lock whose wait ends when ctx does: the first Ctrl-C of
// an install waiting behind another one stops it, rather than a wait the
// signal cannot reach (a CI cancel, timeout 5 cudaenv install ...).
func (s *Store) LockContext(ctx context.Context, k Kind, name string) (func(), error) {
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
		// Polled, not a blocking flock: a signal does not interrupt
		// that (the runtime restarts it), a context ends this.
		delay := 20 * time.Millisecond
		for !tryLockFile(f) {
			select {
			case <-ctx.Done():
				f.Close()
				return nil, fmt.Errorf("%w to finish %s", ErrLockWait, lockWhat(k, name))
			case <-time.After(delay):
			}
			delay = min(2*delay, 500*time.Millisecond)
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
