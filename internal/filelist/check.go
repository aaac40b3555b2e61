package filelist

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"path"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/cudaenv/cudaenv/internal/ledger"
)

// Kind is what Check found wrong with an entry.
type Kind int

const (
	Missing     Kind = iota + 1 // deleted
	Replaced                    // another file (another inode or type) at its name
	Resized                     // its size changed: truncated or appended to
	Modified                    // written: its mtime changed, or (hashed) its content
	ModeChanged                 // chmod
	Changed                     // only its ctime changed (a link, chmod or touch made and undone); its content was not read
	Added                       // a name the list does not have
	Unreadable                  // it could not be checked
)

// Problem is one entry of a tree that is not as listed.
type Problem struct {
	Path     string
	Type     Type // what the list has at Path (0 for an added name)
	Kind     Kind
	Was, Now string // what changed, for the message: modes, sizes
	// Dev, Ino and Nlink are the file at the name now (0 when there is
	// none): a file with other names (Nlink > 1) was changed for them too.
	Dev, Ino uint64
	Nlink    uint64
}

// Damage reports whether the problem is damage (something changed the
// tree) rather than a fingerprint that can no longer tell (Changed).
func (p Problem) Damage() bool { return p.Kind != Changed }

// InPlace reports whether the file at the name is the listed one changed
// where it is (every other name of it changed too), not a new one.
func (p Problem) InPlace() bool {
	return p.Kind == Resized || p.Kind == Modified || p.Kind == ModeChanged || p.Kind == Changed
}

// What is the problem in words: "deleted", "mode 0444 → 0644".
func (p Problem) What() string {
	switch p.Kind {
	case Missing:
		return "deleted"
	case Replaced:
		if p.Now != "" {
			return "replaced by " + p.Now
		}
		return "replaced"
	case Resized:
		return "size " + p.Was + " → " + p.Now
	case Modified:
		if p.Now != "" {
			return "modified (" + p.Now + ")"
		}
		return "modified"
	case ModeChanged:
		return "mode " + p.Was + " → " + p.Now
	case Changed:
		return "changed (its inode was touched: a link, chmod or touch); its content is unchecked"
	case Added:
		return "added (not installed by cudaenv)"
	}
	if p.Now != "" {
		return "unreadable (" + p.Now + ")"
	}
	return "unreadable"
}

func (p Problem) String() string { return p.Name() + ": " + p.What() }

// Name is the problem's path, with a slash after a folder's.
func (p Problem) Name() string {
	if p.Type == Dir {
		return p.Path + "/"
	}
	return p.Path
}

// Options say how far Check goes.
type Options struct {
	// Full hashes every file, whatever its fingerprint says.
	Full bool
	// HashChanged hashes the files whose only change is one the ledger
	// does not vouch for (Changed), and takes them as whole when their
	// content is.
	HashChanged bool
	// Ledger vouches for files whose fingerprint differs from the list's
	// but whose state it holds (see package ledger); nil vouches for none.
	Ledger *ledger.Ledger
	// Workers is how many goroutines stat and hash; <= 0 means one per
	// core, at most 4.
	Workers int
}

// Result is what Check found.
type Result struct {
	Problems []Problem // in the list's order, then added names
	Entries  int
	Hashed   int64 // bytes read
	// Vouch are files that were hashed and found as listed, as they are
	// now: recorded in the ledger, their fingerprints pass again.
	Vouch []ledger.State
	// Moved: the tree is on another device than it was listed on (copied
	// or moved), so no fingerprint holds; a full check tells.
	Moved bool
}

// Damaged is the problems that are damage (see Problem.Damage).
func (r *Result) Damaged() []Problem {
	var out []Problem
	for _, p := range r.Problems {
		if p.Damage() {
			out = append(out, p)
		}
	}
	return out
}

// ReadContent, when set, hears each file Check reads (a test hook).
var ReadContent func(rel string)

