package rootfs

import (
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// CloneFile gives the tree a copy-on-write clone of the open file src
// (a reflink: FICLONE, on btrfs, XFS and the like) as the new file rel,
// with exactly the mode perm, making its folders as MkdirAll does: the
// clone shares src's blocks but is a file of its own, so a write to either
// leaves the other as it was. A regular file already at rel is replaced,
// as by CreateFile. Where the file system cannot clone (ext4, tmpfs,
// another device), it returns ErrNoClone, leaves nothing at rel, and the
// tree does not try again.
func (t *Tree) CloneFile(rel string, src *os.File, perm fs.FileMode) error {
	if t.noClone.Load() {
		return ErrNoClone
	}
	out, err := t.CreateFile(rel, perm)
	if err != nil {
		return err
	}
	cerr := unix.IoctlFileClone(int(out.Fd()), int(src.Fd()))
	if cerr == nil {
		return out.Close()
	}
	out.Close()
	dir, base := splitRel(rel)
	if dirfd, owned, err := t.dirFD(dir); err == nil {
		unix.Unlinkat(dirfd, base, 0)
		if owned {
			unix.Close(dirfd)
		}
	}
	switch cerr {
	case unix.EOPNOTSUPP, unix.ENOTTY, unix.EXDEV, unix.EINVAL, unix.ENOSYS, unix.EPERM, unix.EBADF:
		t.noClone.Store(true)
		return fmt.Errorf("%w: %s: %v", ErrNoClone, rel, cerr)
	}
	return &fs.PathError{Op: "ficlone", Path: rel, Err: cerr}
}
