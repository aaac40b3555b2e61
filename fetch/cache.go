package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/cudaenv/cudaenv/internal/atomicfile"
	"github.com/cudaenv/cudaenv/internal/ledger"
	"github.com/cudaenv/cudaenv/internal/rootfs"
)

// The cache folder (Client.CacheDir) holds cacheFolders, each of them
// cudaenv's own, and the marker that says so. Other programs' files may sit
// beside them when CUDAENV_CACHE_DIR names a shared folder: nothing here
// touches those.
var cacheFolders = []string{"index", "manifests", "archives", "metadata", UnpackedFolder}

// UnpackedFolder is the cache's folder of unpacked wheels (see
// fetch/pypi's cache of them): one folder per wheel, named by its sha256.
const UnpackedFolder = "unpacked"

// CacheMarker is the file that marks a folder as cudaenv's download cache:
// a cache directory tag (https://bford.info/cachedir/), so backup tools
// skip it too, with a line naming cudaenv. PruneCache works only where it
// is.
const CacheMarker = "CACHEDIR.TAG"

const markerText = "Signature: 8a477f597d28d172789f06886806bc55\n" +
	"# This file marks cudaenv's download cache (index, manifests, archives).\n" +
	"# cudaenv cache prune removes those folders only where this file is.\n" +
	"# For information about cache directory tags see https://bford.info/cachedir/\n"

// adoptable are the entries an unmarked folder may hold and still be taken
// as cudaenv's: its own folders, the hook's stamps and the ledger of
// shared files (and bundle imports' folders, see ImportPrefix).
var adoptable = append([]string{"stamps", ledger.Folder}, cacheFolders...)

// markCache creates the cache folder if needed and marks it as cudaenv's
// when cudaenv made it, found it empty, or found only cudaenv's own
// folders in it (a cache made before the marker existed). A folder with
// anything else in it (~/.cache, a project) is used but never marked.
func markCache(dir string) error {
	sweepOnce(dir) // what killed bundle imports left
	if hasMarker(dir) {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return localize(err, inCache)
	}
	if !onlyOurs(dir) {
		return nil
	}
	if err := atomicfile.Write(filepath.Join(dir, CacheMarker), []byte(markerText), 0o644); err != nil {
		return localize(err, inCache)
	}
	return nil
}

// onlyOurs reports whether dir holds nothing but cudaenv's own folders.
func onlyOurs(dir string) bool {
	des, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, de := range des {
		if !de.IsDir() || (!slices.Contains(adoptable, de.Name()) && !isWorkDir(de.Name())) {
			return false
		}
	}
	return true
}

// hasMarker reports whether dir holds cudaenv's marker as a regular file
// (a link to one elsewhere does not count).
func hasMarker(dir string) bool {
	f, err := openNoFollow(filepath.Join(dir, CacheMarker), os.O_RDONLY)
	if err != nil {
		return false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	return err == nil && bytes.Equal(b, []byte(markerText))
}

// PruneCache removes the cached archives, manifests and release indexes
// in dir (a Client.CacheDir), and the folders killed bundle imports left,
// and returns the paths it removed. Nothing
// else in dir is touched, and dir must carry cudaenv's marker or hold
// nothing but cudaenv's own folders (as a cache made before the marker
// does): the folder may be named by a setting (CUDAENV_CACHE_DIR=~/.cache,
// ..) and hold other programs' files. A folder that does not exist is
// nothing to do. Links are removed, never followed.
func PruneCache(dir string) ([]string, error) {
	st, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !st.IsDir() && st.Mode()&fs.ModeSymlink == 0 {
		return nil, fmt.Errorf("%s is not a folder; nothing removed", dir)
	}
	if !hasMarker(dir) && !onlyOurs(dir) {
		return nil, fmt.Errorf("%s does not carry cudaenv's cache marker (%s), so it may hold other programs' files; nothing removed. Point CUDAENV_CACHE_DIR at a folder of cudaenv's own, or remove its index, manifests and archives folders yourself", dir, CacheMarker)
	}
	removed := pruneImports(dir)
	for _, name := range cacheFolders {
		p := filepath.Join(dir, name)
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		// The unpacked trees' files that stores keep go on vouched for.
		if err := ledger.Open(dir).Remove(p); err != nil {
			return removed, err
		}
		removed = append(removed, p)
	}
	return removed, nil
}

// openNoFollow opens name without following a link at its last element
// and only if it is a regular file with no other name (a hard link to
// someone else's file is as bad as a symlink).
func openNoFollow(name string, flag int) (*os.File, error) {
	if st, err := os.Lstat(name); err == nil && !st.Mode().IsRegular() {
		// Refused before open: opening a planted FIFO would block.
		return nil, &fs.PathError{Op: "open", Path: name, Err: errNotRegular}
	}
	f, err := os.OpenFile(name, flag|oNoFollow, 0o644)
	if err != nil {
		if isLinkLoop(err) {
			return nil, &fs.PathError{Op: "open", Path: name, Err: errNotRegular}
		}
		return nil, err
	}
	st, err := f.Stat()
	if err == nil && (!st.Mode().IsRegular() || linkCount(st) > 1) {
		err = &fs.PathError{Op: "open", Path: name, Err: errNotRegular}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

var errNotRegular = errors.New("not a regular file of its own")

// openCacheFile opens (creating if needed) a file in the cache for
// writing. Whatever else sits at its name, a link or a folder planted in a
// shared cache, is removed (the entry itself, never what it points to) and
// a fresh file made, so nothing is ever written through a planted name.
func openCacheFile(name string, flag int) (*os.File, error) {
	f, err := openNoFollow(name, flag|os.O_CREATE)
	if !errors.Is(err, errNotRegular) {
		return f, err
	}
	if err := os.RemoveAll(name); err != nil {
		return nil, err
	}
	// O_EXCL: a name planted again since is an error, not a target.
	return openNoFollow(name, flag|os.O_CREATE|os.O_EXCL)
}

// readCacheFile reads a regular file of the cache.
func readCacheFile(name string) ([]byte, error) {
	f, err := openNoFollow(name, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// lockArchive takes the cache's lock on one archive, so that installs in
// other processes (another release sharing the archive) wait for a
// download in progress and then reuse it. Waiting is said once through
// notice and ends with ctx.
func lockArchive(ctx context.Context, dir, sha string, notice func()) (unlock func(), err error) {
	f, err := openCacheFile(filepath.Join(dir, sha+".lock"), os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	delay := 20 * time.Millisecond
	for waited := false; ; waited = true {
		ok, err := tryLockFile(f)
		if err != nil {
			f.Close()
			return nil, err
		}
		if ok {
			return func() { unlockFile(f); f.Close() }, nil
		}
		if !waited {
			notice()
		}
		if err := sleep(ctx, delay); err != nil {
			f.Close()
			return nil, err
		}
		delay = min(2*delay, 500*time.Millisecond)
	}
}

// CacheUsage is the bytes of the files in dir's cudaenv folders (the
// archives, manifests, release indexes and unpacked wheels that
// PruneCache removes, and bundle imports' folders). Links are not
// followed, and an unpacked wheel's file that a store holds too (a hard
// link) counts nothing: removing it would free nothing.
func CacheUsage(dir string) int64 {
	n := importUsage(dir)
	for _, sub := range cacheFolders {
		if sub == UnpackedFolder {
			// Files the store shares take no space of the cache's own.
			n += rootfs.OwnSize(filepath.Join(dir, sub))
			continue
		}
		n += rootfs.Size(filepath.Join(dir, sub))
	}
	return n
}
