// Package filelist is the list of every file, folder and symlink of an
// installed tree: its type, mode, size and sha256 (a symlink's target),
// and the stat fingerprint it had once installed (inode, mtime, ctime, on
// one device). The store writes it beside an entry's receipt; Check
// compares a tree with it, by fingerprint (a stat a file: a write, chmod,
// delete or replacement changes the mtime, mode, ctime or inode) or, in
// full, by hashing every file again.
//
// The list is a text file, one line per entry, in the order a walk of the
// tree meets them (a folder before what it holds), so that checking it
// opens each folder once. Decode is strict: a list that does not parse,
// or names a path that is not a clean relative one, is refused whole.
package filelist

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Name is the list's file name in an entry, beside receipt.json: a name
// only cudaenv writes (rootfs.Owned), so no archive can ship one.
const Name = ".cudaenv-files"

// MaxSize bounds a list read back: a full CUDA toolkit has about 6000
// entries, 700 KiB.
const MaxSize = 64 << 20

const header = "cudaenv-files 1"

// Type is what an entry is.
type Type byte

const (
	File Type = 'f'
	Dir  Type = 'd'
	Link Type = 'l'
)

// Entry is one file, folder or symlink of a tree.
type Entry struct {
	Path   string // slash path relative to the tree
	Type   Type
	Perm   uint32 // the mode's permission bits, setuid, setgid and sticky (07777)
	Size   int64  // a file's bytes, a link's target length
	SHA256 [sha256.Size]byte
	Target string // a link's
	Ino    uint64
	Mtime  int64 // nanoseconds
	Ctime  int64
}

// List is a tree's entries, on device Dev.
type List struct {
	Dev     uint64
	Entries []Entry

	shared int // Build's: files that had other names
}

// Shared counts the files that had other names (hard links) when Build
// listed them; 0 for a list read back.
func (l *List) Shared() int { return l.shared }

// Files counts the regular files.
func (l *List) Files() int {
	n := 0
	for i := range l.Entries {
		if l.Entries[i].Type == File {
			n++
		}
	}
	return n
}

// Bytes is the regular files' size.
func (l *List) Bytes() int64 {
	var n int64
	for i := range l.Entries {
		if l.Entries[i].Type == File {
			n += l.Entries[i].Size
		}
	}
	return n
}

// Encode writes the list.
func (l *List) Encode() []byte {
	b := make([]byte, 0, 64+len(l.Entries)*160)
	b = append(b, header...)
	b = append(b, ' ')
	b = strconv.AppendUint(b, l.Dev, 10)
	b = append(b, '\n')
	for i := range l.Entries {
		e := &l.Entries[i]
		b = append(b, byte(e.Type), ' ')
		b = strconv.AppendUint(b, uint64(e.Perm), 8)
		b = append(b, ' ')
		b = strconv.AppendInt(b, e.Size, 10)
		b = append(b, ' ')
		switch e.Type {
		case File:
			b = hex.AppendEncode(b, e.SHA256[:])
		case Link:
			b = strconv.AppendQuote(b, e.Target)
		default:
			b = append(b, '-')
		}
		b = append(b, ' ')
		b = strconv.AppendUint(b, e.Ino, 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, e.Mtime, 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, e.Ctime, 10)
		b = append(b, ' ')
		if plain(e.Path) {
			b = append(b, e.Path...)
		} else {
			b = strconv.AppendQuote(b, e.Path)
		}
		b = append(b, '\n')
	}
	return b
}

