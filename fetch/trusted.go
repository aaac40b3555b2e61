package fetch

import (
	"errors"
	"fmt"
	"io"
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
	name := filepath.Join(c.CacheDir, rel)
	f, err := openNoFollow(name, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !trustedOwner(st) {
		return nil, fmt.Errorf("%s: %w", name, ErrForeign)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxTrusted+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxTrusted {
		return nil, fmt.Errorf("%s: larger than %d bytes", name, maxTrusted)
	}
	return data, nil
}

// WriteTrusted writes a file ReadTrusted reads: rel inside CacheDir,
// replaced atomically, readable by this user only.
func (c *Client) WriteTrusted(rel string, data []byte) error {
	if c.CacheDir == "" || !filepath.IsLocal(rel) {
		return fmt.Errorf("write %s to the cache: not a path in it", rel)
	}
	name := filepath.Join(c.CacheDir, rel)
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return localize(err, inCache)
	}
	return c.writeCache(name, data)
}
