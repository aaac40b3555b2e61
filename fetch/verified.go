package fetch

import (
	"io/fs"
	"sync"
)

// verifiedFiles remembers, for one Fetch, the archives whose sha256 it has
// already checked (downloaded, or found in the cache and hashed again),
// by the identity of the file checked: so an archive is hashed once per
// install, not once more as it is unpacked. A file counts as still
// checked only if it is the same file (device and inode), this user's
// and writable by nobody else, with the size and change time it had when
// checked: any write to it since, by anyone, moves its change time, which
// no one but root can set back. Anything else is hashed again, as before.
type verifiedFiles struct {
	mu    sync.Mutex
	files map[string]fileID // by sha256
}

func (v *verifiedFiles) remember(sha string, fi fs.FileInfo) {
	id, ok := idOf(fi)
	if !ok {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.files == nil {
		v.files = map[string]fileID{}
	}
	v.files[sha] = id
}

// unchanged reports whether fi is the file checked for sha, unchanged.
func (v *verifiedFiles) unchanged(sha string, fi fs.FileInfo) bool {
	id, ok := idOf(fi)
	if !ok {
		return false
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	was, ok := v.files[sha]
	return ok && was == id
}
