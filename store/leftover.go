package store

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/cudaenv/cudaenv/internal/rootfs"
	"github.com/cudaenv/cudaenv/internal/version"
)

// Leftover is a tree an interrupted install or uninstall left in a kind
// folder under a dot name (see stagePrefix): invisible to List, yet it
// takes disk space until a command that writes the store settles it.
type Leftover struct {
	Kind  Kind
	Name  string // the entry it belongs to: 12.4.1
	Path  string
	Bytes int64
	Trash bool // a tree being deleted (an uninstall's, or a replaced one)
}

// Leftovers lists what interrupted installs and uninstalls left in this
// store's kind folders, with the size of each, so that list can say what
// space is held. It walks only those trees (none, normally), and leaves
// out those of an entry whose install is running (holds its lock). It
// writes nothing.
func (s *Store) Leftovers() []Leftover {
	var out []Leftover
	for _, k := range Kinds() {
		dir := s.kindDir(k)
		des, _ := os.ReadDir(dir)
		for _, de := range des {
			n := de.Name()
			if !de.IsDir() || !strings.HasPrefix(n, ".") {
				continue
			}
			for _, prefix := range []string{stagePrefix, asidePrefix, trashPrefix} {
				if name, ok := leftoverName(n, prefix); ok && !s.busy(k, name) {
					p := filepath.Join(dir, n)
					out = append(out, Leftover{Kind: k, Name: name, Path: p, Bytes: rootfs.Size(p), Trash: prefix == trashPrefix})
					break
				}
			}
		}
	}
	return out
}

// ParseName reads an entry's directory name (12.4.1, 9.5.1.17-cuda12) as
// the store does; ok is false for a name that is not an entry's.
func ParseName(k Kind, name string) (v version.Version, cudaMajor int, ok bool) {
	v, cudaMajor, err := parseName(k, name)
	return v, cudaMajor, err == nil
}

// busy reports whether a running cudaenv holds an entry's lock. It opens
// the lock file read-only and creates nothing, for read-only commands.
func (s *Store) busy(k Kind, name string) bool {
	f, err := os.Open(s.lockPath(k, name))
	if err != nil {
		return false // no lock file: no install ever took it
	}
	defer f.Close()
	if !tryLockFile(f) {
		return true
	}
	unlockFile(f)
	return false
}
