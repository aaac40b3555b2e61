//go:build !windows

package fetch

import (
	"io/fs"
	"os"
	"syscall"
)

// ownedByMe reports whether this user owns a file (not root: a shared
// cache's other users' folders are theirs to remove).
func ownedByMe(st fs.FileInfo) bool {
	s, ok := st.Sys().(*syscall.Stat_t)
	return ok && s.Uid == uint32(os.Getuid())
}
