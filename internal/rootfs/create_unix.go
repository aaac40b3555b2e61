//go:build linux || darwin || freebsd || netbsd || openbsd

package rootfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// maxDirFDs bounds the folders a Tree keeps open for CreateFile. Wheels
// list their entries folder by folder, so a few dozen are in use at a
// time; folders past the bound are opened for the one call and closed.
const maxDirFDs = 256

// dirFDs is the open folders of a Tree, each opened from its parent's
// descriptor with O_NOFOLLOW|O_DIRECTORY, so none of them is reached
// through a symlink, at the time of opening or later.
type dirFDs struct {
	mu   sync.Mutex
	open bool // top and fds are set
	top  int  // the tree's own folder
	fds  map[string]int
}

func (d *dirFDs) close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, fd := range d.fds {
		unix.Close(fd)
	}
	if d.open {
		unix.Close(d.top)
	}
	d.fds, d.open = nil, false
}

// dirFD returns a descriptor of the real folder rel (made, 0755, with its
// parents when missing), and whether the caller must close it.
func (t *Tree) dirFD(rel string) (fd int, owned bool, err error) {
	d := &t.fds
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.open {
		f, err := t.root.Open(".")
		if err != nil {
			return -1, false, err
		}
		top, err := unix.Dup(int(f.Fd()))
		f.Close()
		if err != nil {
			return -1, false, err
		}
		unix.CloseOnExec(top)
		d.top, d.fds, d.open = top, map[string]int{}, true
	}
	if rel == "" || rel == "." {
		return d.top, false, nil
	}
	if fd, ok := d.fds[rel]; ok {
		return fd, false, nil
	}
	// Walk down from the deepest folder already open.
	parent, start := d.top, 0
	segs := strings.Split(rel, "/")
	for i := len(segs) - 1; i > 0; i-- {
		if fd, ok := d.fds[strings.Join(segs[:i], "/")]; ok {
			parent, start = fd, i
			break
		}
	}
	owned = false
	for i := start; i < len(segs); i++ {
		sub := strings.Join(segs[:i+1], "/")
		fd, err := openDirAt(parent, segs[i], sub, !t.readOnly)
		if owned {
			unix.Close(parent)
		}
		if err != nil {
			return -1, false, err
		}
		if len(d.fds) < maxDirFDs {
			d.fds[sub] = fd
			t.dirs.Store(sub, struct{}{})
			owned = false
		} else {
			owned = true
		}
		parent = fd
	}
	return parent, owned, nil
}

// openDirAt opens (making it first when missing) the folder name in
// parent, refusing a symlink and anything that is not a folder.
func openDirAt(parent int, name, rel string, mkdir bool) (int, error) {
	for try := 0; ; try++ {
		fd, err := unix.Openat(parent, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == nil {
			return fd, nil
		}
		if err == unix.EINTR {
			continue
		}
		if err == unix.ENOENT && mkdir && try < 2 {
			if err := unix.Mkdirat(parent, name, 0o755); err != nil && err != unix.EEXIST {
				return -1, &fs.PathError{Op: "mkdirat", Path: rel, Err: err}
			}
			continue
		}
		var st unix.Stat_t
		if serr := unix.Fstatat(parent, name, &st, unix.AT_SYMLINK_NOFOLLOW); serr == nil {
			switch st.Mode & unix.S_IFMT {
			case unix.S_IFLNK:
				return -1, &ThroughLinkError{rel}
			case unix.S_IFDIR:
			default:
				return -1, &NotDirError{rel}
			}
		}
		return -1, &fs.PathError{Op: "openat", Path: rel, Err: err}
	}
}

// CreateFile creates the file rel (a clean slash path) for writing with
// exactly the mode perm, whatever the umask, making its folders as
// MkdirAll does (never through a symlink). A regular file already at rel
// is replaced; a folder or a symlink there is an error, since links in
// the tree were checked to resolve inside it and replacing one could send
// others elsewhere. The file is opened with O_CREAT|O_EXCL|O_NOFOLLOW in
// its folder's descriptor: one open per file, nothing followed.
func (t *Tree) CreateFile(rel string, perm fs.FileMode) (*os.File, error) {
	dir, base := path.Split(rel)
	dirfd, owned, err := t.dirFD(strings.TrimSuffix(dir, "/"))
	if err != nil {
		return nil, err
	}
	if owned {
		defer unix.Close(dirfd)
	}
	const flags = unix.O_WRONLY | unix.O_CREAT | unix.O_EXCL | unix.O_NOFOLLOW | unix.O_CLOEXEC
	for try := 0; ; try++ {
		fd, err := unix.Openat(dirfd, base, flags, uint32(perm.Perm()))
		if err == unix.EINTR {
			continue
		}
		if err == unix.EEXIST && try < 2 {
			if err := replaceable(dirfd, base, rel); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "openat", Path: rel, Err: err}
		}
		f := os.NewFile(uintptr(fd), rel)
		// The umask may have taken bits off; fchmod opens nothing.
		if err := f.Chmod(perm.Perm()); err != nil {
			f.Close()
			return nil, err
		}
		return f, nil
	}
}

