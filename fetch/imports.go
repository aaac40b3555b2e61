package fetch

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/cudaenv/cudaenv/internal/ledger"
	"github.com/cudaenv/cudaenv/internal/rootfs"
)

// ImportPrefix names the folders `bundle import` unpacks a bundle into,
// in the cache folder (so the unpacked archives sit on the cache's disk):
// bundle-import-<n>. Each holds ownerLock, locked while its import runs;
// one whose lock is free belongs to an import that was killed, and the
// next command that uses the cache removes it (see sweepImports).
const ImportPrefix = "bundle-import-"

// UnpackPrefix names the folders a wheel is unpacked into on its way to
// the cache of unpacked wheels (UnpackedFolder), held and swept as import
// folders are.
const UnpackPrefix = "unpack-"

// workPrefixes are the names of the cache's held work folders.
var workPrefixes = []string{ImportPrefix, UnpackPrefix}

// isWorkDir reports whether name is one of the cache's held work folders.
func isWorkDir(name string) bool {
	for _, p := range workPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// ownerLock is the file in an import folder its import keeps locked.
const ownerLock = ".owner.lock"

// unownedAge is how old an import folder without ownerLock (one made by
// an older cudaenv, or killed before it took its lock) must be before it
// is taken for abandoned.
const unownedAge = time.Hour

// NewImportDir makes a folder for one bundle import in the cache folder
// dir (the system's temporary folder if dir is ""), first removing those
// that killed imports left. The folder is held until done is called,
// which deletes it.
func NewImportDir(dir string) (path string, done func(), err error) {
	return NewWorkDir(dir, ImportPrefix)
}

// NewWorkDir is NewImportDir for a folder named prefix (one of
// ImportPrefix, UnpackPrefix) followed by a random part.
func NewWorkDir(dir, prefix string) (path string, done func(), err error) {
	if dir != "" {
		if err := os.MkdirAll(dir, 0o777); err != nil { // as the umask asks
			return "", nil, localize(err, inCache)
		}
		sweepImports(dir)
	}
	// Made under a dot name, which no sweeper takes, and renamed once its
	// lock is held: a sweeper running meanwhile (another import, another
	// unpacking in this process) would take an unlocked folder for an
	// abandoned one and remove it.
	// (Windows renames no folder with a file open in it.)
	hide := "."
	if runtime.GOOS == "windows" {
		hide = ""
	}
	hidden, err := os.MkdirTemp(dir, hide+prefix)
	if err != nil {
		return "", nil, localize(err, inCache)
	}
	path = filepath.Join(filepath.Dir(hidden), strings.TrimPrefix(filepath.Base(hidden), hide))
	f, err := os.OpenFile(filepath.Join(hidden, ownerLock), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		var ok bool
		if ok, err = tryLockFile(f); err == nil && !ok {
			err = errors.New("lock taken") // a folder MkdirTemp just made: cannot be
		}
		if err == nil && hidden != path {
			err = os.Rename(hidden, path)
		}
		if err != nil {
			f.Close()
		}
	}
	if err != nil {
		os.RemoveAll(hidden)
		return "", nil, localize(err, inCache)
	}
	return path, func() {
		// Unlocked first (Windows deletes no open file): a sweeper that
		// then takes the folder only helps delete it.
		unlockFile(f)
		f.Close()
		// Files it linked from the cache of unpacked trees (an image's
		// build) stay vouched for in the stores that hold them too.
		ledger.Open(dir).Remove(path)
	}, nil
}

// swept remembers the cache folders already swept by this process.
var swept sync.Map

// sweepImports removes the import folders in the cache folder dir that
// no running import owns: this user's folders of ImportPrefix's name
// whose ownerLock is free (or, lacking one, that are older than
// unownedAge). Other users' folders in a shared cache are left alone.
func sweepImports(dir string) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, de := range des {
		if de.IsDir() && isWorkDir(de.Name()) {
			removeIfAbandoned(filepath.Join(dir, de.Name()))
		}
	}
}

// removeIfAbandoned deletes one import folder if no running import owns
// it, and reports whether it did.
func removeIfAbandoned(path string) bool {
	return ifAbandoned(path, func() bool { return ledger.Open(filepath.Dir(path)).Remove(path) == nil })
}

// ifAbandoned runs do on one import folder if no running import owns it
// (holding its lock meanwhile), and returns what do returned.
func ifAbandoned(path string, do func() bool) bool {
	st, err := os.Lstat(path)
	if err != nil || !st.IsDir() || !OwnedByMe(st) {
		return false
	}
	f, err := openNoFollow(filepath.Join(path, ownerLock), os.O_RDONLY)
	if errors.Is(err, fs.ErrNotExist) {
		if time.Since(st.ModTime()) < unownedAge {
			return false
		}
		return do()
	}
	if err != nil {
		return false
	}
	defer f.Close()
	if ok, err := tryLockFile(f); err != nil || !ok {
		return false // a running import's
	}
	defer unlockFile(f)
	return do()
}

// AbandonedImports lists the import folders in the cache folder dir that
// killed imports left (those the next command using the cache, or cache
// prune, removes) and the bytes they hold. It removes nothing.
func AbandonedImports(dir string) (paths []string, bytes int64) {
	des, _ := os.ReadDir(dir)
	for _, de := range des {
		p := filepath.Join(dir, de.Name())
		if de.IsDir() && isWorkDir(de.Name()) && ifAbandoned(p, func() bool { return true }) {
			paths = append(paths, p)
			bytes += rootfs.Size(p)
		}
	}
	return paths, bytes
}

// sweepOnce is sweepImports, once per process for each cache folder: the
// commands that use the cache call it on their first use.
func sweepOnce(dir string) {
	if _, done := swept.LoadOrStore(dir, true); !done {
		sweepImports(dir)
	}
}

// importUsage is the bytes of the import folders in dir, running or not.
func importUsage(dir string) int64 {
	var n int64
	des, _ := os.ReadDir(dir)
	for _, de := range des {
		if de.IsDir() && isWorkDir(de.Name()) {
			// A killed unpacking may have linked its files into a store
			// already: those are not the cache's to free.
			n += rootfs.OwnSize(filepath.Join(dir, de.Name()))
		}
	}
	return n
}

// pruneImports removes the import folders no running import owns and
// returns their paths.
func pruneImports(dir string) []string {
	var removed []string
	des, _ := os.ReadDir(dir)
	for _, de := range des {
		p := filepath.Join(dir, de.Name())
		if de.IsDir() && isWorkDir(de.Name()) && removeIfAbandoned(p) {
			removed = append(removed, p)
		}
	}
	return removed
}
