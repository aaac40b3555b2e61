//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package rootfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
)

type dirFDs struct{}

func (*dirFDs) close() {}

// CreateFile creates the file rel (a clean slash path) for writing with
// exactly the mode perm, making its folders as MkdirAll does (never
// through a symlink). A regular file already at rel is replaced; a folder
// or a symlink there is an error, since links in the tree were checked to
// resolve inside it and replacing one could send others elsewhere.
func (t *Tree) CreateFile(rel string, perm fs.FileMode) (*os.File, error) {
	if err := t.MkdirAll(path.Dir(rel)); err != nil {
		return nil, err
	}
	fi, err := t.root.Lstat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	case fi.IsDir():
		return nil, fmt.Errorf("%s is a folder in the tree", rel)
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, fmt.Errorf("%s is a symlink in the tree; refusing to replace it", rel)
	default:
		if err := t.root.Remove(rel); err != nil {
			return nil, err
		}
	}
	f, err := t.root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return nil, err
	}
	if err := t.root.Chmod(rel, perm); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ErrNoLink is what LinkFile returns when the file system cannot give the
// tree another name for the file: the caller copies instead.
var ErrNoLink = errors.New("cannot hard-link here")

// LinkFile is not done here: the caller copies.
func (t *Tree) LinkFile(rel string, src *os.File) error { return ErrNoLink }

func links(fs.FileInfo) uint64 { return 1 }

// OpenFile opens the file rel of a tree for reading.
func (t *Tree) OpenFile(rel string) (*os.File, error) {
	return t.root.OpenFile(rel, os.O_RDONLY, 0)
}
