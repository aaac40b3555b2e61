package fetch

import (
	"io/fs"
	"syscall"
)

type fileID struct {
	dev, ino uint64
	size     int64
	ctimeSec int64
	ctimeNs  int64
}

// idOf is a file's identity, if it is a regular file of this user's that
// only this user can write.
func idOf(fi fs.FileInfo) (fileID, bool) {
	s, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o022 != 0 || !OwnedByMe(fi) {
		return fileID{}, false
	}
	return fileID{uint64(s.Dev), uint64(s.Ino), fi.Size(), int64(s.Ctim.Sec), int64(s.Ctim.Nsec)}, true
}
