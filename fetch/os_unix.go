//go:build !windows

package fetch

import (
	"errors"
	"io/fs"
	"os"
	"slices"
	"sync"
	"syscall"
)

const (
	oNoFollow = syscall.O_NOFOLLOW
	oNonBlock = syscall.O_NONBLOCK
)

// deviceOf is the device a file is on.
func deviceOf(fi fs.FileInfo) uint64 {
	if s, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(s.Dev)
	}
	return 0
}

// isLinkLoop reports the error O_NOFOLLOW gives for a symlink.
func isLinkLoop(err error) bool { return errors.Is(err, syscall.ELOOP) }

// linkCount is the number of names of a file.
func linkCount(st fs.FileInfo) uint64 {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(s.Nlink)
	}
	return 1
}

func isNoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

func isReadOnly(err error) bool { return errors.Is(err, syscall.EROFS) }

// tryLockFile takes an exclusive lock on f if no one holds it.
func tryLockFile(f *os.File) (bool, error) {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch err {
		case nil:
			return true, nil
		case syscall.EWOULDBLOCK:
			return false, nil
		case syscall.EINTR:
			continue
		}
		return false, &fs.PathError{Op: "lock", Path: f.Name(), Err: err}
	}
}

func unlockFile(f *os.File) { syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

// trustedOwner reports whether a cached file that decides what is
// downloaded (a manifest: it names the archives and their sha256) was
// written by this user or root. In a cache shared with other users their
// manifests are not believed: archives are checked by hash and can be
// shared, but the hash has to come from a manifest this user fetched.
func trustedOwner(st fs.FileInfo) bool {
	s, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return true
	}
	return s.Uid == uint32(os.Getuid()) || s.Uid == 0
}

// groups are this process's groups, asked once.
var groups = sync.OnceValue(func() []int {
	gs, _ := os.Getgroups()
	return append(gs, os.Getgid())
})

// foreignFolder reports the owner of a cache folder that is neither this
// user's nor root's nor shared with a group of this user's (group
// writable): one another user could have planted.
func foreignFolder(st fs.FileInfo) (uint32, bool) {
	s, ok := st.Sys().(*syscall.Stat_t)
	if !ok || s.Uid == uint32(uid()) || s.Uid == 0 {
		return 0, false
	}
	if st.Mode().Perm()&0o020 != 0 && slices.Contains(groups(), int(s.Gid)) {
		return 0, false
	}
	return s.Uid, true
}
