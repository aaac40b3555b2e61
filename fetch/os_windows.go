package fetch

import (
	"errors"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/windows"
)

// Windows has no O_NOFOLLOW; openNoFollow's Lstat and Stat checks stand in.
const (
	oNoFollow = 0
	oNonBlock = 0
)

func deviceOf(fs.FileInfo) uint64 { return 0 }

func isLinkLoop(error) bool { return false }

func linkCount(fs.FileInfo) uint64 { return 1 }

func isNoSpace(err error) bool {
	return errors.Is(err, windows.ERROR_DISK_FULL) || errors.Is(err, windows.ERROR_HANDLE_DISK_FULL) ||
		errors.Is(err, syscall.ENOSPC)
}

func isReadOnly(err error) bool {
	return errors.Is(err, windows.ERROR_WRITE_PROTECT) || errors.Is(err, syscall.EROFS)
}

// tryLockFile takes an exclusive lock on f if no one holds it.
func tryLockFile(f *os.File) (bool, error) {
	var ol windows.Overlapped
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING):
		return false, nil
	}
	return false, &fs.PathError{Op: "lock", Path: f.Name(), Err: err}
}

func unlockFile(f *os.File) {
	var ol windows.Overlapped
	windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, &ol)
}

// trustedOwner: file ownership is not checked on Windows, where the cache
// lives in the user's own profile.
func trustedOwner(fs.FileInfo) bool { return true }

// foreignFolder: ownership is not checked on Windows, where the cache
// lives in the user's own profile.
func foreignFolder(fs.FileInfo) (uint32, bool) { return 0, false }