// OpenFile opens the regular file rel (a clean slash path) of a tree
// opened with OpenRead for reading: without following a symlink at any
// step, or waiting on a FIFO planted at its name.
func (t *Tree) OpenFile(rel string) (*os.File, error) {
	dir, base := path.Split(rel)
	dirfd, owned, err := t.dirFD(strings.TrimSuffix(dir, "/"))
	if err != nil {
		return nil, err
	}
	if owned {
		defer unix.Close(dirfd)
	}
	for {
		fd, err := unix.Openat(dirfd, base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "openat", Path: rel, Err: err}
		}
		return os.NewFile(uintptr(fd), rel), nil
	}
}

// ErrNoLink is what LinkFile returns when the file system cannot give the
// tree another name for the file (another device, a file system without
// hard links, no /proc): the caller copies instead.
var ErrNoLink = errors.New("cannot hard-link here")

// LinkFile gives the open file src the name rel in the tree (a hard
// link), making its folders as MkdirAll does, never through a symlink. A
// regular file already at rel is replaced; a folder or a symlink there is
// an error, as for CreateFile. The link is made to the very file open as
// src (through /proc/self/fd, which names the open file, not a path that
// could have been swapped since src was checked).
func (t *Tree) LinkFile(rel string, src *os.File) error {
	if runtime.GOOS != "linux" {
		return ErrNoLink
	}
	dir, base := path.Split(rel)
	dirfd, owned, err := t.dirFD(strings.TrimSuffix(dir, "/"))
	if err != nil {
		return err
	}
	if owned {
		defer unix.Close(dirfd)
	}
	from := "/proc/self/fd/" + strconv.Itoa(int(src.Fd()))
	for try := 0; ; try++ {
		err := unix.Linkat(unix.AT_FDCWD, from, dirfd, base, unix.AT_SYMLINK_FOLLOW)
		switch err {
		case nil:
			return nil
		case unix.EINTR:
			continue
		case unix.EXDEV, unix.EPERM, unix.EMLINK, unix.EOPNOTSUPP, unix.ENOENT, unix.EACCES:
			// ENOENT: no /proc here (the folder exists: dirFD made it).
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

// replaceable removes the regular file base in dirfd so a new one can take
// its name, refusing a folder or a symlink.
func replaceable(dirfd int, base, rel string) error {
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if err == unix.ENOENT {
			return nil
		}
		return &fs.PathError{Op: "fstatat", Path: rel, Err: err}
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return fmt.Errorf("%s is a folder in the tree", rel)
	case unix.S_IFLNK:
		return fmt.Errorf("%s is a symlink in the tree; refusing to replace it", rel)
	}
	if err := unix.Unlinkat(dirfd, base, 0); err != nil && err != unix.ENOENT {
		return &fs.PathError{Op: "unlinkat", Path: rel, Err: err}
	}
	return nil
}

// links is how many names a file has.
func links(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*unix.Stat_t); ok {
		return uint64(st.Nlink)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
