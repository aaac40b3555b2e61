package ledger

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// StateOf is the state of the file fi describes (an lstat or fstat), with
// sum as the sha256 of its content; false where fi carries no inode.
func StateOf(fi fs.FileInfo, sum [32]byte) (State, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return State{}, false
	}
	return FromStat(st, sum), true
}

// FromStat is StateOf for a raw stat.
func FromStat(st *syscall.Stat_t, sum [32]byte) State {
	return State{
		Dev: uint64(st.Dev), Ino: uint64(st.Ino), Size: st.Size,
		Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano(), Mode: st.Mode, SHA256: sum,
	}
}

// FromUnixStat is StateOf for a stat from golang.org/x/sys/unix.
func FromUnixStat(st *unix.Stat_t, sum [32]byte) State {
	return State{
		Dev: st.Dev, Ino: st.Ino, Size: st.Size,
		Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano(), Mode: st.Mode, SHA256: sum,
	}
}

func inode(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ino
	}
	return 0
}

var uid = os.Getuid()

// trusted reports whether dir is a folder of this user's that nobody else
// may write (missing counts as trusted unless mustExist).
func trusted(dir string, mustExist bool) bool {
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return !mustExist
	}
	if err != nil || !fi.IsDir() {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == uid && fi.Mode().Perm()&0o022 == 0
}

// openOwn opens a regular file of this user's, with one name, that nobody
// else may write, following no link at its name.
func openOwn(p string, flag int) (*os.File, error) {
	f, err := os.OpenFile(p, flag|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok || !fi.Mode().IsRegular() || int(st.Uid) != uid || st.Nlink != 1 || fi.Mode().Perm()&0o022 != 0 {
			err = &fs.PathError{Op: "open", Path: p, Err: errors.New("not a file of this user's alone")}
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func lockFile(f *os.File) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			return err
		}
	}
}

func unlockFile(f *os.File) { unix.Flock(int(f.Fd()), unix.LOCK_UN) }

// sameFile reports whether a and b are the same state, the sum aside.
func sameFile(a, b State) bool {
	a.SHA256 = b.SHA256
	return a == b
}

// Remove deletes the tree at path as os.RemoveAll does. Its files that
// have other names (hard links the cache or another store keep) change
// state as their names here go; for each whose state before was the
// ledger's, the state after is recorded, so those other names stay
// vouched for.
func (l *Ledger) Remove(path string) error {
	if l == nil {
		return os.RemoveAll(path)
	}
	var shared []string
	filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
					shared = append(shared, p)
				}
			}
		}
		return nil
	})
	if len(shared) == 0 {
		return os.RemoveAll(path)
	}
	unlock, err := l.lock()
	if err != nil {
		return os.RemoveAll(path)
	}
	defer unlock()
	l.mu.Lock()
	l.refresh()
	recs := l.recs
	usable := l.usable
	l.mu.Unlock()
	var carried []State
	for _, p := range shared {
		if !usable {
			break
		}
		fd, err := unix.Open(p, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		var pre, post unix.Stat_t
		if unix.Fstat(fd, &pre) == nil && unix.Unlink(p) == nil && unix.Fstat(fd, &post) == nil {
			before := FromUnixStat(&pre, [32]byte{})
			l.mu.Lock()
			r, ok := recs[before.key()]
			l.mu.Unlock()
			if ok && sameFile(r, before) && post.Nlink > 0 {
				carried = append(carried, FromUnixStat(&post, r.SHA256))
			}
		}
		unix.Close(fd)
	}
	err = os.RemoveAll(path)
	if aerr := l.append(carried); err == nil && len(carried) > 0 {
		err = aerr
	}
	return err
}
