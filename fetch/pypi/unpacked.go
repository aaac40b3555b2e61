package pypi

import (
	"archive/zip"
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cudaenv/cudaenv/fetch"
	"github.com/cudaenv/cudaenv/internal/filelist"
	"github.com/cudaenv/cudaenv/internal/ledger"
	"github.com/cudaenv/cudaenv/internal/rootfs"
)

// WheelCache is the cache of unpacked wheels in a download cache folder:
// Dir/unpacked/<the wheel's sha256>/ holds tree/, the wheel laid out as
// ExtractWheel lays it out (without the development links, which depend
// on the tree it joins), and index.json, which lists every file with its
// size and sha256 (from the wheel's RECORD, else hashed as written) and
// every symlink with its target. Its files are
// read-only, and installing the same wheel again gives the store hard
// links to them, not inflated copies: a store file is never writable
// through the cache or the other way round, short of a chmod by their
// owner. Where no link can be made (the store on another file system),
// the files are copied.
//
// An entry is used only if this user made it: the folders and files are
// this user's and writable by nobody else, and so is the index. Every
// file is hashed again against the index before it is linked, as a
// cached archive is hashed again before it is unpacked; an entry that
// fails any check is reported through Notice, removed, and the wheel is
// unpacked again. A cache folder shared with other users gives each the
// cache only if the unpacked folder is theirs; the others unpack as
// before.
type WheelCache struct {
	Dir    string            // a fetch.Client's CacheDir
	Notice func(line string) // hears of an entry refused
	// OwnFiles: the store must own its files (a system store, which its
	// users check on their own): a cached entry is cloned or copied into
	// it, never linked, and a wheel not in the cache is unpacked straight
	// into it.
	OwnFiles bool

	// refused holds the wheels whose entry Reuse refused: unpacked again,
	// every file is hashed as written rather than believed from RECORD
	// (should a wheel's RECORD be what is wrong, it is said once).
	refused *sync.Map
}

// entryLocks holds a mutex per cache entry (by path) that Reuse takes.
var entryLocks sync.Map

// ledger is the ledger of the cache's download folder.
func (c WheelCache) ledger() *ledger.Ledger { return ledger.Open(c.Dir) }

// NewWheelCache is the cache of unpacked wheels in the download cache dir.
func NewWheelCache(dir string, notice func(string)) WheelCache {
	return WheelCache{Dir: dir, Notice: notice, refused: &sync.Map{}}
}

// unpackedFormat is index.json's format; an entry of another is refused.
const unpackedFormat = 1

// maxUnpackedIndex bounds index.json (the CUDA 12 cuDNN wheel's is 20 KiB).
const maxUnpackedIndex = 16 << 20

type unpackedIndex struct {
	Format  int            `json:"format"`
	Wheel   string         `json:"wheel"` // the wheel's sha256
	Project string         `json:"project"`
	Version string         `json:"version"`
	Files   []unpackedFile `json:"files"`
	Links   []unpackedLink `json:"links"`

	hashed map[string]bool // unpackInto's: the files hashed as written
}

