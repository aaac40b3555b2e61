//go:build linux

package filelist

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// fileStat is what Check compares of a file.
type fileStat struct {
	typ                Type
	perm, mode         uint32
	dev, ino, nlink    uint64
	size, mtime, ctime int64
}

// tree opens a tree's folders as Check walks it: each from its parent's
// descriptor with O_NOFOLLOW, so no stat goes through a symlink.
type tree struct {
	top int
	fds map[string]int
}

const maxOpenDirs = 128

func openTree(root string) (*tree, error) {
	fd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: root, Err: err}
	}
	return &tree{top: fd, fds: map[string]int{}}, nil
}

func (t *tree) close() {
	for _, fd := range t.fds {
		unix.Close(fd)
	}
	unix.Close(t.top)
}

func (t *tree) dev() uint64 {
	var st unix.Stat_t
	if unix.Fstat(t.top, &st) != nil {
		return 0
	}
	return st.Dev
}

// dir is a descriptor of the folder rel ("" or "." for the top).
func (t *tree) dir(rel string) (int, error) {
	if rel == "" || rel == "." {
		return t.top, nil
	}
	if fd, ok := t.fds[rel]; ok {
		return fd, nil
	}
	parent, base := t.top, rel
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		var err error
		if parent, err = t.dir(rel[:i]); err != nil {
			return -1, err
		}
		base = rel[i+1:]
	}
	fd, err := unix.Openat(parent, base, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if len(t.fds) >= maxOpenDirs {
		for k, v := range t.fds {
			if !strings.HasPrefix(rel, k+"/") {
				unix.Close(v)
				delete(t.fds, k)
			}
		}
	}
	t.fds[rel] = fd
	return fd, nil
}

func split(rel string) (string, string) {
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		return rel[:i], rel[i+1:]
	}
	return "", rel
}

func (t *tree) lstat(rel string) (fileStat, error) {
	d, base := split(rel)
	fd, err := t.dir(d)
	if err != nil {
		return fileStat{}, err
	}
	var st unix.Stat_t
	for {
		err = unix.Fstatat(fd, base, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return fileStat{}, err
	}
	fst := fileStat{perm: st.Mode & 0o7777, mode: st.Mode, dev: st.Dev, ino: st.Ino, nlink: uint64(st.Nlink),
		size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		fst.typ = File
	case unix.S_IFDIR:
		fst.typ = Dir
	case unix.S_IFLNK:
		fst.typ = Link
	default:
		fst.typ = '?'
	}
	return fst, nil
}

func (t *tree) readlink(rel string) (string, error) {
	d, base := split(rel)
	fd, err := t.dir(d)
	if err != nil {
		return "", err
	}
	buf := make([]byte, 4096)
	n, err := unix.Readlinkat(fd, base, buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}

// open opens the regular file rel for reading, following no link and
// never waiting on a FIFO.
func (t *tree) open(rel string) (*os.File, error) {
	d, base := split(rel)
	fd, err := t.dir(d)
	if err != nil {
		return nil, err
	}
	for {
		f, err := unix.Openat(fd, base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: rel, Err: err}
		}
		return os.NewFile(uintptr(f), rel), nil
	}
}

// names lists the folder rel.
func (t *tree) names(rel string) ([]string, error) {
	fd, err := t.dir(rel)
	if err != nil {
		return nil, err
	}
	dfd, err := unix.Openat(fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(dfd), rel)
	defer f.Close()
	return f.Readdirnames(-1)
}

func fileIno(f *os.File) (uint64, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return 0, err
	}
	return st.Ino, nil
}

func isNotExist(err error) bool {
	return errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR)
}

func device(fi fs.FileInfo) (uint64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Dev, true
}

func fingerprint(fi fs.FileInfo) (ino uint64, mtime, ctime int64) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, fi.ModTime().UnixNano(), 0
	}
	return st.Ino, st.Mtim.Nano(), st.Ctim.Nano()
}

func statKey(fi fs.FileInfo) (sumKey, int64, int64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return sumKey{}, 0, 0, false
	}
	return sumKey{st.Dev, st.Ino}, st.Size, st.Mtim.Nano(), true
}

func openNoFollow(p string) (*os.File, error) {
	return os.OpenFile(p, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
}

func nlink(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
