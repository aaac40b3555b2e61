package fetch

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mholt/archives"

	"github.com/cudaenv/cudaenv/internal/filelist"
	"github.com/cudaenv/cudaenv/internal/rootfs"
	fastxz "github.com/cudaenv/cudaenv/internal/xz"
)

// merger union-merges archives into root, like NVIDIA's parse_redist.py:
// each archive's top folder is stripped, and where archives overlap the
// one with the higher rank (later in Fetch's list) wins, whatever order
// they finish in. Every write goes through a rootfs.Tree (an os.Root on
// root), so no name in the tree can lead a write outside it. Every file and
// link is written under a temporary name and renamed into place, so
// nothing is ever written through an existing name, and no folder on the
// way to a new entry is ever a symlink.
type merger struct {
	root string
	tree *rootfs.Tree
	// cache, if not nil, is the cache of unpacked trees archives go
	// through (see unpacked_redist.go); readOnly: the merger fills an
	// entry of it, whose files nobody may write.
	cache    *UnpackedCache
	readOnly bool
	placed   []placedEntry // under mu

	mu    sync.Mutex
	owner map[string]int // rel path → rank of the archive that wrote it

	seq atomic.Int64
}

func newMerger(root string) (*merger, error) {
	t, err := rootfs.Open(root)
	if err != nil {
		return nil, err
	}
	return &merger{root: root, tree: t, owner: map[string]int{}}, nil
}

func (m *merger) close() { m.tree.Close() }

// ownerOf returns the rank of the archive that wrote rel, or -1.
func (m *merger) ownerOf(rel string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := m.owner[rel]; ok {
		return r
	}
	return -1
}

var copyBufs = sync.Pool{New: func() any { b := make([]byte, 256<<10); return &b }}

// unpacker is one extraction worker's reusable state: the xz decoder
// keeps its dictionary between archives, so a toolkit of any size costs
// one dictionary per worker and produces no garbage per archive.
type unpacker struct {
	xz    *fastxz.Reader
	br    *bufio.Reader
	ahead [][]byte
}

func newUnpacker() *unpacker {
	u := &unpacker{br: bufio.NewReaderSize(nil, 64<<10)}
	for i := 0; i < 4; i++ {
		u.ahead = append(u.ahead, make([]byte, 128<<10))
	}
	return u
}

// extract unpacks the archive file at p (of artifact a) with the given
// rank. What it unpacks to is bounded by rootfs.MaxUnpacked of the
// archive's size: a tar stream is cut off there, a zip whose directory
// declares more is refused before anything is written.
//
// checked, if set, reports whether the open file is one the caller has
// just checked and that has not changed since (see verifiedFiles); such a
// file is not hashed again before a random-access read.
func (m *merger) extract(ctx context.Context, u *unpacker, p string, a *Artifact, rank int, checked func(sha string, fi fs.FileInfo) bool) (err error) {
	// The archive was checked at path p; what is unpacked is read from
	// this one open file and checked again as it is read, so a file swapped
	// in a shared cache between the check and now is never installed.
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return &archiveGoneError{err}
	}
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if unpackHook != nil {
		unpackHook(a)
	}
	if m.cacheable(a) {
		return m.extractCached(ctx, u, f, st, a, rank, checked)
	}
	return m.extractFile(ctx, u, f, st, a, rank, checked)
}

// unpackHook, when set, hears of each archive opened to be unpacked (a
// test hook).
var unpackHook func(a *Artifact)

