package fetch

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/cudaenv/cudaenv/internal/filelist"
	"github.com/cudaenv/cudaenv/internal/ledger"
	"github.com/cudaenv/cudaenv/internal/rootfs"
)

// The cache of unpacked trees (UnpackedFolder) holds each archive, a
// wheel or an NVIDIA redist archive, unpacked once: unpacked/<its
// sha256>/ holds tree/, laid out as the archive is installed, and
// index.json, which lists every file with its size and sha256 and every
// symlink with its target. Its files are read-only, and installing the
// same archive again gives the store copy-on-write clones of them where
// the file system can, hard links otherwise, not decoded copies.
//
// An entry is used only if this user made it: the folders and files are
// this user's and writable by nobody else, and so is the index. A file is
// linked without its content being read when the ledger (package ledger)
// holds its fingerprint as it is now: cudaenv checked it and nothing has
// touched it since. One whose fingerprint the ledger does not hold is
// hashed, and then so is every file of its entry; an entry that fails a
// check is reported through Notice once, removed, and the archive is
// unpacked again.

// unpackedFormat is index.json's format; an entry of another is refused.
const unpackedFormat = 1

// maxUnpackedIndex bounds index.json (a full toolkit archive's is 1 MiB).
const maxUnpackedIndex = 16 << 20

// UnpackedIndex is an entry's index.json.
type UnpackedIndex struct {
	Format int `json:"format"`
	// Archive is the archive's sha256 (named "wheel": wheels came first).
	Archive string `json:"wheel"`
	// Project and Version name what the archive holds: a wheel's project
	// and version, a redist archive's component and version.
	Project string         `json:"project"`
	Version string         `json:"version"`
	Files   []UnpackedFile `json:"files"`
	Links   []UnpackedLink `json:"links"`
	// Dirs are the archive's folders that hold no file or link.
	Dirs []string `json:"dirs,omitempty"`
}

