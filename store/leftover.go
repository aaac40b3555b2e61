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
// space is held. It walks only those trees (none, normally).
func (s *Store) Leftovers() []Leftover {
	var out []Leftover
	for _, k := range []Kind{CUDA, Cudnn} {
		dir := s.kindDir(k)
		des, _ := os.ReadDir(dir)
		for _, de := range des {
			n := de.Name()
			if !de.IsDir() || !strings.HasPrefix(n, ".") {
				continue
			}
			for _, prefix := range []string{stagePrefix, asidePrefix, trashPrefix} {
				if name, ok := leftoverName(n, prefix); ok {
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
