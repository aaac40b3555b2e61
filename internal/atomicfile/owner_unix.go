//go:build !windows

package atomicfile

import (
	"io/fs"
	"os"
	"syscall"
)

func ownedByMe(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}

// processGone reports whether no process pid runs on this machine (one
// of another user's answers EPERM: it runs).
func processGone(pid int) bool {
	return syscall.Kill(pid, 0) == syscall.ESRCH
}
