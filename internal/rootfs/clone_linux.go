package rootfs

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// CloneFile gives the tree a copy-on-write clone of the open file src
// (a reflink: FICLONE, on btrfs, XFS and the like) as the new file rel,
// with exactly the mode perm, and returns its stat, making its folders as
// MkdirAll does: the
// clone shares src's blocks but is a file of its own, so a write to either
// leaves the other as it was. A regular file already at rel is replaced,
// as by CreateFile. Where the file system cannot clone (ext4, tmpfs,
// another device), it returns ErrNoClone, leaves nothing at rel, and the
// tree does not try again.
func (t *Tree) CloneFile(rel string, src *os.File, perm fs.FileMode) (fs.FileInfo, error) {
	if t.noClone.Load() {
		return nil, ErrNoClone
	}
	out, err := t.CreateFile(rel, perm)
	if err != nil {
		return nil, err
	}
	cerr := unix.IoctlFileClone(int(out.Fd()), int(src.Fd()))
	if cerr == nil {
		fi, err := out.Stat()
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		return fi, err
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
		return nil, fmt.Errorf("%w: %s: %v", ErrNoClone, rel, cerr)
	}
	return nil, &fs.PathError{Op: "ficlone", Path: rel, Err: cerr}
}

// CanClone reports whether CloneFile may still succeed in this tree (it
// has not failed here yet).
func (t *Tree) CanClone() bool { return !t.noClone.Load() }

// Lstat is rel's stat in the tree, through the descriptors of its
// folders, following no symlink on the way or at rel (a tree opened with
// OpenRead makes no folder). Its Sys is a *syscall.Stat_t.
func (t *Tree) Lstat(rel string) (fs.FileInfo, error) {
	dir, base := splitRel(rel)
	dirfd, owned, err := t.dirFD(dir)
	if err != nil {
		return nil, err
	}
	if owned {
		defer unix.Close(dirfd)
	}
	var st unix.Stat_t
	for {
		err = unix.Fstatat(dirfd, base, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "fstatat", Path: rel, Err: err}
	}
	return newStatInfo(base, &st), nil
}

// LinkFrom gives the file srcRel of the tree src the name rel in t (a
// hard link made by name, from src's folder descriptor: no symlink is
// followed on either side), making rel's folders as MkdirAll does. A
// regular file already at rel is replaced; a folder or a symlink there is
// an error. The caller stats the new name to learn which file it got.
// Where no link can be made it returns ErrNoLink.
func (t *Tree) LinkFrom(rel string, src *Tree, srcRel string) error {
	sdir, sbase := splitRel(srcRel)
	sfd, sowned, err := src.dirFD(sdir)
	if err != nil {
		return err
	}
	if sowned {
		defer unix.Close(sfd)
	}
	dir, base := splitRel(rel)
	dirfd, owned, err := t.dirFD(dir)
	if err != nil {
		return err
	}
	if owned {
		defer unix.Close(dirfd)
	}
	for try := 0; ; try++ {
		err := unix.Linkat(sfd, sbase, dirfd, base, 0)
		switch err {
		case nil:
			return nil
		case unix.EINTR:
			continue
		case unix.EXDEV, unix.EPERM, unix.EMLINK, unix.EOPNOTSUPP:
			return fmt.Errorf("%w: %s: %v", ErrNoLink, rel, err)
		case unix.EEXIST:
			if try >= 2 {
				return &fs.PathError{Op: "linkat", Path: rel, Err: err}
			}
			if err := replaceable(dirfd, base, rel); err != nil {
				return err
			}
		default:
			return &fs.PathError{Op: "linkat", Path: rel, Err: err}
		}
	}
}

// statInfo is an fs.FileInfo of a raw stat.
type statInfo struct {
	name string
	st   syscall.Stat_t
}

func newStatInfo(name string, st *unix.Stat_t) *statInfo {
	return &statInfo{name: name, st: syscall.Stat_t{
		Dev: st.Dev, Ino: st.Ino, Nlink: st.Nlink, Mode: st.Mode, Uid: st.Uid, Gid: st.Gid,
		Rdev: st.Rdev, Size: st.Size, Blksize: st.Blksize, Blocks: st.Blocks,
		Atim: syscall.Timespec{Sec: st.Atim.Sec, Nsec: st.Atim.Nsec},
		Mtim: syscall.Timespec{Sec: st.Mtim.Sec, Nsec: st.Mtim.Nsec},
		Ctim: syscall.Timespec{Sec: st.Ctim.Sec, Nsec: st.Ctim.Nsec},
	}}
}

func (s *statInfo) Name() string       { return s.name }
func (s *statInfo) Size() int64        { return s.st.Size }
func (s *statInfo) ModTime() time.Time { return time.Unix(s.st.Mtim.Sec, s.st.Mtim.Nsec) }
func (s *statInfo) IsDir() bool        { return s.Mode().IsDir() }
func (s *statInfo) Sys() any           { return &s.st }
func (s *statInfo) Mode() fs.FileMode {
	m := fs.FileMode(s.st.Mode & 0o777)
	switch s.st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFREG:
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	case unix.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		m |= fs.ModeDevice
	default:
		m |= fs.ModeIrregular
	}
	if s.st.Mode&unix.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if s.st.Mode&unix.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if s.st.Mode&unix.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}