// extractFile unpacks the open archive f (st is its stat) into the tree.
func (m *merger) extractFile(ctx context.Context, u *unpacker, f *os.File, st fs.FileInfo, a *Artifact, rank int, checked func(sha string, fi fs.FileInfo) bool) (err error) {
	name := strings.ToLower(a.RelativePath)
	if a.Unpack != nil || strings.HasSuffix(name, ".zip") {
		// Random access: check the whole file first, then read it again.
		if checked == nil || !checked(a.SHA256, st) {
			if err := verifyOpen(f, a); err != nil {
				return err
			}
		}
		if a.Unpack != nil {
			return a.Unpack(ctx, f, st.Size(), m.root)
		}
	}
	x := &archiveExtraction{m: m, rank: rank}
	hr := &hashingReader{r: f, h: sha256.New()}
	u.br.Reset(hr)
	// A stream is checked as it is read: after the archive, the rest of
	// the file is read too and the whole must hash to the manifest's.
	defer func() {
		if err == nil && !strings.HasSuffix(name, ".zip") {
			_, err = io.Copy(io.Discard, u.br)
			if err == nil {
				err = hr.check(a)
			}
		}
	}()
	switch {
	case strings.HasSuffix(name, ".tar.xz") || strings.HasSuffix(name, ".txz"):
		if u.xz == nil {
			u.xz, err = fastxz.NewReader(u.br, 0)
		} else {
			err = u.xz.Reset(u.br)
		}
		if err != nil {
			u.xz = nil
			return fmt.Errorf("xz: %w", err)
		}
		ahead := readAhead(u.xz, u.ahead)
		defer ahead.Close()
		tr := bounded(ahead, st.Size())
		err = archives.Tar{}.Extract(ctx, tr, x.handle)
		if err == nil {
			// archive/tar stops at the end-of-archive blocks; make sure
			// the compressed stream (and its checks) really ends too.
			_, err = io.Copy(io.Discard, tr)
		}
		err = x.result(err)
		return err
	case strings.HasSuffix(name, ".tar.gz") || strings.HasSuffix(name, ".tgz"):
		gr, gerr := archives.Gz{}.OpenReader(u.br)
		if gerr != nil {
			err = fmt.Errorf("gzip: %w", gerr)
			return err
		}
		defer gr.Close()
		err = x.result(archives.Tar{}.Extract(ctx, bounded(gr, st.Size()), x.handle))
		return err
	case strings.HasSuffix(name, ".tar"):
		err = x.result(archives.Tar{}.Extract(ctx, bounded(u.br, st.Size()), x.handle))
		return err
	case strings.HasSuffix(name, ".zip"):
		if err = checkZip(f, st.Size()); err != nil {
			return err
		}
		err = x.result(archives.Zip{}.Extract(ctx, f, x.handle))
		return err
	}
	err = fmt.Errorf("unsupported archive type: %s", path.Base(a.RelativePath))
	return err
}

// hashingReader hashes what is read through it.
type hashingReader struct {
	r io.Reader
	h hash.Hash
	n int64
}

func (r *hashingReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.h.Write(p[:n])
	r.n += int64(n)
	return n, err
}

// check compares what was read with the artifact's size and sha256.
func (r *hashingReader) check(a *Artifact) error {
	if got := hex.EncodeToString(r.h.Sum(nil)); r.n != a.Size || got != a.SHA256 {
		return fmt.Errorf("verify %s: the archive changed after it was checked (sha256 %s, want %s): a shared download cache was written to; run: cudaenv cache prune", a.label(), short(got), short(a.SHA256))
	}
	return nil
}

// verifyOpen hashes the open file f whole and compares it with the
// artifact's size and sha256, then rewinds it.
func verifyOpen(f *os.File, a *Artifact) error {
	hr := &hashingReader{r: f, h: sha256.New()}
	if _, err := io.Copy(io.Discard, hr); err != nil {
		return err
	}
	if err := hr.check(a); err != nil {
		return err
	}
	_, err := f.Seek(0, io.SeekStart)
	return err
}

// archiveGoneError is an archive removed from the cache between its
// download and its extraction (cache prune while an install runs).
type archiveGoneError struct{ err error }

func (e *archiveGoneError) Error() string { return e.err.Error() }
func (e *archiveGoneError) Unwrap() error { return e.err }

// maxLinkTarget bounds a zip symlink entry, whose target is its content.
const maxLinkTarget = 4096

