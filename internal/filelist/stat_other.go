//go:build !linux

package filelist

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// Elsewhere than Linux a fingerprint is a file's size, mode and mtime.

type fileStat struct {
	typ                Type
	perm, mode         uint32
	dev, ino, nlink    uint64
	size, mtime, ctime int64
}

type tree struct{ root string }

func openTree(root string) (*tree, error) {
	if _, err := os.Stat(root); err != nil {
		return nil, err
	}
	return &tree{root}, nil
}

func (t *tree) close()      {}
func (t *tree) dev() uint64 { return 0 }

func (t *tree) path(rel string) string { return filepath.Join(t.root, filepath.FromSlash(rel)) }

func (t *tree) lstat(rel string) (fileStat, error) {
	fi, err := os.Lstat(t.path(rel))
	if err != nil {
		return fileStat{}, err
	}
	fst := fileStat{perm: permOf(fi.Mode()), size: fi.Size(), mtime: fi.ModTime().UnixNano(), nlink: 1}
	switch {
	case fi.Mode().IsRegular():
		fst.typ = File
	case fi.IsDir():
		fst.typ = Dir
	case fi.Mode()&fs.ModeSymlink != 0:
		fst.typ = Link
	default:
		fst.typ = '?'
	}
	return fst, nil
}

func (t *tree) readlink(rel string) (string, error) { return os.Readlink(t.path(rel)) }

func (t *tree) open(rel string) (*os.File, error) { return openNoFollow(t.path(rel)) }

func (t *tree) names(rel string) ([]string, error) {
	f, err := os.Open(t.path(rel))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

func fileIno(*os.File) (uint64, error) { return 0, nil }

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

func device(fs.FileInfo) (uint64, bool) { return 0, false }

func fingerprint(fi fs.FileInfo) (uint64, int64, int64) { return 0, fi.ModTime().UnixNano(), 0 }

func statKey(fs.FileInfo) (sumKey, int64, int64, bool) { return sumKey{}, 0, 0, false }

func openNoFollow(p string) (*os.File, error) {
	if fi, err := os.Lstat(p); err == nil && !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "open", Path: p, Err: errNotListable}
	}
	return os.Open(p)
}

func nlink(fs.FileInfo) uint64 { return 1 }
