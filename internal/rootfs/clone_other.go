//go:build !linux

package rootfs

import (
	"io/fs"
	"os"
)

// CloneFile is done on Linux only: the caller links or copies.
func (t *Tree) CloneFile(rel string, src *os.File, perm fs.FileMode) error { return ErrNoClone }