// UnpackedFile is one file of an entry.
type UnpackedFile struct {
	Path   string `json:"path"`
	Exec   bool   `json:"exec,omitempty"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// UnpackedLink is one symlink of an entry.
type UnpackedLink struct {
	Path   string `json:"path"`
	Target string `json:"target"`
}

// RefusedEntry is why an entry of the cache is not used.
type RefusedEntry struct{ Why string }

func (e *RefusedEntry) Error() string { return e.Why }

// Refuse is a *RefusedEntry.
func Refuse(format string, args ...any) error {
	return &RefusedEntry{fmt.Sprintf(format, args...)}
}

// UnpackedCache is the cache of unpacked trees in a download cache folder.
type UnpackedCache struct {
	Dir    string            // a Client's CacheDir
	Notice func(line string) // hears of an entry refused
	// OwnFiles: the store must own its files (a system store, which its
	// users check on their own): an entry is cloned or copied into it,
	// never linked, and an archive not in the cache is unpacked straight
	// into it.
	OwnFiles bool

	// refused holds the archives whose entry a reuse refused: unpacked
	// again, every file is hashed as written (should a wheel's RECORD be
	// what is wrong, it is said once).
	refused *sync.Map
}

// NewUnpackedCache is the cache of unpacked trees in the cache folder dir.
func NewUnpackedCache(dir string, notice func(string)) *UnpackedCache {
	return &UnpackedCache{Dir: dir, Notice: notice, refused: &sync.Map{}}
}

func (c *UnpackedCache) folder() string { return filepath.Join(c.Dir, UnpackedFolder) }

// Ledger is the ledger of the cache's download folder.
func (c *UnpackedCache) Ledger() *ledger.Ledger { return ledger.Open(c.Dir) }

// entryLocks holds a mutex per cache entry (by path) that Lookup's
// caller holds: two reuses linking the same files at once would each find
// the other's ctime.
var entryLocks sync.Map

// Lookup returns the entry of the archive sha, locked for this process
// until unlock is called; ok is false for none, or another user's in a
// shared cache (not for this user, and nothing to report each time).
func (c *UnpackedCache) Lookup(sha string) (entry string, unlock func(), ok bool) {
	if c == nil || c.Dir == "" || !ValidSHA256(sha) || runtime.GOOS != "linux" {
		return "", nil, false
	}
	entry = filepath.Join(c.folder(), sha)
	fi, err := os.Lstat(entry)
	if err != nil || !OwnedByMe(fi) {
		return "", nil, false
	}
	mu, _ := entryLocks.LoadOrStore(entry, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	return entry, mu.(*sync.Mutex).Unlock, true
}

// WasRefused reports whether a reuse of the archive sha was refused by
// this process: its files are to be hashed as they are unpacked again.
func (c *UnpackedCache) WasRefused(sha string) bool {
	if c.refused == nil {
		return false
	}
	_, ok := c.refused.Load(sha)
	return ok
}

// Refused takes a refused entry out of the cache and says so once: "the
// cache's unpacked copy of WHAT was changed since it was made (WHY);
// unpacking the wheel again".
func (c *UnpackedCache) Refused(entry, sha, what, archive string, re *RefusedEntry) {
	c.drop(entry)
	if c.refused != nil {
		c.refused.Store(sha, true)
	}
	if c.Notice != nil {
		c.Notice(fmt.Sprintf("the cache's unpacked copy of %s was changed since it was made (%s); unpacking the %s again", what, re.Why, archive))
	}
}

// drop takes a refused entry out of the cache: renamed into a held work
// folder first, so no other install finds it half-removed. An entry that
// is not this user's is left where it is, unused.
func (c *UnpackedCache) drop(entry string) {
	if fi, err := os.Lstat(entry); err != nil || !OwnedByMe(fi) {
		return
	}
	work, done, err := NewWorkDir(c.Dir, UnpackPrefix)
	if err != nil {
		return
	}
	defer done()
	if os.Rename(entry, filepath.Join(work, "refused")) != nil {
		os.RemoveAll(entry)
	}
}

// UsableFor reports whether the cache can take a new entry for sha that
// dest can be given clones or links of: the cache's unpacked folder (made
// if missing) is this user's and writable by nobody else, it has no entry
// for sha yet, and it is on dest's file system (otherwise every file
// would be written twice). Never for a tree that owns its files.
func (c *UnpackedCache) UsableFor(dest, sha string) bool {
	if c == nil || c.OwnFiles || c.Dir == "" || !ValidSHA256(sha) || runtime.GOOS != "linux" {
		return false
	}
	dir := c.folder()
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return false
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return false
	}
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() || !OwnedByMe(fi) || fi.Mode().Perm()&0o022 != 0 {
		return false
	}
	di, err := os.Stat(dest)
	if err != nil || deviceOf(fi) != deviceOf(di) {
		return false
	}
	_, err = os.Lstat(filepath.Join(dir, sha))
	return errors.Is(err, fs.ErrNotExist)
}

// NewEntry unpacks an archive into a new entry of the cache: fill writes
// the tree (a new, empty folder) and returns its index; the entry is then
// moved into place. It returns the entry (another install's, when one
// made it meanwhile) and done, which frees the work folder once the
// entry's files are placed.
func (c *UnpackedCache) NewEntry(sha string, fill func(tree string) (*UnpackedIndex, error)) (entry string, idx *UnpackedIndex, done func(), err error) {
	work, done, err := NewWorkDir(c.Dir, UnpackPrefix)
	if err != nil {
		return "", nil, nil, err
	}
	entry = filepath.Join(work, "entry")
	tree := filepath.Join(entry, "tree")
	if err := os.MkdirAll(tree, 0o755); err != nil {
		done()
		return "", nil, nil, err
	}
	if idx, err = fill(tree); err != nil {
		done()
		return "", nil, nil, err
	}
	idx.Format, idx.Archive = unpackedFormat, sha
	if idx.Files == nil {
		idx.Files = []UnpackedFile{}
	}
	if idx.Links == nil {
		idx.Links = []UnpackedLink{}
	}
	data, err := json.Marshal(idx)
	if err == nil {
		err = os.WriteFile(filepath.Join(entry, "index.json"), data, 0o444)
	}
	if err != nil {
		done()
		return "", nil, nil, err
	}
	final := filepath.Join(c.folder(), sha)
	if err := os.Rename(entry, final); err == nil {
		entry = final
	} // else another install made it meanwhile: place ours, then drop it
	return entry, idx, done, nil
}

// IndexRules are what names and link targets an entry's index may hold,
// beyond clean relative paths that cudaenv does not own.
type IndexRules struct {
	Name func(rel string) error
	Link func(rel, target string) error
}

// ReadIndex reads and checks an entry's index: the entry is this user's,
// writable by nobody else, for this very archive, and every name and
// target in it passes rules. What is wrong is a *RefusedEntry.
func (c *UnpackedCache) ReadIndex(entry, sha string, rules IndexRules) (*UnpackedIndex, error) {
	for _, dir := range []string{c.folder(), entry, filepath.Join(entry, "tree")} {
		fi, err := os.Lstat(dir)
		if err != nil {
			return nil, Refuse("%s: %v", filepath.Base(dir), err)
		}
		if !fi.IsDir() || !OwnedByMe(fi) || fi.Mode().Perm()&0o022 != 0 {
			return nil, Refuse("%s is not a folder of this user's that only this user can write", filepath.Base(dir))
		}
	}
	f, err := os.OpenFile(filepath.Join(entry, "index.json"), os.O_RDONLY|oNoFollow|oNonBlock, 0)
	if err != nil {
		return nil, Refuse("index.json: %v", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || !OwnedByMe(fi) || fi.Mode().Perm()&0o222 != 0 || fi.Size() > maxUnpackedIndex {
		return nil, Refuse("index.json is not a read-only file of this user's")
	}
	data, err := io.ReadAll(io.LimitReader(f, maxUnpackedIndex+1))
	if err != nil {
		return nil, Refuse("index.json: %v", err)
	}
	idx, err := DecodeUnpackedIndex(data, rules)
	if err != nil {
		return nil, Refuse("index.json: %v", err)
	}
	if idx.Archive != sha {
		return nil, Refuse("index.json is for another archive")
	}
	return idx, nil
}

// DecodeUnpackedIndex parses an index strictly: known fields only, every
// path a clean relative name that rules accept and cudaenv does not own,
// no name twice.
func DecodeUnpackedIndex(data []byte, rules IndexRules) (*UnpackedIndex, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var idx UnpackedIndex
	if err := dec.Decode(&idx); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("data after the index")
	}
	if idx.Format != unpackedFormat {
		return nil, fmt.Errorf("format %d, want %d", idx.Format, unpackedFormat)
	}
	seen := map[string]bool{}
	name := func(p string) error {
		if !filelist.CleanPath(p) || (rules.Name != nil && rules.Name(p) != nil) {
			return fmt.Errorf("bad name %s", rootfs.Show(p))
		}
		if rootfs.Owned(p) {
			return fmt.Errorf("%s is a name only cudaenv writes", rootfs.Show(p))
		}
		if seen[p] {
			return fmt.Errorf("%s listed twice", rootfs.Show(p))
		}
		seen[p] = true
		return nil
	}
	for _, f := range idx.Files {
		if err := name(f.Path); err != nil {
			return nil, err
		}
		if f.Size < 0 || !ValidSHA256(f.SHA256) {
			return nil, fmt.Errorf("%s: bad size or sha256", rootfs.Show(f.Path))
		}
	}
	link := rules.Link
	if link == nil {
		link = rootfs.CheckLinkTarget
	}
	for _, l := range idx.Links {
		if err := name(l.Path); err != nil {
			return nil, err
		}
		if err := link(l.Path, l.Target); err != nil {
			return nil, fmt.Errorf("%s: %w", rootfs.Show(l.Path), err)
		}
	}
	for _, d := range idx.Dirs {
		if err := name(d); err != nil {
			return nil, err
		}
	}
	return &idx, nil
}

// ValidSHA256 reports whether s is a sha256 in lower-case hex.
func ValidSHA256(s string) bool {
	if len(s) != 2*sha256.Size {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// PlaceTarget is where Place puts an entry's files: a tree, the name each
// file is first written at (its own, or a temporary name), and what is
// done once it is there.
type PlaceTarget interface {
	Tree() *rootfs.Tree
	Name(rel string) string
	Commit(rel, name string) error
}

// directTarget writes each file at its own name.
type directTarget struct{ t *rootfs.Tree }

// DirectTarget is a PlaceTarget that writes each file at its own name in t.
func DirectTarget(t *rootfs.Tree) PlaceTarget    { return directTarget{t} }
func (d directTarget) Tree() *rootfs.Tree        { return d.t }
func (directTarget) Name(rel string) string      { return rel }
func (directTarget) Commit(string, string) error { return nil }

// ReadHook, when set, hears each file of the cache whose content Place
// reads (tests count them).
var ReadHook func(rel string)

// Place puts an entry's files into to: each cloned or linked (copied
// where neither can be made, or where the tree owns its files), with the
// sum the index gives told to the filelist.Sums ctx carries. With verify
// (a reuse), every file is first checked against the index (this user's,
// read-only, its size) and its fingerprint against the ledger: a file the
// ledger vouches for is placed without its content being read; one it
// does not is hashed, and then so is every file of the entry, since a
// fingerprint that changed means something touched the entry. A file that
// fails is a *RefusedEntry. The state each of the entry's files has once
// placed is returned, in the order of idx.Files (zero for a file not
// placed), also with an error, and with record written to the ledger (a
// caller that changes them again records them itself).
// Symlinks are the caller's, once Place has returned.
func (c *UnpackedCache) Place(ctx context.Context, entry string, idx *UnpackedIndex, to PlaceTarget, verify, record bool) ([]ledger.State, error) {
	sr, err := rootfs.OpenRead(filepath.Join(entry, "tree"))
	if err != nil {
		return nil, Refuse("tree: %v", err)
	}
	defer sr.Close()
	o := placeOptions{ledger: c.Ledger(), own: c.OwnFiles, sums: filelist.SumsFrom(ctx), to: to}
	// Largest first, so that the last to finish is a small one.
	order := make([]int, len(idx.Files))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(idx.Files[b].Size, idx.Files[a].Size) })
	states := make([]ledger.State, len(order))
	read := make([]bool, len(order))
	var unvouched atomic.Bool
	err = parallel(ctx, len(order), func(k int, buf []byte) error {
		i := order[k]
		p, err := placeFile(ctx, sr, idx.Files[i], verify, o, buf)
		states[i], read[i] = p.state, p.read
		if p.unvouched {
			unvouched.Store(true)
		}
		return err
	})
	if err == nil && unvouched.Load() {
		// A full check of the entry: the files placed on their
		// fingerprint's word are read too.
		err = parallel(ctx, len(order), func(k int, buf []byte) error {
			i := order[k]
			if read[i] {
				return nil
			}
			return recheck(ctx, sr, idx.Files[i], states[i].Ino, buf)
		})
	}
	// What was placed stays vouched for, whether the rest was or not (a
	// failed install's tree is discarded, and its links go again).
	placedStates := states[:0:0]
	for _, st := range states {
		if st.Ino != 0 {
			placedStates = append(placedStates, st)
		}
	}
	if record {
		_ = o.ledger.Record(placedStates)
	}
	if err != nil {
		return states, err
	}
	for _, d := range idx.Dirs {
		if err := to.Tree().MkdirAll(d); err != nil {
			return nil, fmt.Errorf("folder %s: %w", rootfs.Show(d), err)
		}
	}
	return states, nil
}

// placeOptions are how Place places files.
type placeOptions struct {
	ledger *ledger.Ledger
	own    bool
	sums   *filelist.Sums
	to     PlaceTarget
}

// parallel runs f for 0..n-1 on one worker a core, each with its own copy
// buffer; the first error stops the others.
func parallel(ctx context.Context, n int, f func(i int, buf []byte) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next     atomic.Int64
		once     sync.Once
		firstErr error
		wg       sync.WaitGroup
	)
	for range min(runtime.GOMAXPROCS(0), max(n, 1)) {
		wg.Go(func() {
			bp := copyBufs.Get().(*[]byte)
			defer copyBufs.Put(bp)
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := f(i, *bp); err != nil {
					once.Do(func() { firstErr = err; cancel() })
					return
				}
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return context.Cause(ctx)
}

// placed is what placeFile did with a file.
type placed struct {
	state     ledger.State // the cache's file once placed, with its sum
	read      bool         // its content was read and found as indexed
	unvouched bool         // a reuse found its fingerprint not the ledger's
}

// placeFile clones, links or copies one file of an entry.
func placeFile(ctx context.Context, sr *rootfs.Tree, want UnpackedFile, verify bool, o placeOptions, buf []byte) (placed, error) {
	var sum [sha256.Size]byte
	hex.Decode(sum[:], []byte(want.SHA256))
	if t := o.to.Tree(); !o.own && !t.CanClone() {
		if p, done, err := linkByName(sr, want, verify, o, sum); done {
			return p, err
		}
	}
	var p placed
	f, err := sr.OpenFile(want.Path)
	if err != nil {
		return p, Refuse("%s: %v", rootfs.Show(want.Path), err)
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return p, Refuse("%s: %v", rootfs.Show(want.Path), err)
	case !fi.Mode().IsRegular() || !OwnedByMe(fi):
		return p, Refuse("%s is not a file of this user's", rootfs.Show(want.Path))
	case fi.Mode().Perm()&0o222 != 0:
		return p, Refuse("%s is writable", rootfs.Show(want.Path))
	case fi.Size() != want.Size:
		return p, Refuse("%s is %d bytes, not %d", rootfs.Show(want.Path), fi.Size(), want.Size)
	}
	if verify {
		if st, ok := ledger.StateOf(fi, sum); !ok || !o.ledger.Vouches(st) {
			p.unvouched = true
			if err := checkSum(ctx, f, want, buf); err != nil {
				return p, err
			}
			p.read = true
		}
	}
	perm := fs.FileMode(0o444)
	if want.Exec {
		perm = 0o555
	}
	if o.own {
		perm |= 0o200
	}
	t := o.to.Tree()
	name := o.to.Name(want.Path)
	clone, err := t.CloneFile(name, f, perm)
	linked := false
	if errors.Is(err, rootfs.ErrNoClone) && !o.own {
		err, linked = t.LinkFile(name, f), true
	}
	switch {
	case err == nil:
		// A clone or a link: the store's file has the cache's content.
		if err := o.to.Commit(want.Path, name); err != nil {
			return p, err
		}
		// The state once committed: a rename changes a file's ctime too.
		after, err := f.Stat()
		if err != nil {
			return p, err
		}
		if linked {
			o.sums.Add(after, sum) // the store's file is this one
		} else {
			o.sums.Add(clone, sum)
		}
		p.state, _ = ledger.StateOf(after, sum)
		return p, nil
	case !errors.Is(err, rootfs.ErrNoLink) && !errors.Is(err, rootfs.ErrNoClone):
		return p, err
	}
	// Another file system, or a tree that owns its files: a copy of its
	// own, writable as any installed file.
	perm |= 0o200
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return p, err
	}
	out, err := t.CreateFile(name, perm)
	if err != nil {
		return p, err
	}
	if ReadHook != nil {
		ReadHook(want.Path)
	}
	h := sha256.New()
	_, err = io.CopyBuffer(io.MultiWriter(fileOnly{out}, h), ctxReader{ctx, f}, buf)
	if err == nil {
		if ofi, serr := out.Stat(); serr == nil {
			o.sums.Add(ofi, sum)
		}
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return p, fmt.Errorf("%s: %w", rootfs.Show(want.Path), err)
	}
	if !bytes.Equal(h.Sum(nil), sum[:]) {
		return p, Refuse("%s: sha256 mismatch", rootfs.Show(want.Path))
	}
	p.state, _ = ledger.StateOf(fi, sum)
	p.read = true
	return p, o.to.Commit(want.Path, name)
}

// linkByName is placeFile where the file is to be hard-linked and needs
// no reading (a new entry's, or one whose fingerprint the ledger holds):
// a stat, a link made by name and a stat of the new name, which must be
// the file checked. done is false where placeFile's own way is needed
// (the file must be read, cannot be linked, or fails a check it reports).
func linkByName(sr *rootfs.Tree, want UnpackedFile, verify bool, o placeOptions, sum [sha256.Size]byte) (p placed, done bool, err error) {
	fi, err := sr.Lstat(want.Path)
	if err != nil || !fi.Mode().IsRegular() || !OwnedByMe(fi) || fi.Mode().Perm()&0o222 != 0 || fi.Size() != want.Size {
		return p, false, nil
	}
	st, ok := ledger.StateOf(fi, sum)
	if !ok || (verify && !o.ledger.Vouches(st)) {
		return p, false, nil
	}
	t := o.to.Tree()
	name := o.to.Name(want.Path)
	if err := t.LinkFrom(name, sr, want.Path); err != nil {
		if errors.Is(err, rootfs.ErrNoLink) {
			return p, false, nil
		}
		return p, true, err
	}
	got, err := t.Lstat(name)
	if err != nil {
		return p, true, err
	}
	if now, _ := ledger.StateOf(got, sum); now.Dev != st.Dev || now.Ino != st.Ino {
		t.Root().Remove(name)
		return p, true, Refuse("%s was replaced while it was linked", rootfs.Show(want.Path))
	}
	if err := o.to.Commit(want.Path, name); err != nil {
		return p, true, err
	}
	o.sums.Add(got, sum)
	p.state, _ = ledger.StateOf(got, sum)
	return p, true, nil
}

// recheck hashes a file of the entry placed on its fingerprint's word,
// which must still be inode ino.
func recheck(ctx context.Context, sr *rootfs.Tree, want UnpackedFile, ino uint64, buf []byte) error {
	f, err := sr.OpenFile(want.Path)
	if err != nil {
		return Refuse("%s: %v", rootfs.Show(want.Path), err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Refuse("%s: %v", rootfs.Show(want.Path), err)
	}
	if st, ok := ledger.StateOf(fi, [sha256.Size]byte{}); ok && ino != 0 && st.Ino != ino {
		return Refuse("%s was replaced while it was linked", rootfs.Show(want.Path))
	}
	return checkSum(ctx, f, want, buf)
}

func checkSum(ctx context.Context, f *os.File, want UnpackedFile, buf []byte) error {
	if ReadHook != nil {
		ReadHook(want.Path)
	}
	h := sha256.New()
	n, err := io.CopyBuffer(h, ctxReader{ctx, f}, buf)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return Refuse("%s: %v", rootfs.Show(want.Path), err)
	}
	if n != want.Size || hex.EncodeToString(h.Sum(nil)) != want.SHA256 {
		return Refuse("%s: sha256 mismatch", rootfs.Show(want.Path))
	}
	return nil
}

// fileOnly hides *os.File's ReadFrom, so io.CopyBuffer uses the caller's
// buffer.
type fileOnly struct{ f *os.File }

func (w fileOnly) Write(p []byte) (int, error) { return w.f.Write(p) }

// ctxReader ends a copy soon after its context is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
