package fetch

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	fastxz "github.com/cudaenv/cudaenv/internal/xz"
	"github.com/mholt/archives"
)

// merger union-merges archives into root, like NVIDIA's parse_redist.py:
// each archive's top folder is stripped, and where archives overlap the
// one with the higher rank (later in Fetch's list) wins, whatever order
// they finish in. Every file and link is written under a temporary name
// and renamed into place, so nothing is ever written through an existing
// name: a symlink planted by an archive cannot redirect a later write, and
// no directory entry is ever a symlink on the way to a new entry.
type merger struct {
	root string

	mu    sync.Mutex
	owner map[string]int // rel path → rank of the archive that wrote it
	links []linkRec      // symlinks created, checked at the end

	dirs sync.Map // rel dir → struct{}: known to be a real directory
	seq  atomic.Int64
}

func newMerger(root string) *merger {
	return &merger{root: root, owner: map[string]int{}}
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

// extract unpacks the archive file at p (of artifact a) with the given rank.
func (m *merger) extract(ctx context.Context, u *unpacker, p string, a *Artifact, rank int) error {
	if a.Unpack != nil {
		return a.Unpack(p, m.root)
	}
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	x := &archiveExtraction{m: m, rank: rank}
	name := strings.ToLower(a.RelativePath)
	u.br.Reset(f)
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
		err = archives.Tar{}.Extract(ctx, ahead, x.handle)
		if err == nil {
			// archive/tar stops at the end-of-archive blocks; make sure
			// the compressed stream (and its checks) really ends too.
			_, err = io.Copy(io.Discard, ahead)
		}
		return err
	case strings.HasSuffix(name, ".tar.gz") || strings.HasSuffix(name, ".tgz"):
		gr, err := archives.Gz{}.OpenReader(u.br)
		if err != nil {
			return fmt.Errorf("gzip: %w", err)
		}
		defer gr.Close()
		return archives.Tar{}.Extract(ctx, gr, x.handle)
	case strings.HasSuffix(name, ".tar"):
		return archives.Tar{}.Extract(ctx, u.br, x.handle)
	case strings.HasSuffix(name, ".zip"):
		return archives.Zip{}.Extract(ctx, f, x.handle)
	}
	return fmt.Errorf("unsupported archive type: %s", path.Base(a.RelativePath))
}

// archiveExtraction is the state of one archive being unpacked.
type archiveExtraction struct {
	m    *merger
	rank int
	top  string // the archive's top folder, from its first entry
}

func (x *archiveExtraction) handle(ctx context.Context, fi archives.FileInfo) error {
	rel, err := x.relPath(fi.NameInArchive)
	if err != nil {
		return err
	}
	if rel == "" {
		return nil // the top folder itself
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
			return fmt.Errorf("hard link %s: %w", fi.NameInArchive, err)
		}
		if target == "" {
			return fmt.Errorf("refusing hard link %s → %s: not a file", fi.NameInArchive, fi.LinkTarget)
		}
		return x.m.hardlink(rel, target, x.rank)
	}
	return fmt.Errorf("refusing %s: %s entries are not allowed", fi.NameInArchive, kind)
}

type kind string

const (
	kindDir      kind = "directory"
	kindFile     kind = "file"
	kindSymlink  kind = "symlink"
	kindHardlink kind = "hard link"
)

