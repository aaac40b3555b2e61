package store

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cudaenv/cudaenv/internal/dirs"
	"github.com/cudaenv/cudaenv/internal/rootfs"
)

// NewSystem returns the system store (d.System) as its admin writes it:
// Install, Link and Remove work on it as on a user's store, and what
// Install writes is readable by all whatever the admin's umask. Its locks
// and staging live in the system store itself. Config and Cache stay
// the admin's own.
func NewSystem(d dirs.Dirs) (*Store, error) {
	if d.System == "" {
		return nil, errors.New("no system store is set up; name one with cudaenv config set system_root /opt/cudaenv (an absolute folder; or CUDAENV_SYSTEM_ROOT)")
	}
	sd := d
	sd.Root, sd.System = d.System, ""
	return &Store{Dirs: sd, Shared: true}, nil
}

// merge is a user store's entries with the system store's beside them; a
// user entry hides the system entry of the same name and says so.
func merge(own, sys []Entry) []Entry {
	byName := make(map[string]int, len(own))
	for i, e := range own {
		byName[e.Name] = i
	}
	out := append(make([]Entry, 0, len(own)+len(sys)), own...)
	for _, e := range sys {
		if i, ok := byName[e.Name]; ok {
			out[i].Shadows = true
			continue
		}
		e.System = true
		out = append(out, e)
	}
	sortEntries(out)
	return out
}

func samePath(a, b string) bool {
	return filepath.Clean(a) == filepath.Clean(b)
}

// mkdirKind makes a kind folder (and the store's root). In a shared
// store the folders it creates get 0755 whatever the umask, so every
// user can list them; folders that were there keep the admin's mode.
func (s *Store) mkdirKind(dir string) error {
	if !s.Shared {
		return os.MkdirAll(dir, 0o755)
	}
	var made []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || filepath.Dir(d) == d {
			break
		}
		made = append(made, d)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, d := range made {
		if err := os.Chmod(d, 0o755); err != nil {
			return err
		}
	}
	return nil
}

// readableByAll gives a staged tree the modes a shared store needs:
// folders 0755, executables 0755, other files 0644. The umask and the
// archives' own modes are overridden, group and other write bits and
// setuid/setgid are dropped, so that users can read and run everything
// and change nothing. Links are left as they are. A file with other names
// (a hard link to the download cache, or to another store) is never
// chmod'ed, which would change it for all of them: it is replaced by a
// copy of its own with the mode wanted.
func readableByAll(root string) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		var want fs.FileMode
		switch {
		case d.IsDir():
			want = 0o755
		case d.Type().IsRegular():
			fi, err := d.Info()
			if err != nil {
				return err
			}
			want = 0o644
			if fi.Mode()&0o111 != 0 {
				want = 0o755
			}
		default:
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if fi.Mode()&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) == want {
			return nil
		}
		if fi.Mode().IsRegular() && rootfs.Links(fi) > 1 {
			if err := ownCopy(p, want); err != nil {
				return fmt.Errorf("make %s readable by all: %w", p, err)
			}
			return nil
		}
		if err := os.Chmod(p, want); err != nil {
			return fmt.Errorf("make %s readable by all: %w", p, err)
		}
		return nil
	})
}

// ownCopy replaces the file p, which has other names, by a copy of its
// own with mode perm, so that the other names keep theirs.
func ownCopy(p string, perm fs.FileMode) error {
	in, err := os.Open(p)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.CreateTemp(filepath.Dir(p), ".cudaenv-copy-*")
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Chmod(perm)
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(out.Name(), p)
	}
	if err != nil {
		os.Remove(out.Name())
	}
	return err
}