type unpackedFile struct {
	Path   string `json:"path"`
	Exec   bool   `json:"exec,omitempty"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

type unpackedLink struct {
	Path   string `json:"path"`
	Target string `json:"target"`
}

// refusedEntry is why an entry of the cache is not used.
type refusedEntry struct{ why string }

func (e *refusedEntry) Error() string { return e.why }

func refuse(format string, args ...any) error {
	return &refusedEntry{fmt.Sprintf(format, args...)}
}

func (c WheelCache) unpackedDir() string { return filepath.Join(c.Dir, fetch.UnpackedFolder) }

// Unpack is ExtractPlannedWheel through the cache: the wheel (sha256 sha,
// checked by the caller) is unpacked into a new entry of the cache, which
// is then linked into dest. Where the cache cannot be used (none, not this
// user's, another file system than dest's) it is ExtractPlannedWheel.
func (c WheelCache) Unpack(ctx context.Context, r io.ReaderAt, size int64, sha, dest, project, version string) error {
	wp, err := openPlannedWheel(ctx, r, size, project, version)
	if err != nil {
		return err
	}
	if c.OwnFiles || !c.usableFor(dest, sha) {
		// Written once, where it is installed.
		return extractPlanned(ctx, wp, dest)
	}
	work, done, err := fetch.NewWorkDir(c.Dir, fetch.UnpackPrefix)
	if err != nil {
		return extractPlanned(ctx, wp, dest)
	}
	defer done()
	entry := filepath.Join(work, "entry")
	tree := filepath.Join(entry, "tree")
	if err := os.MkdirAll(tree, 0o755); err != nil {
		return extractPlanned(ctx, wp, dest)
	}
	hashAll := false
	if c.refused != nil {
		_, hashAll = c.refused.Load(sha)
	}
	idx, err := unpackInto(ctx, wp, tree, hashAll)
	if err != nil {
		// Most likely the cache's disk: the store's may still have room.
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return extractPlanned(ctx, wp, dest)
	}
	idx.Wheel, idx.Project, idx.Version = sha, project, version
	data, err := json.Marshal(idx)
	if err == nil {
		err = os.WriteFile(filepath.Join(entry, "index.json"), data, 0o444)
	}
	if err != nil {
		return extractPlanned(ctx, wp, dest)
	}
	final := filepath.Join(c.unpackedDir(), sha)
	if err := os.Rename(entry, final); err == nil {
		entry = final
	} // else another install made it meanwhile: link ours, then drop it
	// Only the files hashed as they were written are vouched for: a sum
	// taken from RECORD is checked by the first reuse.
	err = materialize(ctx, filepath.Join(entry, "tree"), idx, dest, false, placeOptions{ledger: c.ledger(), keep: func(rel string) bool { return idx.hashed[rel] }})
	var re *refusedEntry
	if errors.As(err, &re) {
		// Changed between writing and linking: by nobody but this user.
		return fmt.Errorf("extract wheel: the cache of unpacked wheels changed while it was written (%s); run: cudaenv cache prune", re.why)
	}
	return err
}

// Reuse installs the wheel sha (planned as project==version) into dest
// from the cache, and reports whether it did. An entry that is missing
// is nothing to report; one that fails a check is reported, removed, and
// Reuse returns false, so that the wheel is unpacked again. Files already
// linked into dest by then are regular files that unpacking replaces;
// symlinks are made only once every file has passed.
func (c WheelCache) Reuse(ctx context.Context, sha, dest, project, version string) (bool, error) {
	if c.Dir == "" || !validSHA256(sha) || runtime.GOOS != "linux" {
		return false, nil
	}
	entry := filepath.Join(c.unpackedDir(), sha)
	fi, err := os.Lstat(entry)
	if err != nil || !fetch.OwnedByMe(fi) {
		// None, or another user's in a shared cache: not for this user,
		// and nothing to report each time.
		return false, nil
	}
	// One reuse of an entry at a time in this process: two linking the
	// same files at once would each find the other's ctime.
	mu, _ := entryLocks.LoadOrStore(entry, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	idx, err := c.readEntry(entry, sha, project, version)
	if err == nil {
		err = materialize(ctx, filepath.Join(entry, "tree"), idx, dest, true, placeOptions{ledger: c.ledger(), own: c.OwnFiles})
	}
	var re *refusedEntry
	if !errors.As(err, &re) {
		return err == nil, err
	}
	c.drop(entry)
	if c.refused != nil {
		c.refused.Store(sha, true)
	}
	if c.Notice != nil {
		c.Notice(fmt.Sprintf("the cache's unpacked copy of %s %s was changed since it was made (%s); unpacking the wheel again", project, version, re.why))
	}
	return false, nil
}

// drop takes a refused entry out of the cache: renamed into a held work
// folder first, so no other install finds it half-removed. An entry that
// is not this user's is left where it is, unused.
func (c WheelCache) drop(entry string) {
	if fi, err := os.Lstat(entry); err != nil || !fetch.OwnedByMe(fi) {
		return
	}
	work, done, err := fetch.NewWorkDir(c.Dir, fetch.UnpackPrefix)
	if err != nil {
		return
	}
	defer done()
	if os.Rename(entry, filepath.Join(work, "refused")) != nil {
		os.RemoveAll(entry)
	}
}

// usableFor reports whether the cache can give dest hard links to a new
// entry for sha: its unpacked folder (made if missing) is this user's and
// writable by nobody else, it has no entry for sha yet, and it is on
// dest's file system (otherwise every file would be written twice).
func (c WheelCache) usableFor(dest, sha string) bool {
	if c.Dir == "" || !validSHA256(sha) || runtime.GOOS != "linux" {
		return false
	}
	dir := c.unpackedDir()
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return false
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return false
	}
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() || !fetch.OwnedByMe(fi) || fi.Mode().Perm()&0o022 != 0 {
		return false
	}
	di, err := os.Stat(dest)
	if err != nil || device(fi) != device(di) {
		return false
	}
	_, err = os.Lstat(filepath.Join(dir, sha))
	return errors.Is(err, fs.ErrNotExist)
}

// readEntry reads and checks an entry's index: the entry is this user's,
// writable by nobody else, for this very wheel, and every name and target
// in it is one ExtractWheel could have written.
func (c WheelCache) readEntry(entry, sha, project, version string) (*unpackedIndex, error) {
	for _, dir := range []string{c.unpackedDir(), entry, filepath.Join(entry, "tree")} {
		fi, err := os.Lstat(dir)
		if err != nil {
			return nil, refuse("%s: %v", filepath.Base(dir), err)
		}
		if !fi.IsDir() || !fetch.OwnedByMe(fi) || fi.Mode().Perm()&0o022 != 0 {
			return nil, refuse("%s is not a folder of this user's that only this user can write", filepath.Base(dir))
		}
	}
	f, err := os.OpenFile(filepath.Join(entry, "index.json"), os.O_RDONLY|noFollow, 0)
	if err != nil {
		return nil, refuse("index.json: %v", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || !fetch.OwnedByMe(fi) || fi.Mode().Perm()&0o222 != 0 || fi.Size() > maxUnpackedIndex {
		return nil, refuse("index.json is not a read-only file of this user's")
	}
	data, err := io.ReadAll(io.LimitReader(f, maxUnpackedIndex+1))
	if err != nil {
		return nil, refuse("index.json: %v", err)
	}
	idx, err := decodeUnpackedIndex(data)
	if err != nil {
		return nil, refuse("index.json: %v", err)
	}
	switch {
	case idx.Wheel != sha:
		return nil, refuse("index.json is for another wheel")
	case NormalizeProject(idx.Project) != NormalizeProject(project) || !SameVersion(idx.Version, version):
		return nil, refuse("index.json is for %s %s", quoteMeta(idx.Project), quoteMeta(idx.Version))
	}
	return idx, nil
}

// decodeUnpackedIndex parses an index strictly: known fields only, every
// path a clean relative name no wheel entry could fail, no name twice.
func decodeUnpackedIndex(data []byte) (*unpackedIndex, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var idx unpackedIndex
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
		if err := checkEntryName(p); err != nil || strings.HasSuffix(p, "/") {
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
		if f.Size < 0 || !validSHA256(f.SHA256) {
			return nil, fmt.Errorf("%s: bad size or sha256", rootfs.Show(f.Path))
		}
	}
	for _, l := range idx.Links {
		if err := name(l.Path); err != nil {
			return nil, err
		}
		if err := checkLinkTarget(l.Path, l.Target); err != nil {
			return nil, fmt.Errorf("%s: %w", rootfs.Show(l.Path), err)
		}
	}
	return &idx, nil
}

func validSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// unpackInto writes the wheel into tree (a new, empty folder) read-only,
// and returns its index. A file's sha256 is the one the wheel's RECORD
// gives for it (at its size), else it is hashed as it is written; with
// hashAll every file is hashed.
func unpackInto(ctx context.Context, wp *wheelPlan, tree string, hashAll bool) (*unpackedIndex, error) {
	t, err := rootfs.Open(tree)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	var record map[string]recordHash
	if !hashAll {
		record = wheelRecord(wp.zr)
	}
	var mu sync.Mutex
	files := map[string]unpackedFile{}
	hashed := map[string]bool{}
	opts := writeOptions{readOnly: true,
		known: func(f *zip.File) ([32]byte, bool) {
			r, ok := record[f.Name]
			return r.sum, ok && r.size == f.UncompressedSize64
		},
		wrote: func(f *zip.File, rel string, perm fs.FileMode, size int64, sum []byte) {
			fromRecord := sum == nil
			if sum == nil {
				known := record[f.Name].sum
				sum = known[:]
			}
			mu.Lock()
			files[rel] = unpackedFile{Path: rel, Exec: perm&0o111 != 0, Size: size, SHA256: hex.EncodeToString(sum)}
			hashed[rel] = !fromRecord
			mu.Unlock()
		}}
	if err := extractEntries(ctx, t, wp.jobs, wp.inOrder, opts); err != nil {
		return nil, err
	}
	// The last entry of a name is what the tree holds.
	last := map[string]int{}
	for i, j := range wp.jobs {
		last[j.rel] = i
	}
	idx := &unpackedIndex{Format: unpackedFormat, Files: []unpackedFile{}, Links: []unpackedLink{}, hashed: hashed}
	for i, j := range wp.jobs {
		if last[j.rel] != i {
			continue
		}
		if j.f.Mode()&fs.ModeSymlink != 0 {
			target, err := t.Root().Readlink(j.rel)
			if err != nil {
				return nil, err
			}
			idx.Links = append(idx.Links, unpackedLink{Path: j.rel, Target: target})
			continue
		}
		f, ok := files[j.rel]
		if !ok {
			return nil, fmt.Errorf("entry %s was not written", rootfs.Show(j.rel))
		}
		idx.Files = append(idx.Files, f)
	}
	return idx, nil
}

// materialize puts an entry's tree (src) into dest: every file cloned or
// linked (copied where neither can be made), then the symlinks in the
// wheel's order, then the development links, then every link resolved, as
// ExtractWheel leaves a tree. With verify (a reuse), every file is first
// checked against the index (this user's, read-only, its size), and its
// fingerprint against the ledger: a file the ledger vouches for is linked
// without its content being read; one it does not is hashed, and then so
// is every file of the entry, since a fingerprint that changed means
// something touched the entry. A file that fails is a *refusedEntry, and
// no symlink has been made. The state each file has once linked is
// recorded in the ledger where keep says so, and its sum told to the
// filelist.Sums the context carries.
func materialize(ctx context.Context, src string, idx *unpackedIndex, dest string, verify bool, o placeOptions) error {
	sr, err := rootfs.OpenRead(src)
	if err != nil {
		return refuse("tree: %v", err)
	}
	defer sr.Close()
	t, err := rootfs.Open(dest)
	if err != nil {
		return fmt.Errorf("open extraction target: %w", err)
	}
	defer t.Close()
	o.sums = filelist.SumsFrom(ctx)

	order := slices.Clone(idx.Files)
	slices.SortStableFunc(order, func(a, b unpackedFile) int { return cmp.Compare(b.Size, a.Size) })
	states := make([]ledger.State, len(order))
	hashed := make([]bool, len(order))
	var unvouched atomic.Bool
	err = parallel(ctx, len(order), func(i int, buf []byte) error {
		p, err := placeFile(ctx, sr, t, order[i], verify, o, buf)
		states[i], hashed[i] = p.state, p.read
		if p.unvouched {
			unvouched.Store(true)
		}
		return err
	})
	if err == nil && unvouched.Load() {
		// A full check of the entry: the files linked on their
		// fingerprint's word are read too.
		err = parallel(ctx, len(order), func(i int, buf []byte) error {
			if hashed[i] {
				return nil
			}
			return recheck(ctx, sr, order[i], states[i].Ino, buf)
		})
	}
	if err != nil {
		return err
	}
	var keep []ledger.State
	for i, st := range states {
		if st.Ino != 0 && (o.keep == nil || o.keep(order[i].Path)) {
			keep = append(keep, st)
		}
	}
	_ = o.ledger.Record(keep)
	root := t.Root()
	written := map[string]bool{}
	for _, f := range idx.Files {
		written[f.Path] = true
	}
	var links []string
	for _, l := range idx.Links {
		if err := t.MkdirAll(path.Dir(l.Path)); err != nil {
			return fmt.Errorf("extract wheel: link %s: %w", rootfs.Show(l.Path), err)
		}
		if err := removeExisting(root, l.Path); err != nil {
			return fmt.Errorf("extract wheel: link %s: %w", rootfs.Show(l.Path), err)
		}
		if err := root.Symlink(l.Target, l.Path); err != nil {
			return fmt.Errorf("extract wheel: link %s: %w", rootfs.Show(l.Path), err)
		}
		written[l.Path] = true
		links = append(links, l.Path)
	}
	return finishWheel(root, written, links)
}

// placeOptions are how materialize places files.
type placeOptions struct {
	ledger *ledger.Ledger
	// keep says which files' states are recorded in the ledger; nil: all.
	keep func(rel string) bool
	// own: the tree must own its files (a system store): cloned or
	// copied, never linked.
	own  bool
	sums *filelist.Sums
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
			buf := make([]byte, copyBufSize)
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := f(i, buf); err != nil {
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

// readContent is a test hook: it hears each file of the cache whose
// content a reuse reads.
var readContent = func(rel string) {}

// placed is what placeFile did with a file.
type placed struct {
	state     ledger.State // the cache's file once placed, with its sum
	read      bool         // its content was read and found as indexed
	unvouched bool         // a reuse found its fingerprint not the ledger's
}

// placeFile clones, links or copies one file of an entry into t.
func placeFile(ctx context.Context, sr, t *rootfs.Tree, want unpackedFile, verify bool, o placeOptions, buf []byte) (placed, error) {
	var p placed
	f, err := sr.OpenFile(want.Path)
	if err != nil {
		return p, refuse("%s: %v", rootfs.Show(want.Path), err)
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return p, refuse("%s: %v", rootfs.Show(want.Path), err)
	case !fi.Mode().IsRegular() || !fetch.OwnedByMe(fi):
		return p, refuse("%s is not a file of this user's", rootfs.Show(want.Path))
	case fi.Mode().Perm()&0o222 != 0:
		return p, refuse("%s is writable", rootfs.Show(want.Path))
	case fi.Size() != want.Size:
		return p, refuse("%s is %d bytes, not %d", rootfs.Show(want.Path), fi.Size(), want.Size)
	}
	var sum [sha256.Size]byte
	hex.Decode(sum[:], []byte(want.SHA256))
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
	err = t.CloneFile(want.Path, f, perm)
	if errors.Is(err, rootfs.ErrNoClone) && !o.own {
		err = t.LinkFile(want.Path, f)
	}
	switch {
	case err == nil:
		// A clone or a link: the store's file has the cache's content.
		after, err := f.Stat()
		if err != nil {
			return p, err
		}
		if out, err := t.Root().Lstat(want.Path); err == nil {
			o.sums.Add(out, sum)
		}
		p.state, _ = ledger.StateOf(after, sum)
		return p, nil
	case !errors.Is(err, rootfs.ErrNoLink) && !errors.Is(err, rootfs.ErrNoClone):
		return p, fmt.Errorf("extract wheel: %w", err)
	}
	// Another file system, or a tree that owns its files: a copy of its
	// own, writable as any installed file.
	perm |= 0o200
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return p, err
	}
	out, err := t.CreateFile(want.Path, perm)
	if err != nil {
		return p, fmt.Errorf("extract wheel: %w", err)
	}
	readContent(want.Path)
	h := sha256.New()
	_, err = io.CopyBuffer(io.MultiWriter(fileWriter{out}, h), ctxReader{ctx, f}, buf)
	if err == nil {
		if ofi, serr := out.Stat(); serr == nil {
			o.sums.Add(ofi, sum)
		}
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return p, fmt.Errorf("extract wheel: %s: %w", rootfs.Show(want.Path), err)
	}
	if !bytes.Equal(h.Sum(nil), sum[:]) {
		return p, refuse("%s: sha256 mismatch", rootfs.Show(want.Path))
	}
	p.state, _ = ledger.StateOf(fi, sum)
	p.read = true
	return p, nil
}

// recheck hashes a file of the entry already placed on its fingerprint's
// word, which must still be inode ino.
func recheck(ctx context.Context, sr *rootfs.Tree, want unpackedFile, ino uint64, buf []byte) error {
	f, err := sr.OpenFile(want.Path)
	if err != nil {
		return refuse("%s: %v", rootfs.Show(want.Path), err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return refuse("%s: %v", rootfs.Show(want.Path), err)
	}
	if st, ok := ledger.StateOf(fi, [32]byte{}); ok && ino != 0 && st.Ino != ino {
		return refuse("%s was replaced while it was linked", rootfs.Show(want.Path))
	}
	return checkSum(ctx, f, want, buf)
}

func checkSum(ctx context.Context, f *os.File, want unpackedFile, buf []byte) error {
	readContent(want.Path)
	h := sha256.New()
	n, err := io.CopyBuffer(h, ctxReader{ctx, f}, buf)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return refuse("%s: %v", rootfs.Show(want.Path), err)
	}
	if n != want.Size || hex.EncodeToString(h.Sum(nil)) != want.SHA256 {
		return refuse("%s: sha256 mismatch", rootfs.Show(want.Path))
	}
	return nil
}

// openPlannedWheel is openWheel for a wheel planned as project==version,
// checked against its METADATA first (see ExtractPlannedWheel).
func openPlannedWheel(ctx context.Context, r io.ReaderAt, size int64, project, version string) (*wheelPlan, error) {
	return openWheel(ctx, r, size, func(zr *zip.Reader) error { return checkPlannedMetadata(zr, project, version) })
}

// extractPlanned is ExtractWheelContext for a wheel already opened.
func extractPlanned(ctx context.Context, wp *wheelPlan, dest string) error {
	t, err := rootfs.Open(dest)
	if err != nil {
		return fmt.Errorf("open extraction target: %w", err)
	}
	defer t.Close()
	opts := writeOptions{}
	if sums := filelist.SumsFrom(ctx); sums != nil {
		// The install lists its files: their sums from RECORD, or hashed.
		record := wheelRecord(wp.zr)
		opts.sums = sums
		opts.known = func(f *zip.File) ([32]byte, bool) {
			r, ok := record[f.Name]
			return r.sum, ok && r.size == f.UncompressedSize64
		}
	}
	if err := extractEntries(ctx, t, wp.jobs, wp.inOrder, opts); err != nil {
		return fmt.Errorf("extract wheel: %w", err)
	}
	return finishWheel(t.Root(), wp.written, wp.links)
}

// recordHash is a file's size and sha256 as a wheel's RECORD gives them.
type recordHash struct {
	size uint64
	sum  [sha256.Size]byte
}

// maxRecord bounds the RECORD read (the cuDNN wheel's is 4 KiB).
const maxRecord = 8 << 20

// wheelRecord reads the sha256 and size of each file the wheel's one
// *.dist-info/RECORD lists (PEP 376: path,sha256=<urlsafe base64>,size).
// The RECORD is part of the wheel whose sha256 the index gave, so its
// sums are the wheel's own; a line it cannot read, or a RECORD that is
// missing, too large or given twice, gives nothing, and those files are
// hashed as they are written.
func wheelRecord(zr *zip.Reader) map[string]recordHash {
	var rec *zip.File
	for _, f := range zr.File {
		dir, base := path.Split(f.Name)
		if base == "RECORD" && strings.Count(dir, "/") == 1 && strings.HasSuffix(dir, ".dist-info/") {
			if rec != nil {
				return nil
			}
			rec = f
		}
	}
	if rec == nil || rec.UncompressedSize64 > maxRecord {
		return nil
	}
	rc, err := rec.Open()
	if err != nil {
		return nil
	}
	defer rc.Close()
	r := csv.NewReader(io.LimitReader(rc, maxRecord))
	r.FieldsPerRecord = 3
	r.ReuseRecord = true
	out := map[string]recordHash{}
	for {
		row, err := r.Read()
		if err == io.EOF {
			return out
		}
		if err != nil {
			return nil
		}
		b64, ok := strings.CutPrefix(row[1], "sha256=")
		if !ok {
			continue
		}
		sum, err := base64.RawURLEncoding.DecodeString(b64)
		size, serr := strconv.ParseUint(row[2], 10, 64)
		if err != nil || serr != nil || len(sum) != sha256.Size {
			continue
		}
		var h recordHash
		h.size = size
		copy(h.sum[:], sum)
		out[row[0]] = h
	}
}