// plain reports whether a path can be written as it is: printable UTF-8
// that does not start with a quote.
func plain(p string) bool {
	if p == "" || p[0] == '"' || !utf8.ValidString(p) {
		return false
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}

// Decode reads a list strictly: its header, then entries of known types
// with clean, distinct relative paths in walk order, each in a folder
// listed before it.
func Decode(data []byte) (*List, error) {
	if len(data) > MaxSize {
		return nil, errors.New("file list too large")
	}
	// One string for the whole list: each entry's path is a piece of it.
	text := string(data)
	line, rest, ok := strings.Cut(text, "\n")
	h, dev, _ := strings.Cut(line, " 1 ")
	if !ok || h+" 1" != header {
		return nil, errors.New("not a cudaenv file list (format 1)")
	}
	d, err := strconv.ParseUint(dev, 10, 64)
	if err != nil {
		return nil, errors.New("file list: bad device")
	}
	l := &List{Dev: d, Entries: make([]Entry, 0, strings.Count(rest, "\n"))}
	dirs := map[string]bool{".": true}
	prev := ""
	for n := 2; len(rest) > 0; n++ {
		line, rest, ok = strings.Cut(rest, "\n")
		if !ok {
			return nil, fmt.Errorf("file list line %d: no end of line", n)
		}
		e, err := decodeEntry(line)
		if err != nil {
			return nil, fmt.Errorf("file list line %d: %w", n, err)
		}
		if len(l.Entries) > 0 && !walkOrder(prev, e.Path) {
			return nil, fmt.Errorf("file list line %d: %s is out of order", n, strconv.Quote(e.Path))
		}
		if !dirs[path.Dir(e.Path)] {
			return nil, fmt.Errorf("file list line %d: %s is in no folder listed before it", n, strconv.Quote(e.Path))
		}
		if e.Type == Dir {
			dirs[e.Path] = true
		}
		prev = e.Path
		l.Entries = append(l.Entries, e)
	}
	return l, nil
}

func decodeEntry(s string) (Entry, error) {
	var e Entry
	field := func() (string, error) {
		f, r, ok := strings.Cut(s, " ")
		if !ok {
			return "", errors.New("too few fields")
		}
		s = r
		return f, nil
	}
	t, err := field()
	if err != nil {
		return e, err
	}
	if len(t) != 1 || (Type(t[0]) != File && Type(t[0]) != Dir && Type(t[0]) != Link) {
		return e, fmt.Errorf("unknown type %q", t)
	}
	e.Type = Type(t[0])
	f, err := field()
	if err != nil {
		return e, err
	}
	perm, err := strconv.ParseUint(f, 8, 32)
	if err != nil || perm > 0o7777 {
		return e, errors.New("bad mode")
	}
	e.Perm = uint32(perm)
	if f, err = field(); err != nil {
		return e, err
	}
	if e.Size, err = strconv.ParseInt(f, 10, 64); err != nil || e.Size < 0 {
		return e, errors.New("bad size")
	}
	switch e.Type {
	case File:
		if f, err = field(); err != nil {
			return e, err
		}
		if len(f) != 2*sha256.Size {
			return e, errors.New("bad sha256")
		}
		if _, err := hex.Decode(e.SHA256[:], []byte(f)); err != nil {
			return e, errors.New("bad sha256")
		}
	case Link:
		q, err := strconv.QuotedPrefix(s)
		if err != nil {
			return e, errors.New("bad link target")
		}
		e.Target, _ = strconv.Unquote(q)
		s = strings.TrimPrefix(s[len(q):], " ")
		if e.Target == "" || strings.ContainsRune(e.Target, 0) || int64(len(e.Target)) != e.Size {
			return e, errors.New("bad link target")
		}
	default:
		if f, err = field(); err != nil || f != "-" {
			return e, errors.New("a folder has no sum")
		}
	}
	if f, err = field(); err != nil {
		return e, err
	}
	if e.Ino, err = strconv.ParseUint(f, 10, 64); err != nil {
		return e, errors.New("bad inode")
	}
	if f, err = field(); err != nil {
		return e, err
	}
	if e.Mtime, err = strconv.ParseInt(f, 10, 64); err != nil {
		return e, errors.New("bad mtime")
	}
	if f, err = field(); err != nil {
		return e, err
	}
	if e.Ctime, err = strconv.ParseInt(f, 10, 64); err != nil {
		return e, errors.New("bad ctime")
	}
	p := s
	if strings.HasPrefix(p, `"`) {
		if p, err = strconv.Unquote(p); err != nil {
			return e, errors.New("bad path")
		}
	}
	if !CleanPath(p) {
		return e, fmt.Errorf("bad path %s", strconv.Quote(p))
	}
	e.Path = p
	return e, nil
}

// CleanPath reports whether p is a clean relative slash path inside a
// tree: not empty, not absolute, no "." or ".." element, no NUL or
// backslash.
func CleanPath(p string) bool {
	if p == "" || p == "." || strings.ContainsAny(p, "\x00\\") || path.IsAbs(p) || path.Clean(p) != p {
		return false
	}
	return p != ".." && !strings.HasPrefix(p, "../")
}

// walkOrder reports whether a comes before b in a walk of a tree that
// lists each folder's names in byte order: as a byte comparison in which
// the separator sorts first.
func walkOrder(a, b string) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		ca, cb := a[i], b[i]
		if ca == cb {
			continue
		}
		if ca == '/' {
			return true
		}
		if cb == '/' {
			return false
		}
		return ca < cb
	}
	return len(a) < len(b)
}

// permOf is the bits of a mode a list keeps.
func permOf(m fs.FileMode) uint32 {
	p := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		p |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		p |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		p |= 0o1000
	}
	return p
}
