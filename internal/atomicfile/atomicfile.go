// Package atomicfile writes small files (selection files, cached indexes
// and manifests) so that a reader sees the old content or the new, never
// half of either: the data goes to a temporary file beside the target,
// which one rename puts in place.
package atomicfile

import (
	"errors"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Write replaces path with data, creating its folder if needed. perm is
// the file's mode (umask not applied). On error path is untouched and no
// temporary file is left behind.
func Write(path string, data []byte, perm fs.FileMode) error {
	return WriteWith(path, perm, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
}

// WriteWith is Write with the content written by write, for callers that
// write through their own function (fetch counts and fakes disk errors).
func WriteWith(path string, perm fs.FileMode, write func(*os.File) error) error {
	dir := filepath.Dir(path)
	// Folders as mkdir -p makes them: what the umask (and a setgid
	// parent) asks for, so a cache a group shares stays shared.
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return err
	}
	// Beside the target, so the rename never crosses file systems.
	f, err := os.CreateTemp(dir, tmpPrefix(path)+"*")
	if err != nil {
		// Named as the file being written: the temporary's name means
		// nothing to whoever reads the error.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return &fs.PathError{Op: "write", Path: path, Err: pe.Err}
		}
		return err
	}
	werr := write(f)
	merr := f.Chmod(perm)
	cerr := f.Close()
	if err := errors.Join(werr, merr, cerr); err != nil {
		os.Remove(f.Name())
		return err
	}
	beforeRename(f.Name())
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return err
	}
	removeStale(dir, TmpPrefix(path), f.Name())
	return nil
}

// TmpPrefix is the start of the names of path's temporaries: the rest
// is the writer's host and pid, then a random part (see removeStale).
func TmpPrefix(path string) string { return ".tmp-" + filepath.Base(path) + "-" }

// tmpPrefix is the name of this process's temporaries of path, less their
// random tail: TmpPrefix, then "<host>.<pid>-".
func tmpPrefix(path string) string {
	return TmpPrefix(path) + host() + "." + strconv.Itoa(os.Getpid()) + "-"
}

// host tells this machine's temporaries from those of another machine
// sharing the folder (a project on NFS), whose pids mean nothing here.
var host = sync.OnceValue(func() string {
	name, _ := os.Hostname()
	h := fnv.New32a()
	h.Write([]byte(name))
	return strconv.FormatUint(uint64(h.Sum32()), 36)
})

// beforeRename is a test hook: a test ends the process here, as a kill
// between the write and the rename would.
var beforeRename = func(string) {}

// staleAge is how old a temporary must be before a later write takes it
// for one a killed writer left, when its name does not say a writer of
// this machine that is gone (another machine's, an older cudaenv's): a
// live writer's lives for milliseconds.
const staleAge = 10 * time.Second

// removeStale deletes the temporaries of this file's name that killed
// writers left (a .cuda-version sits in the user's repository, where git
// sees them): regular files owned by this user whose writer, named by
// host and pid, is gone, whatever their age; others once older than
// staleAge. A live writer's, or another user's, is never touched.
func removeStale(dir, prefix, mine string) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, de := range des {
		if !strings.HasPrefix(de.Name(), prefix) || !de.Type().IsRegular() {
			continue
		}
		p := filepath.Join(dir, de.Name())
		if p == mine {
			continue
		}
		fi, err := de.Info()
		if err != nil || !ownedByMe(fi) {
			continue
		}
		if !writerGone(strings.TrimPrefix(de.Name(), prefix)) && time.Since(fi.ModTime()) < staleAge {
			continue
		}
		os.Remove(p)
	}
}

// writerGone reports whether a temporary's name (less its prefix:
// "<host>.<pid>-<random>") says a writer of this machine that has ended.
func writerGone(rest string) bool {
	h, rest, ok := strings.Cut(rest, ".")
	if !ok || h != host() {
		return false
	}
	pidText, _, ok := strings.Cut(rest, "-")
	pid, err := strconv.Atoi(pidText)
	if !ok || err != nil || pid <= 0 || pid == os.Getpid() {
		return false
	}
	return processGone(pid)
}