// checkZip refuses a zip whose directory declares more than
// rootfs.MaxUnpacked of its size, or a symlink longer than a path.
// archive/zip holds every entry to its declared size.
func checkZip(r io.ReaderAt, size int64) error {
	zr, err := OpenZip(r, size)
	if err != nil {
		return err
	}
	var total uint64
	limit := uint64(rootfs.MaxUnpacked(size))
	for _, f := range zr.File {
		if f.Mode()&fs.ModeSymlink != 0 && f.UncompressedSize64 > maxLinkTarget {
			return fmt.Errorf("refusing symlink %s: its target is longer than a path", rootfs.Show(f.Name))
		}
		total += f.UncompressedSize64
		if total > limit || total < f.UncompressedSize64 {
			return &tooLargeError{uint64(size), limit}
		}
	}
	return nil
}

// tooLargeError refuses an archive that unpacks to far more than its size.
type tooLargeError struct{ size, limit uint64 }

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("refusing the archive: it unpacks to more than %.1f MiB, about %d times its size (an archive bomb?)", float64(e.limit)/(1<<20), rootfs.MaxExpansion)
}

// bounded reads r, a decompressed tar stream from an archive of size
// bytes, and fails once it has given more than rootfs.MaxUnpacked(size).
// Sparse entries, which would unpack to more than the stream holds, are
// refused by entryKind.
func bounded(r io.Reader, size int64) io.Reader {
	limit := rootfs.MaxUnpacked(size)
	return &boundedReader{r: r, left: limit, err: &tooLargeError{uint64(size), uint64(limit)}}
}

