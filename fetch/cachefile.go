package fetch

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cudaenv/cudaenv/internal/atomicfile"
)

// ReadTrustedCache reads the cache file at rel (a slash path inside one of
// the cache's folders, e.g. metadata/<key>.METADATA) under the same rules
// as cached manifests (readOwnFile): opened once, without following a
// link, and believed only as its descriptor says: a regular file with one
// name, written by this user or root and writable by no one else, at
// most limit bytes. What it holds is the caller's to tie to what it
// describes.
func ReadTrustedCache(cacheDir, rel string, limit int64) ([]byte, error) {
	name, err := cachePath(cacheDir, rel)
	if err != nil {
		return nil, err
	}
	data, _, err := readOwnFile(name, limit)
	return data, err
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
	top, _, _ := strings.Cut(rel, "/")
	if _, err := CacheFolder(cacheDir, top); err != nil {
		return err
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