// Check compares the tree at root with the list: each entry is stat'ed
// (never through a symlink) and its type, mode, size and fingerprint
// compared; a file whose fingerprint differs but whose state the ledger
// holds with the listed sha256 passes. Folders whose mtime changed, and
// the top folder, are read for names the list does not have. With
// Options.Full every file is hashed too.
func Check(root string, l *List, o Options) (*Result, error) {
	w, err := openTree(root)
	if err != nil {
		return nil, err
	}
	dev := w.dev()
	w.close()
	res := &Result{Entries: len(l.Entries), Moved: dev != l.Dev}
	workers := o.Workers
	if workers <= 0 {
		workers = min(runtime.GOMAXPROCS(0), 4)
	}
	const block = 128
	blocks := (len(l.Entries) + block - 1) / block
	workers = max(1, min(workers, blocks))
	var (
		next    atomic.Int64
		mu      sync.Mutex
		rescan  []string // folders whose names changed
		firstEr error
		wg      sync.WaitGroup
	)
	perEntry := make([]*Problem, len(l.Entries))
	for range workers {
		wg.Go(func() {
			w, err := openTree(root)
			if err != nil {
				mu.Lock()
				firstEr = err
				mu.Unlock()
				return
			}
			defer w.close()
			c := checker{w: w, o: o, dev: l.Dev, moved: res.Moved, buf: nil}
			for {
				b := int(next.Add(1) - 1)
				if b >= blocks {
					break
				}
				for i := b * block; i < min((b+1)*block, len(l.Entries)); i++ {
					e := &l.Entries[i]
					p, scan := c.entry(e)
					perEntry[i] = p
					if scan {
						mu.Lock()
						rescan = append(rescan, e.Path)
						mu.Unlock()
					}
				}
			}
			mu.Lock()
			res.Hashed += c.hashed
			res.Vouch = append(res.Vouch, c.vouch...)
			mu.Unlock()
		})
	}
	wg.Wait()
	if firstEr != nil {
		return nil, firstEr
	}
	for _, p := range perEntry {
		if p != nil {
			res.Problems = append(res.Problems, *p)
		}
	}
	added, err := addedNames(root, l, append(rescan, "."))
	if err != nil {
		return nil, err
	}
	res.Problems = append(res.Problems, added...)
	return res, nil
}

// checker is one worker of Check.
type checker struct {
	w      *tree
	o      Options
	dev    uint64
	moved  bool
	buf    []byte
	hashed int64
	vouch  []ledger.State
}

// entry checks one entry; scan says that a folder's names changed.
func (c *checker) entry(e *Entry) (*Problem, bool) {
	st, err := c.w.lstat(e.Path)
	if err != nil {
		if isNotExist(err) {
			return &Problem{Path: e.Path, Type: e.Type, Kind: Missing}, false
		}
		return &Problem{Path: e.Path, Type: e.Type, Kind: Unreadable, Now: err.Error()}, false
	}
	prob := func(k Kind, was, now string) *Problem {
		return &Problem{Path: e.Path, Type: e.Type, Kind: k, Was: was, Now: now, Dev: st.dev, Ino: st.ino, Nlink: st.nlink}
	}
	if st.typ != e.Type {
		return prob(Replaced, "", typeName(st.typ)), false
	}
	same := !c.moved && st.ino == e.Ino
	switch e.Type {
	case Dir:
		if !same && !c.moved {
			return prob(Replaced, "", "another folder"), false
		}
		if st.perm != e.Perm {
			return prob(ModeChanged, octal(e.Perm), octal(st.perm)), false
		}
		return nil, c.moved || st.mtime != e.Mtime
	case Link:
		if same && st.ctime == e.Ctime && !c.o.Full {
			return nil, false
		}
		target, err := c.w.readlink(e.Path)
		if err != nil {
			return prob(Unreadable, "", err.Error()), false
		}
		if target != e.Target {
			return prob(Replaced, "", "a link to "+strconv.Quote(target)), false
		}
		return nil, false
	}
	if st.perm != e.Perm {
		return prob(ModeChanged, octal(e.Perm), octal(st.perm)), false
	}
	if st.size != e.Size {
		return prob(Resized, strconv.FormatInt(e.Size, 10), strconv.FormatInt(st.size, 10)), false
	}
	now := ledger.State{Dev: st.dev, Ino: st.ino, Size: st.size, Mtime: st.mtime, Ctime: st.ctime, Mode: st.mode, SHA256: e.SHA256}
	fpHolds := same && st.mtime == e.Mtime && st.ctime == e.Ctime
	vouched := fpHolds || c.o.Ledger.Vouches(now)
	if vouched && !c.o.Full {
		return nil, false
	}
	// What the fingerprint alone says, should the content not be read.
	var verdict *Problem
	switch {
	case vouched:
	case !same:
		verdict = prob(Replaced, "", "")
		if c.moved {
			verdict = prob(Changed, "", "")
		}
	case st.mtime != e.Mtime:
		verdict = prob(Modified, "", "")
	default:
		verdict = prob(Changed, "", "")
	}
	if !c.o.Full && !(c.o.HashChanged && verdict.Kind == Changed) {
		return verdict, false
	}
	sum, n, err := c.hash(e.Path, st.ino)
	c.hashed += n
	if err != nil {
		return prob(Unreadable, "", err.Error()), false
	}
	if sum != e.SHA256 {
		if verdict != nil && verdict.Kind == Replaced {
			return verdict, false
		}
		return prob(Modified, "", "its content differs"), false
	}
	if !fpHolds {
		c.vouch = append(c.vouch, now)
	}
	return nil, false
}

