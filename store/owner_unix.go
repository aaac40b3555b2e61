//go:build !windows

package store

import (
	"bufio"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// fileOwner is the uid that owns a file; ok is false where it is not known.
func fileOwner(fi fs.FileInfo) (uid uint32, ok bool) {
	s, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return s.Uid, true
}

// myUID is the effective uid, the one that owns what this process writes.
func myUID() uint32 { return uint32(os.Geteuid()) }

// userName names a uid for a message: "nobody (uid 65534)", or "uid
// 65534" where /etc/passwd does not name it. (os/user would bring in cgo.)
func userName(uid uint32) string {
	id := strconv.FormatUint(uint64(uid), 10)
	if f, err := os.Open("/etc/passwd"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if fields := strings.Split(sc.Text(), ":"); len(fields) > 2 && fields[2] == id && fields[0] != "" {
				return fields[0] + " (uid " + id + ")"
			}
		}
	}
	return "uid " + id
}
