package filelist

import (
	"context"
	"crypto/sha256"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// Sums are the sha256 of files an install wrote or linked, by inode, as
// the extraction knew them (hashed as written, or from a wheel's RECORD,
// or from the cache's index): Build takes a file's sum from here rather
// than reading it again. A sum is believed only for the inode at the
// size and mtime it was given with. Safe for concurrent use; a nil *Sums
// holds nothing.
type Sums struct {
	mu sync.Mutex
	m  map[sumKey]sumVal
}

type sumKey struct{ dev, ino uint64 }

type sumVal struct {
	size, mtime int64
	sum         [sha256.Size]byte
}

// NewSums is an empty set of sums.
func NewSums() *Sums { return &Sums{m: map[sumKey]sumVal{}} }

// Add records the sum of the file fi describes (a stat of it once
// written whole).
func (s *Sums) Add(fi fs.FileInfo, sum [sha256.Size]byte) {
	if s == nil {
		return
	}
	k, size, mtime, ok := statKey(fi)
	if !ok {
		return
	}
	s.mu.Lock()
	s.m[k] = sumVal{size, mtime, sum}
	s.mu.Unlock()
}

func (s *Sums) get(fi fs.FileInfo) ([sha256.Size]byte, bool) {
	if s == nil {
		return [sha256.Size]byte{}, false
	}
	k, size, mtime, ok := statKey(fi)
	if !ok {
		return [sha256.Size]byte{}, false
	}
	s.mu.Lock()
	v, ok := s.m[k]
	s.mu.Unlock()
	return v.sum, ok && v.size == size && v.mtime == mtime
}

type sumsKey struct{}

// WithSums is ctx carrying s, for the extraction an install runs under it.
func WithSums(ctx context.Context, s *Sums) context.Context {
	return context.WithValue(ctx, sumsKey{}, s)
}

// SumsFrom is the Sums ctx carries, nil for none.
func SumsFrom(ctx context.Context) *Sums {
	s, _ := ctx.Value(sumsKey{}).(*Sums)
	return s
}

// Build lists the tree at root, each file's sum from sums where it has
// it and hashed otherwise; names for which skip is true (the receipt,
// the list itself) are left out. It returns how many bytes it hashed.
func Build(root string, sums *Sums, skip func(rel string) bool) (*List, int64, error) {
	top, err := os.Lstat(root)
	if err != nil {
		return nil, 0, err
	}
	dev, _ := device(top)
	l := &List{Dev: dev}
	var hashed int64
	buf := make([]byte, 256<<10)
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if skip != nil && skip(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		e := Entry{Path: rel, Perm: permOf(fi.Mode())}
		e.Ino, e.Mtime, e.Ctime = fingerprint(fi)
		switch {
		case fi.IsDir():
			e.Type = Dir
		case fi.Mode()&fs.ModeSymlink != 0:
			e.Type = Link
			if e.Target, err = os.Readlink(p); err != nil {
				return err
			}
			e.Size = int64(len(e.Target))
		case fi.Mode().IsRegular():
			e.Type, e.Size = File, fi.Size()
			if nlink(fi) > 1 {
				l.shared++
			}
			sum, ok := sums.get(fi)
			if !ok {
				if sum, err = hashFile(p, buf); err != nil {
					return err
				}
				hashed += e.Size
			}
			e.SHA256 = sum
		default:
			return &fs.PathError{Op: "list", Path: p, Err: errNotListable}
		}
		l.Entries = append(l.Entries, e)
		return nil
	})
	if err != nil {
		return nil, hashed, err
	}
	return l, hashed, nil
}

// hashFile is the sha256 of the regular file p, followed by no link.
func hashFile(p string, buf []byte) ([sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	f, err := openNoFollow(p)
	if err != nil {
		return sum, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.CopyBuffer(h, struct{ io.Reader }{f}, buf); err != nil {
		return sum, err
	}
	copy(sum[:], h.Sum(nil))
	return sum, nil
}