func entryKind(fi archives.FileInfo) kind {
	if h, ok := fi.Header.(*tar.Header); ok {
		switch h.Typeflag {
		case tar.TypeReg, tar.TypeRegA, tar.TypeGNUSparse:
			return kindFile
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
	if rel == "" || rel == "." {
		return nil
	}
	if _, ok := m.dirs.Load(rel); ok {
		return nil
	}
	if parent := path.Dir(rel); parent != "." {
		if err := m.ensureDir(parent); err != nil {
			return err
		}
	}
	full := filepath.Join(m.root, filepath.FromSlash(rel))
	st, err := os.Lstat(full)
	if errors.Is(err, os.ErrNotExist) {
		if err := os.Mkdir(full, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return err
		}
		st, err = os.Lstat(full)
	}
	if err != nil {
		return err
	}
	switch {
	case st.Mode()&os.ModeSymlink != 0:
		return fmt.Errorf("refusing to extract through symlink %s", rel)
	case !st.IsDir():
		return fmt.Errorf("%s is a file in one archive and a directory in another", rel)
	}
	m.dirs.Store(rel, struct{}{})
	return nil
}

func (m *merger) tempName(rel string) string {
	return filepath.Join(m.root, filepath.FromSlash(path.Dir(rel)), ".cudaenv-"+strconv.FormatInt(m.seq.Add(1), 10)+".tmp")
}

// commit renames tmp to rel unless an archive of higher rank already wrote
// rel.
func (m *merger) commit(rel, tmp string, rank int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := m.owner[rel]; ok && r > rank {
		return os.Remove(tmp)
	}
	full := filepath.Join(m.root, filepath.FromSlash(rel))
	if err := os.Rename(tmp, full); err != nil {
		os.Remove(tmp)
		if st, serr := os.Lstat(full); serr == nil && st.IsDir() {
			return fmt.Errorf("%s is a directory in one archive and not in another", rel)
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
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	buf := *bp
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
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			werr = err
			break
		}
	}
	if err := errors.Join(werr, f.Close()); err != nil {
		os.Remove(tmp)
		return err
	}
	return m.commit(rel, tmp, rank)
}

// symlink creates rel → target. The target must be relative and, read as
// a path from rel's directory, stay inside root; after all archives are
// merged, checkLinks resolves every link for real.
func (m *merger) symlink(rel, target string, rank int) error {
	if target == "" || strings.ContainsAny(target, "\\\x00") || strings.HasPrefix(target, "/") || (len(target) >= 2 && target[1] == ':') {
		return fmt.Errorf("refusing symlink %s → %q: target must be a relative path", rel, target)
	}
	if r := path.Join(path.Dir(rel), target); r == ".." || strings.HasPrefix(r, "../") {
		return fmt.Errorf("refusing symlink %s → %s: points outside the tree", rel, target)
	}
	if err := m.ensureDir(path.Dir(rel)); err != nil {
		return err
	}
	tmp := m.tempName(rel)
	if err := os.Symlink(target, tmp); err != nil {
		return err
	}
	if err := m.commit(rel, tmp, rank); err != nil {
		return err
	}
	m.mu.Lock()
	m.links = append(m.links, linkRec{rel, rank})
	m.mu.Unlock()
	return nil
}

// hardlink links rel to target, a regular file already extracted.
func (m *merger) hardlink(rel, target string, rank int) error {
	full := filepath.Join(m.root, filepath.FromSlash(target))
	st, err := os.Lstat(full)
	if err != nil || !st.Mode().IsRegular() {
		return fmt.Errorf("refusing hard link %s → %s: target is not a file extracted before it", rel, target)
	}
	// The target's directories must be real ones we made.
	if d := path.Dir(target); d != "." {
		if _, ok := m.dirs.Load(d); !ok {
			return fmt.Errorf("refusing hard link %s → %s: target is not a file extracted before it", rel, target)
		}
	}
	if err := m.ensureDir(path.Dir(rel)); err != nil {
		return err
	}
	tmp := m.tempName(rel)
	if err := os.Link(full, tmp); err != nil {
		return err
	}
	return m.commit(rel, tmp, rank)
}

type linkRec struct {
	rel  string
	rank int
}

// checkLinks resolves every symlink created and refuses the tree if one
// leads outside root (possible through chains such as a → ".", b → "a/..").
// It returns the rank of the archive that made the offending link.
func (m *merger) checkLinks() (int, error) {
	realRoot, err := filepath.EvalSymlinks(m.root)
	if err != nil {
		return -1, err
	}
	for _, l := range m.links {
		rel := l.rel
		full := filepath.Join(m.root, filepath.FromSlash(rel))
		st, err := os.Lstat(full)
		if err != nil || st.Mode()&os.ModeSymlink == 0 {
			continue // replaced by a later archive
		}
		resolved, err := filepath.EvalSymlinks(full)
		if err != nil {
			continue // dangling: its target was checked when it was made
		}
		if !within(realRoot, resolved) {
			os.Remove(full)
			return l.rank, fmt.Errorf("refusing symlink %s: resolves outside the tree", rel)
		}
	}
	return -1, nil
}

func within(root, p string) bool {
	r, err := filepath.Rel(root, p)
	return err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) && !filepath.IsAbs(r)
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
// and the name is free, so it is safe to run more than once.
func LinkLinuxLayout(dir, platform string) error {
	arch, ok := linuxArch[platform]
	if !ok {
		return fmt.Errorf("link layout: %q is not a linux platform", platform)
	}
	isDir := func(p string) bool { st, err := os.Stat(p); return err == nil && st.IsDir() }
	free := func(p string) bool { _, err := os.Lstat(p); return errors.Is(err, os.ErrNotExist) }
	link := func(target, name string) error {
		if err := os.Symlink(target, name); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("link layout: %w", err)
		}
		return nil
	}
	lib, inc := filepath.Join(dir, "lib"), filepath.Join(dir, "include")
	if isDir(lib) && free(filepath.Join(dir, "lib64")) {
		if err := link("lib", filepath.Join(dir, "lib64")); err != nil {
			return err
		}
	}
	if !isDir(lib) && !isDir(inc) {
		return nil
	}
	t := filepath.Join(dir, "targets", arch+"-linux")
	if err := os.MkdirAll(t, 0o755); err != nil {
		return fmt.Errorf("link layout: %w", err)
	}
	for _, l := range []struct{ name, target, check string }{
		{"include", "../../include", inc},
		{"lib", "../../lib", lib},
		{"lib64", "../../lib", lib},
	} {
		if isDir(l.check) && free(filepath.Join(t, l.name)) {
			if err := link(l.target, filepath.Join(t, l.name)); err != nil {
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