type boundedReader struct {
	r    io.Reader
	left int64
	err  error
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// Only an error if there is more to read.
		var one [1]byte
		n, err := b.r.Read(one[:])
		if n > 0 {
			return 0, b.err
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

// archiveExtraction is the state of one archive being unpacked.
type archiveExtraction struct {
	m    *merger
	rank int
	top  string // the archive's top folder, from its first entry
	err  error  // what handle refused, without the archives package's wrapping
}

// handle unpacks one entry; archives wraps its errors in "handling file
// NAME:", which would repeat the name, so the bare error is kept too.
func (x *archiveExtraction) handle(ctx context.Context, fi archives.FileInfo) error {
	err := x.entry(ctx, fi)
	if err != nil && x.err == nil {
		x.err = err
	}
	return err
}

// result is the error to report for an extraction that returned err.
func (x *archiveExtraction) result(err error) error {
	if err != nil && x.err != nil {
		return x.err
	}
	return err
}

func (x *archiveExtraction) entry(ctx context.Context, fi archives.FileInfo) error {
	rel, err := x.relPath(fi.NameInArchive)
	if err != nil {
		return err
	}
	if rel == "" {
		return nil // the top folder itself
	}
	if rootfs.Owned(rel) {
		return fmt.Errorf("refusing %s: %s is a name only cudaenv writes", rootfs.Show(fi.NameInArchive), rootfs.Show(rel))
	}
	kind := entryKind(fi)
	switch kind {
	case kindDir:
		return x.m.ensureDir(rel)
	case kindFile:
		rc, err := fi.Open()
		if err != nil {
			return err
		}
		defer rc.Close()
		perm := os.FileMode(0o644)
		if fi.Mode().Perm()&0o111 != 0 {
			perm = 0o755
		}
		return x.m.writeFile(ctx, rel, rc, perm, x.rank)
	case kindSymlink:
		return x.m.symlink(rel, fi.LinkTarget, x.rank)
	case kindHardlink:
		target, err := x.relPath(fi.LinkTarget)
		if err != nil {
			return fmt.Errorf("hard link %s: %w", rootfs.Show(fi.NameInArchive), err)
		}
		if target == "" {
			return fmt.Errorf("refusing hard link %s → %s: not a file", rootfs.Show(fi.NameInArchive), rootfs.Show(fi.LinkTarget))
		}
		return x.m.hardlink(rel, target, x.rank)
	}
	return fmt.Errorf("refusing %s: %s entries are not allowed", rootfs.Show(fi.NameInArchive), kind)
}

type kind string

const (
	kindDir      kind = "directory"
	kindFile     kind = "file"
	kindSymlink  kind = "symlink"
	kindHardlink kind = "hard link"
	// Sparse files unpack to more than the archive holds (archive/tar
	// fills their holes with zeros); NVIDIA ships none.
	kindSparse kind = "sparse file"
)

func entryKind(fi archives.FileInfo) kind {
	if h, ok := fi.Header.(*tar.Header); ok {
		for k := range h.PAXRecords {
			if strings.HasPrefix(k, "GNU.sparse.") {
				return kindSparse
			}
		}
		switch h.Typeflag {
		case tar.TypeReg, tar.TypeRegA:
			return kindFile
		case tar.TypeGNUSparse:
			return kindSparse
		case tar.TypeDir:
			return kindDir
		case tar.TypeSymlink:
			return kindSymlink
		case tar.TypeLink:
			return kindHardlink
		case tar.TypeChar:
			return "character device"
		case tar.TypeBlock:
			return "block device"
		case tar.TypeFifo:
			return "fifo"
		}
		return kind("tar type " + strconv.Quote(string(h.Typeflag)))
	}
	if _, ok := fi.Header.(zip.FileHeader); ok || fi.Header == nil {
		mode := fi.Mode()
		switch {
		case mode.IsDir():
			return kindDir
		case mode&fs.ModeSymlink != 0:
			return kindSymlink
		case mode.IsRegular():
			return kindFile
		}
		return kind("special file " + mode.Type().String())
	}
	mode := fi.Mode()
	switch {
	case mode.IsDir():
		return kindDir
	case mode&fs.ModeSymlink != 0:
		return kindSymlink
	case mode.IsRegular():
		return kindFile
	}
	return kind("special file " + mode.Type().String())
}

// relPath turns an archive entry name into a clean slash path relative to
// the archive's top folder, refusing anything that could leave it.
// "" means the top folder itself.
func (x *archiveExtraction) relPath(name string) (string, error) {
	orig := name
	if strings.ContainsAny(name, "\\\x00") {
		return "", fmt.Errorf("refusing %q: backslash or NUL in entry name", orig)
	}
	if strings.HasPrefix(name, "/") || (len(name) >= 2 && name[1] == ':') {
		return "", fmt.Errorf("refusing %q: absolute path", orig)
	}
	name = strings.TrimPrefix(name, "./")
	clean := path.Clean(name)
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", fmt.Errorf("refusing %q: path escapes the archive", orig)
	}
	if clean == "." {
		return "", nil
	}
	top, rest, _ := strings.Cut(clean, "/")
	if x.top == "" {
		x.top = top
	}
	if top != x.top {
		return "", fmt.Errorf("refusing %q: outside the archive's top folder %q", orig, x.top)
	}
	return rest, nil
}

// ensureDir makes rel (and its parents) real directories under root,
// refusing to pass through symlinks.
func (m *merger) ensureDir(rel string) error {
	err := m.tree.MkdirAll(rel)
	var tl *rootfs.ThroughLinkError
	var nd *rootfs.NotDirError
	switch {
	case errors.As(err, &tl):
		return fmt.Errorf("refusing to extract through symlink %s", rootfs.Show(tl.Rel))
	case errors.As(err, &nd):
		return fmt.Errorf("%s is a file in one archive and a directory in another", rootfs.Show(nd.Rel))
	}
	return err
}

func (m *merger) tempName(rel string) string {
	return path.Join(path.Dir(rel), ".cudaenv-"+strconv.FormatInt(m.seq.Add(1), 10)+".tmp")
}

// commit renames tmp to rel unless an archive of higher rank already wrote
// rel.
func (m *merger) commit(rel, tmp string, rank int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.tree.Root()
	if o, ok := m.owner[rel]; ok && o > rank {
		return r.Remove(tmp)
	}
	if err := r.Rename(tmp, rel); err != nil {
		r.Remove(tmp)
		if st, serr := r.Lstat(rel); serr == nil && st.IsDir() {
			return fmt.Errorf("%s is a directory in one archive and not in another", rootfs.Show(rel))
		}
		return err
	}
	m.owner[rel] = rank
	return nil
}

func (m *merger) writeFile(ctx context.Context, rel string, r io.Reader, perm os.FileMode, rank int) error {
	if err := m.ensureDir(path.Dir(rel)); err != nil {
		return err
	}
	tmp := m.tempName(rel)
	if m.readOnly {
		perm &^= 0o222
	}
	f, err := m.tree.Root().OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if m.readOnly {
		// The umask may have left write bits out, never put them in; the
		// read bits it took are put back.
		if err := f.Chmod(perm); err != nil {
			f.Close()
			m.tree.Root().Remove(tmp)
			return err
		}
	}
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	buf := *bp
	// The install's file list takes each file's sum from here (see
	// filelist.Sums), so it is hashed as it is written, not read again.
	sums := filelist.SumsFrom(ctx)
	var h hash.Hash
	if sums != nil {
		h = sha256.New()
	}
	var werr error
	for {
		if err := ctx.Err(); err != nil {
			werr = err
			break
		}
		n, err := r.Read(buf)
		if n > 0 {
			if _, err := f.Write(buf[:n]); err != nil {
				werr = err
				break
			}
			if h != nil {
				h.Write(buf[:n])
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			werr = err
			break
		}
	}
	if werr == nil && h != nil {
		if fi, err := f.Stat(); err == nil {
			var sum [sha256.Size]byte
			copy(sum[:], h.Sum(nil))
			sums.Add(fi, sum)
		}
	}
	if err := errors.Join(werr, f.Close()); err != nil {
		m.tree.Root().Remove(tmp)
		return err
	}
	return m.commit(rel, tmp, rank)
}

// symlink creates rel → target. The target must be relative and, read as
// a path from rel's directory, stay inside root; once the tree is
// complete, rootfs.Check resolves every link for real.
func (m *merger) symlink(rel, target string, rank int) error {
	if err := rootfs.CheckLinkTarget(rel, target); err != nil {
		return fmt.Errorf("refusing %w", err)
	}
	if err := m.ensureDir(path.Dir(rel)); err != nil {
		return err
	}
	tmp := m.tempName(rel)
	if err := m.tree.Root().Symlink(target, tmp); err != nil {
		return err
	}
	return m.commit(rel, tmp, rank)
}

// hardlink links rel to target, a regular file already extracted.
func (m *merger) hardlink(rel, target string, rank int) error {
	refuse := fmt.Errorf("refusing hard link %s → %s: target is not a file extracted before it", rootfs.Show(rel), rootfs.Show(target))
	// The target's directories must be real ones, the target a file.
	if !m.tree.RealDir(path.Dir(target)) {
		return refuse
	}
	st, err := m.tree.Root().Lstat(target)
	if err != nil || !st.Mode().IsRegular() {
		return refuse
	}
	if err := m.ensureDir(path.Dir(rel)); err != nil {
		return err
	}
	tmp := m.tempName(rel)
	if err := m.tree.Root().Link(target, tmp); err != nil {
		return err
	}
	return m.commit(rel, tmp, rank)
}

// finish completes a merged tree: the layout links for a linux platform,
// then one walk of the whole tree, layout links included, in which a link
// that resolves outside it or dangles fails, whichever archive (or unpack
// hook) made it. For such a link it returns the rank of the archive that
// wrote it, else -1.
func (m *merger) finish(platform string) (int, error) {
	if arch, ok := linuxArch[platform]; ok {
		if err := linkLayout(m.tree, arch); err != nil {
			return -1, fmt.Errorf("link layout: %w", err)
		}
	}
	if err := rootfs.Check(m.root); err != nil {
		var le *rootfs.LinkError
		if errors.As(err, &le) {
			if rank := m.ownerOf(le.Rel); rank >= 0 {
				return rank, err
			}
		}
		return -1, fmt.Errorf("fetch: %w", err)
	}
	return -1, nil
}

// linuxArch maps linux platform keys to nvcc's targets/<arch>-linux names.
var linuxArch = map[string]string{
	"linux-x86_64":  "x86_64",
	"linux-sbsa":    "sbsa",
	"linux-aarch64": "aarch64",
	"linux-ppc64le": "ppc64le",
}

// LinkLinuxLayout adds the links nvcc.profile may look for in a merged
// Linux toolkit: lib64 → lib, and targets/<arch>-linux/{include,lib,lib64}
// → ../../include, ../../lib. Links are only made where the target exists
// and the name is free, so it is safe to run more than once. It writes
// through an os.Root on dir and refuses a targets folder (or arch folder)
// that is a symlink rather than write through it.
func LinkLinuxLayout(dir, platform string) error {
	arch, ok := linuxArch[platform]
	if !ok {
		return fmt.Errorf("link layout: %q is not a linux platform", platform)
	}
	t, err := rootfs.Open(dir)
	if err != nil {
		return fmt.Errorf("link layout: %w", err)
	}
	defer t.Close()
	if err := linkLayout(t, arch); err != nil {
		return fmt.Errorf("link layout: %w", err)
	}
	return nil
}

func linkLayout(t *rootfs.Tree, arch string) error {
	r := t.Root()
	isDir := func(p string) bool { st, err := r.Stat(p); return err == nil && st.IsDir() }
	free := func(p string) bool { _, err := r.Lstat(p); return errors.Is(err, fs.ErrNotExist) }
	link := func(target, name string) error {
		if err := r.Symlink(target, name); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		return nil
	}
	if isDir("lib") && free("lib64") {
		if err := link("lib", "lib64"); err != nil {
			return err
		}
	}
	if !isDir("lib") && !isDir("include") {
		return nil
	}
	tdir := "targets/" + arch + "-linux"
	if err := t.MkdirAll(tdir); err != nil {
		return err
	}
	for _, l := range []struct{ name, target, check string }{
		{"include", "../../include", "include"},
		{"lib", "../../lib", "lib"},
		{"lib64", "../../lib", "lib"},
	} {
		if isDir(l.check) && free(tdir+"/"+l.name) {
			if err := link(l.target, tdir+"/"+l.name); err != nil {
				return err
			}
		}
	}
	return nil
}

// readAhead decodes src in its own goroutine, up to len(bufs) chunks
// ahead of the reader, so decompression overlaps with writing files.
// Close stops the goroutine and waits for it, so bufs can be reused.
func readAhead(src io.Reader, bufs [][]byte) *aheadReader {
	r := &aheadReader{full: make(chan chunk, len(bufs)), free: make(chan []byte, len(bufs)), done: make(chan struct{}), exited: make(chan struct{})}
	for _, b := range bufs {
		r.free <- b
	}
	go r.fill(src)
	return r
}

type chunk struct {
	b   []byte
	err error
}

type aheadReader struct {
	full   chan chunk
	free   chan []byte
	done   chan struct{}
	exited chan struct{}
	once   sync.Once

	cur []byte // unread part of buf
	buf []byte
	err error
}

func (r *aheadReader) fill(src io.Reader) {
	defer close(r.exited)
	for {
		var buf []byte
		select {
		case buf = <-r.free:
		case <-r.done:
			return
		}
		buf = buf[:cap(buf)]
		n := 0
		var err error
		for n < len(buf) && err == nil {
			var k int
			k, err = src.Read(buf[n:])
			n += k
		}
		select {
		case r.full <- chunk{buf[:n], err}:
		case <-r.done:
			return
		}
		if err != nil {
			return
		}
	}
}

func (r *aheadReader) Read(p []byte) (int, error) {
	for len(r.cur) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		if r.buf != nil {
			r.free <- r.buf
			r.buf = nil
		}
		c := <-r.full
		r.buf, r.cur, r.err = c.b, c.b, c.err
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}

// Close stops the decoding goroutine and waits for it to exit.
func (r *aheadReader) Close() error {
	r.once.Do(func() { close(r.done) })
	<-r.exited
	return nil
}
