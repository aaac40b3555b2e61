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
	"strings"
	"syscall"
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
	if err := os.MkdirAll(dir, 0o777); err != nil { // as the umask asks
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

// onlyOurs reports whether dir holds nothing but cudaenv's own folders,
// and the temporary of a marker whose write was killed at its rename
// (which the next markCache's write removes): a kill there must not
// leave the cache unmarked, and unprunable, for good.
func onlyOurs(dir string) bool {
	des, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, de := range des {
		if de.Type().IsRegular() && strings.HasPrefix(de.Name(), atomicfile.TmpPrefix(CacheMarker)) {
			continue
		}
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
	if !hasMarker(dir) {
		if !onlyOurs(dir) {
			return nil, fmt.Errorf("%s does not carry cudaenv's cache marker (%s), so it may hold other programs' files; nothing removed. Point CUDAENV_CACHE_DIR at a folder of cudaenv's own, or remove its index, manifests and archives folders yourself", dir, CacheMarker)
		}
		// Ours, unmarked (a marker's write killed at its rename, a cache
		// older than the marker): marked once pruned.
		defer markCache(dir)
	}
	removed := pruneImports(dir)
	for _, name := range cacheFolders {
		p := filepath.Join(dir, name)
		st, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err == nil && name == "archives" && st.IsDir() {
			if pruneArchives(p) {
				removed = append(removed, p)
			}
			continue
		}
		remove := os.RemoveAll
		if name == UnpackedFolder {
			// The unpacked trees' files that stores keep go on vouched for.
			remove = ledger.Open(dir).Remove
		}
		if err := removeAllWhileUsed(p, remove); err != nil {
			return removed, err
		}
		removed = append(removed, p)
	}
	return removed, nil
}

// pruneArchives removes the archives folder's files but those of an
// archive a running install holds the lock of (a download in progress:
// its part file, its lock), so that prune and install do not fail each
// other; the folder itself goes once nothing is left in it. It reports
// whether it removed anything.
func pruneArchives(dir string) bool {
	des, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	bySum := map[string][]string{}
	for _, de := range des {
		sum := de.Name()
		if i := strings.IndexByte(sum, '.'); i >= 0 {
			sum = sum[:i]
		}
		bySum[sum] = append(bySum[sum], de.Name())
	}
	did := false
	for sum, names := range bySum {
		lock := filepath.Join(dir, sum+".lock")
		f, err := openNoFollow(lock, os.O_RDONLY)
		if err == nil {
			if ok, _ := tryLockFile(f); !ok {
				f.Close()
				continue // a download of it is under way
			}
		}
		for _, n := range names {
			if n != sum+".lock" && os.RemoveAll(filepath.Join(dir, n)) == nil {
				did = true
			}
		}
		// The lock file last, held: a locker that opened it before
		// finds its name gone and takes a new one (lockArchive).
		if os.Remove(lock) == nil {
			did = true
		}
		if f != nil {
			unlockFile(f)
			f.Close()
		}
	}
	if os.Remove(dir) == nil {
		did = true
	}
	return did
}

// removeAllWhileUsed is os.RemoveAll of a cache folder that a running
// command may add a file to meanwhile (a cached manifest): that file is
// left, not an error ("directory not empty").
func removeAllWhileUsed(p string, remove func(string) error) error {
	err := remove(p)
	for try := 0; err != nil && try < 3 && errors.Is(err, syscall.ENOTEMPTY); try++ {
		err = remove(p)
	}
	if errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// openNoFollow opens name without following a link at its last element
// and only if it is a regular file with no other name (a hard link to
// someone else's file is as bad as a symlink).
func openNoFollow(name string, flag int) (*os.File, error) {
	if st, err := os.Lstat(name); err == nil && !st.Mode().IsRegular() {
		// Refused before open: opening a planted FIFO would block.
		return nil, &fs.PathError{Op: "open", Path: name, Err: errNotRegular}
	}
	// O_NONBLOCK all the same: a FIFO swapped in after the Lstat is
	// opened without waiting, then refused on its descriptor.
	f, err := os.OpenFile(name, flag|oNoFollow|oNonBlock, 0o644)
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
			// Prune removes a lock file it holds: one whose name is gone,
			// or names another file now, locks nothing; take the new one.
			if cur, err := os.Stat(f.Name()); err != nil || !sameFile(f, cur) {
				unlockFile(f)
				f.Close()
				if f, err = openCacheFile(filepath.Join(dir, sha+".lock"), os.O_RDONLY); err != nil {
					return nil, err
				}
				waited = true
				continue
			}
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
// followed, and a file a store holds too (a hard link: an unpacked
// wheel's, one of a killed unpacking's folder) counts nothing: removing it
// would free nothing.
func CacheUsage(dir string) int64 {
	n := importUsage(dir)
	for _, sub := range cacheFolders {
		// Files a store shares (hard links) take no space of the
		// cache's own: removing them frees nothing.
		n += rootfs.OwnSize(filepath.Join(dir, sub))
	}
	return n
}

// sameFile reports whether the open file f is the file st describes.
func sameFile(f *os.File, st fs.FileInfo) bool {
	fi, err := f.Stat()
	return err == nil && os.SameFile(fi, st)
}

// CacheFolder returns cacheDir/name, one of the cache's own folders
// (cacheFolders), made if missing as mkdir makes folders: with the
// permissions the umask asks for, and the group of a setgid parent (a
// cache a lab shares: chgrp lab, chmod 2775, umask 002). One found there
// is used only if it is a real folder of this user's, root's, or one
// shared with a group of this user's (group-writable): in a
// world-writable cache another user can plant a link (to /etc, to a
// folder of theirs) or a folder of their own before this user's first
// use, and nothing is written through either.
func CacheFolder(cacheDir, name string) (string, error) {
	if cacheDir == "" || !slices.Contains(cacheFolders, name) {
		return "", fmt.Errorf("not a cache folder: %s", name)
	}
	if err := os.MkdirAll(cacheDir, 0o777); err != nil {
		return "", localize(err, inCache)
	}
	p := filepath.Join(cacheDir, name)
	st, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.Mkdir(p, 0o777); err != nil && !errors.Is(err, fs.ErrExist) {
			return "", localize(err, inCache)
		}
		st, err = os.Lstat(p)
	}
	if err != nil {
		return "", localize(err, inCache)
	}
	if err := checkCacheFolder(p, st); err != nil {
		return "", err
	}
	return p, nil
}

// checkCacheFolder refuses what CacheFolder does not use.
func checkCacheFolder(p string, st fs.FileInfo) error {
	const ownFolder = "set CUDAENV_CACHE_DIR to a folder of your own"
	switch {
	case st.Mode()&fs.ModeSymlink != 0:
		return &LocalError{fmt.Errorf("the cache folder %s is a symbolic link, which cudaenv does not follow in its cache", p), "remove the link, or " + ownFolder}
	case !st.IsDir():
		return &LocalError{fmt.Errorf("the cache folder %s is not a folder", p), "remove it, or " + ownFolder}
	}
	if uid, ok := foreignFolder(st); ok {
		return &LocalError{fmt.Errorf("the cache folder %s belongs to another user (uid %d) and is not shared with a group of yours", p, uid),
			"have its owner remove it or share it with your group (chgrp GROUP DIR && chmod 2775 DIR), or " + ownFolder}
	}
	return nil
}