// hash reads the file rel, which must still be inode ino.
func (c *checker) hash(rel string, ino uint64) ([sha256.Size]byte, int64, error) {
	var sum [sha256.Size]byte
	if ReadContent != nil {
		ReadContent(rel)
	}
	f, err := c.w.open(rel)
	if err != nil {
		return sum, 0, err
	}
	defer f.Close()
	if got, err := fileIno(f); err != nil || got != ino {
		return sum, 0, errors.New("replaced while it was read")
	}
	if c.buf == nil {
		c.buf = make([]byte, 256<<10)
	}
	h := sha256.New()
	n, err := io.CopyBuffer(h, struct{ io.Reader }{f}, c.buf)
	if err != nil {
		return sum, n, err
	}
	copy(sum[:], h.Sum(nil))
	return sum, n, nil
}

// addedNames reads the folders dirs ("." is the top) and returns the
// names in them the list does not have (the top's own files, the receipt
// and the list, aside).
func addedNames(root string, l *List, dirs []string) ([]Problem, error) {
	slices.Sort(dirs)
	dirs = slices.Compact(dirs)
	want := map[string]bool{}
	for _, d := range dirs {
		want[d] = true
	}
	have := map[string]map[string]bool{}
	for _, d := range dirs {
		have[d] = map[string]bool{}
	}
	for i := range l.Entries {
		p := l.Entries[i].Path
		if d := path.Dir(p); want[d] {
			have[d][path.Base(p)] = true
		}
	}
	w, err := openTree(root)
	if err != nil {
		return nil, err
	}
	defer w.close()
	var out []Problem
	for _, d := range dirs {
		names, err := w.names(d)
		if err != nil {
			continue // gone or replaced: its own entry says so
		}
		slices.Sort(names)
		for _, n := range names {
			if have[d][n] || (d == "." && ownedTop(n)) {
				continue
			}
			rel := n
			if d != "." {
				rel = d + "/" + n
			}
			out = append(out, Problem{Path: rel, Kind: Added})
		}
	}
	return out, nil
}

// ownedTop: the names cudaenv writes at an entry's top beside its files.
func ownedTop(n string) bool {
	return n == "receipt.json" || (len(n) >= 8 && n[:8] == ".cudaenv")
}

func octal(p uint32) string { return fmt.Sprintf("%04o", p) }

func typeName(t Type) string {
	switch t {
	case File:
		return "a file"
	case Dir:
		return "a folder"
	case Link:
		return "a symlink"
	}
	return "something else"
}

var errNotListable = errors.New("neither a file, a folder nor a symlink")
