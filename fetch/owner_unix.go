//go:build !windows

package fetch

import (
	"io/fs"
	"os"
	"sync"
	"syscall"
)

// uid is this process's user, asked once: every file an install links
// from the cache is checked against it.
var uid = sync.OnceValue(os.Getuid)

// OwnedByMe reports whether this user owns a file (not root: a shared
// cache's other users' folders are theirs to remove).
func OwnedByMe(st fs.FileInfo) bool {
	s, ok := st.Sys().(*syscall.Stat_t)
	return ok && s.Uid == uint32(uid())
}
