//go:build !linux

package rootfs

import (
	"io/fs"
	"os"
)

// CloneFile is done on Linux only: the caller links or copies.
func (t *Tree) CloneFile(rel string, src *os.File, perm fs.FileMode) (fs.FileInfo, error) {
	return nil, ErrNoClone
}

// CanClone is false: CloneFile is done on Linux only.
func (t *Tree) CanClone() bool { return false }

// Lstat is rel's stat in the tree, following no symlink at rel.
func (t *Tree) Lstat(rel string) (fs.FileInfo, error) { return t.root.Lstat(rel) }

// LinkFrom is not done here: the caller copies.
func (t *Tree) LinkFrom(rel string, src *Tree, srcRel string) error { return ErrNoLink }
