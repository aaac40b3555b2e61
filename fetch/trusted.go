package fetch

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrForeign is wrapped by ReadTrusted's error for a cache file that
// another user wrote: in a cache shared between users it is not believed.
var ErrForeign = errors.New("written by another user")

// maxTrusted bounds a trusted cache file (a listing of one wheel, a page).
const maxTrusted = 4 << 20

// ReadTrusted reads a file of the download cache that decides what is
// believed, as cached manifests are read: rel (a path inside CacheDir)
// must be a regular file of its own, written by this user or root. The
// bytes are the caller's to check again; a missing file wraps
// fs.ErrNotExist, another user's wraps ErrForeign.
func (c *Client) ReadTrusted(rel string) ([]byte, error) {
	if c.CacheDir == "" || !filepath.IsLocal(rel) {
		return nil, fmt.Errorf("read %s from the cache: not a path in it", rel)
	}
	data, _, err := readOwnFile(filepath.Join(c.CacheDir, rel), maxTrusted)
	return data, err
}

// readOwnFile reads a cache file that decides what is believed. It is
// opened once, without following a link and without waiting on a named
// pipe, and only the descriptor is believed (a name checked, then opened
// again, can be swapped in between by whoever owns a shared cache's
// folder): a regular file with one name, owned by this user or root,
// writable by no one else, at most limit bytes. Another user's file, or
// one others may write, wraps ErrForeign.
func readOwnFile(name string, limit int64) ([]byte, fs.FileInfo, error) {
	f, err := openNoFollow(name, os.O_RDONLY)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if !trustedOwner(st) {
		return nil, nil, fmt.Errorf("%s: %w", name, ErrForeign)
	}
	if st.Mode().Perm()&0o022 != 0 {
		return nil, nil, fmt.Errorf("%s: %w (others may write it: mode %v)", name, ErrForeign, st.Mode().Perm())
	}
	if st.Size() > limit {
		return nil, nil, fmt.Errorf("%s: larger than %d bytes", name, limit)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, nil, err
	}
	if int64(len(data)) > limit {
		return nil, nil, fmt.Errorf("%s: larger than %d bytes", name, limit)
	}
	return data, st, nil
}

// WriteTrusted writes a file ReadTrusted reads: rel inside CacheDir,
// replaced atomically, readable by this user only.
func (c *Client) WriteTrusted(rel string, data []byte) error {
	if c.CacheDir == "" || !filepath.IsLocal(rel) {
		return fmt.Errorf("write %s to the cache: not a path in it", rel)
	}
	return c.writeCache(filepath.Join(c.CacheDir, rel), data)
}
