package fetch

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cudaenv/cudaenv/internal/atomicfile"
)

// ReadTrustedCache reads the cache file at rel (a slash path inside one of
// the cache's folders, e.g. metadata/<sha256>.METADATA) under the same
// rules as cached manifests: a regular file of its own, not a link, written
// by this user or root (in a shared cache another user's file could say
// anything), and at most limit bytes.
func ReadTrustedCache(cacheDir, rel string, limit int64) ([]byte, error) {
	name, err := cachePath(cacheDir, rel)
	if err != nil {
		return nil, err
	}
	st, err := os.Lstat(name)
	if err != nil {
		return nil, err
	}
	if !trustedOwner(st) {
		return nil, fmt.Errorf("%s: written by another user; not believed", name)
	}
	f, err := openNoFollow(name, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: larger than %d bytes", name, limit)
	}
	return data, nil
}

// WriteCache writes data to the cache file at rel atomically, private to
// this user, marking the cache folder first if it is new.
func WriteCache(cacheDir, rel string, data []byte) error {
	name, err := cachePath(cacheDir, rel)
	if err != nil {
		return err
	}
	if err := markCache(cacheDir); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return localize(err, inCache)
	}
	return localize(atomicfile.WriteWith(name, 0o600, func(f *os.File) error {
		_, err := cacheWrite(f, data)
		return err
	}), inCache)
}

// cachePath is rel inside one of cudaenv's cache folders, or an error.
func cachePath(cacheDir, rel string) (string, error) {
	top, rest, _ := strings.Cut(rel, "/")
	if cacheDir == "" || !filepath.IsLocal(rel) || strings.Contains(rest, "/") || rest == "" || !slices.Contains(cacheFolders, top) {
		return "", errors.New("not a cache file name: " + rel)
	}
	return filepath.Join(cacheDir, top, rest), nil
}
