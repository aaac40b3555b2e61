package rootfs

import (
	"errors"
	"strings"
)

// ErrNoClone is what CloneFile returns where the file system cannot give
// the tree a copy-on-write clone of a file: the caller links or copies.
var ErrNoClone = errors.New("cannot clone here")

// splitRel is a slash path's folder ("" for the top) and name.
func splitRel(rel string) (string, string) {
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		return rel[:i], rel[i+1:]
	}
	return "", rel
}
