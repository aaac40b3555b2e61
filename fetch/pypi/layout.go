package pypi

import (
	"archive/zip"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/cudaenv/cudaenv/fetch"
	"github.com/cudaenv/cudaenv/internal/inflate"
	"github.com/cudaenv/cudaenv/internal/rootfs"
)

// Real wheel layouts (testdata/real_layouts.txt has the full lists):
//
//	CUDA 11/12, one folder per package, Python package markers everywhere:
//	  nvidia/__init__.py, nvidia/cuda_runtime/__init__.py, .../lib/__init__.py
//	  nvidia/cuda_runtime/include/cuda_runtime.h, nvidia/cuda_runtime/lib/libcudart.so.12
//	  nvidia/cuda_nvcc/bin/ptxas (no nvcc), nvidia/cuda_nvcc/include/crt/host_config.h,
//	  nvidia/cuda_nvcc/nvvm/lib64/libnvvm.so, nvidia/cuda_nvcc/nvvm/libdevice/libdevice.10.bc
//	  nvidia/cublas/lib/libcublas.so.12, nvidia/cuda_cccl/include/thrust/version.h
//	  Windows: nvidia/cuda_runtime/bin/cudart64_12.dll, nvidia/cuda_nvcc/nvvm/bin/nvvm64_40_0.dll
//	CUDA 13, one shared root, no __init__.py:
//	  nvidia/cu13/bin/{nvcc,ptxas,nvlink,fatbinary,bin2c,cudafe++,nvcc.profile}
//	  nvidia/cu13/bin/cicc, nvidia/cu13/lib/libnvvm.so.4, nvidia/cu13/include/nvvm.h,
//	  nvidia/cu13/nvvm/libdevice/libdevice.10.bc (all from nvidia-nvvm)
//	  nvidia/cu13/include/crt/... (nvidia-cuda-crt), nvidia/cu13/include/cccl/... (nvidia-cuda-cccl)
//	  nvidia/cu13/lib/libcudart.so.13, libcudart_static.a, libcudadevrt.a
//	  nvidia/cu13/.metadata/... (build provenance in nvidia-cuda-cccl)
//	  Windows: nvidia/cu13/bin/x86_64/cudart64_13.dll, nvidia/cu13/lib/x64/cudart.lib,
//	  nvidia/cu13/bin/cicc.exe, nvidia/cu13/bin/x86_64/nvvm64_40_0.dll
//	Library wheels (checked on PyPI, Linux x86_64, newest releases):
//	  nvidia-nccl-cu12/-cu13:      nvidia/nccl/{include,lib}/...
//	  nvidia-cusparselt-cu12 0.8.1: nvidia/cusparselt/include/cusparseLt.h, .../lib/libcusparseLt.so.0
//	  nvidia-cusparselt-cu13 0.10.0: nvidia/cu13/include/cusparseLt.h, nvidia/cu13/lib/libcusparseLt.so.0
//	  nvidia-cudss-cu12/-cu13 1.0.0.35: nvidia/cu12/ and nvidia/cu13/ {include/cudss.h, lib/libcudss.so.1}
//	  nvidia-nvshmem-cu12/-cu13 3.8.0: nvidia/nvshmem/{include/nvshmem.h, lib/libnvshmem_host.so.3, share/...}
//	  cutensor-cu12/-cu13 2.8.1 (no nvidia- prefix): cutensor/{include/cutensor.h, lib/libcutensor.so.2, LICENSE}
//	Each installs into its own store folder, so dropping the first two
//	segments gives include/ and lib/ for all of them.
//	Every wheel: <project>-<version>.dist-info/{METADATA,WHEEL,RECORD,...}
//
// The store layout is the redist one. CUDA 12 wheels already match it below
// their package folder. CUDA 13 wheels match it too except for NVVM, which
// the nvvm wheel puts in bin, lib and include while the redist archive (and
// nvcc.profile's CICC_PATH=$(TOP)/nvvm/bin) has nvvm/{bin,lib64,include};
// and Windows DLLs, which go to bin/x64 as in the redist archives.

// cu13Moves relocates CUDA 13 shared-root paths to their redist place. Keys
// ending in '/' move a folder, others one file or a file-name prefix
// (marked with a trailing '*').
var cu13Moves = []struct{ from, to string }{
	{"bin/cicc", "nvvm/bin/cicc"},
	{"bin/cicc.exe", "nvvm/bin/cicc.exe"},
	{"bin/x86_64/nvvm64_*", "nvvm/bin/x64/nvvm64_"},
	{"lib/libnvvm.so*", "nvvm/lib64/libnvvm.so"},
	{"include/nvvm.h", "nvvm/include/nvvm.h"},
	{"bin/x86_64/", "bin/x64/"},
}

// bareRoots are the top folders of library wheels that do not live under
// nvidia/ (cutensor-cu12 and -cu13: cutensor/include/cutensor.h,
// cutensor/lib/libcutensor.so.2, cutensor/LICENSE).
var bareRoots = map[string]bool{"cutensor": true}

// errSkip marks wheel entries that have no place in a toolkit tree.
var errSkip = errors.New("skipped")

// EntryPath maps a wheel entry name to its path in a redist-layout toolkit
// tree, so that wheels and redist archives install the same tree:
//
//	nvidia/cuda_runtime/lib/libcudart.so.12 → lib/libcudart.so.12
//	nvidia/cuda_nvcc/nvvm/lib64/libnvvm.so  → nvvm/lib64/libnvvm.so
//	nvidia/cu13/bin/nvcc                    → bin/nvcc
//	nvidia/cu13/bin/cicc                    → nvvm/bin/cicc
//	nvidia/cu13/lib/libnvvm.so.4            → nvvm/lib64/libnvvm.so.4
//
// ok is false for entries that are skipped (dist-info, __init__.py,
// folders, build metadata, anything outside nvidia/) and for hostile names
// (absolute, '..', backslashes, NUL); ExtractWheel tells those apart.
func EntryPath(name string) (dest string, ok bool) {
	dest, err := entryPath(name)
	return dest, err == nil
}

func entryPath(name string) (string, error) {
	if err := checkEntryName(name); err != nil {
		return "", err
	}
	if strings.HasSuffix(name, "/") {
		return "", errSkip // folders are made as files need them
	}
	parts := strings.Split(name, "/")
	if bareRoots[parts[0]] {
		parts = append([]string{"nvidia"}, parts...) // cutensor/lib/x is nvidia/cutensor/lib/x elsewhere
	}
	base := parts[len(parts)-1]
	if parts[0] != "nvidia" || len(parts) < 3 || base == "__init__.py" || strings.HasSuffix(base, ".pyc") {
		return "", errSkip
	}
	pkg, rest := parts[1], parts[2:]
	if pkg == "__pycache__" || slices.Contains(rest, "__pycache__") {
		return "", errSkip
	}
	rel := strings.Join(rest, "/")
	if isSharedRoot(pkg) {
		if rest[0] == ".metadata" {
			return "", errSkip
		}
		for _, m := range cu13Moves {
			switch {
			case strings.HasSuffix(m.from, "/"):
				if r, ok := strings.CutPrefix(rel, m.from); ok {
					return m.to + r, nil
				}
			case strings.HasSuffix(m.from, "*"):
				if r, ok := strings.CutPrefix(rel, strings.TrimSuffix(m.from, "*")); ok && !strings.Contains(r, "/") {
					return m.to + r, nil
				}
			case rel == m.from:
				return m.to, nil
			}
		}
	}
	return rel, nil
}

// isSharedRoot reports whether a folder under nvidia/ is the shared root of
// CUDA 13 and later wheels (cu13, cu14, ...), rather than a package folder.
func isSharedRoot(dir string) bool {
	d, ok := strings.CutPrefix(dir, "cu")
	if !ok || d == "" || strings.TrimLeft(d, "0123456789") != "" {
		return false
	}
	n, err := strconv.Atoi(d)
	return err == nil && n >= 13
}

// checkEntryName refuses names that could leave the target folder or mean
// different things on different systems.
func checkEntryName(name string) error {
	switch {
	case name == "":
		return errors.New("empty entry name")
	case strings.ContainsRune(name, 0):
		return fmt.Errorf("entry %q: NUL in name", name)
	case strings.Contains(name, `\`):
		return fmt.Errorf("entry %q: backslash in name", name)
	case strings.HasPrefix(name, "/"):
		return fmt.Errorf("entry %q: absolute path", name)
	case len(name) >= 2 && name[1] == ':':
		return fmt.Errorf("entry %q: drive letter", name)
	}
	for _, seg := range strings.Split(strings.TrimSuffix(name, "/"), "/") {
		switch seg {
		case "", ".", "..":
			return fmt.Errorf("entry %q: %q segment", name, seg)
		}
	}
	return nil
}

// maxLinkTarget bounds a symlink entry's content.
const maxLinkTarget = 4096

// ExtractWheel unpacks the wheel read from r (size bytes) into dest, mapping
// each entry with EntryPath's rules. dest must exist; existing files are
// replaced, so several wheels merge into one tree as redist archives do.
//
// Wheels cannot hold the development links that redist archives carry
// (lib/libcublas.so → libcublas.so.12), without which -lcublas fails; for
// each shared library lib<name>.so.<N...> it writes, ExtractWheel adds the
// link lib<name>.so → the shortest versioned name, unless the wheel or the
// tree already has that name.
//
// All writes go through a rootfs.Tree (an os.Root on dest), never through
// a symlink, even one inside the tree. It refuses hostile entry names,
// names cudaenv writes itself (receipt.json), entries that are neither
// files, folders nor symlinks, a wheel whose zip directory declares more
// than rootfs.MaxUnpacked of its size, and symlinks that do not resolve,
// within dest, to something that exists once the wheel is in; an existing
// symlink is never replaced, so links already in dest keep resolving where
// they did. Files are written 0755 when the zip gives them any exec bit
// (wheels record Unix modes in the external attributes), else 0644.
func ExtractWheel(r io.ReaderAt, size int64, dest string) error {
	return ExtractWheelContext(context.Background(), r, size, dest)
}

// ExtractWheelContext is ExtractWheel that stops, with ctx's error, soon
// after ctx is done (between entries and inside a large one).
func ExtractWheelContext(ctx context.Context, r io.ReaderAt, size int64, dest string) error {
	wp, err := openWheel(ctx, r, size, nil)
	if err != nil {
		return err
	}
	return extractPlanned(ctx, wp, dest)
}

// wheelPlan is a wheel's entries, every one checked before any is written.
type wheelPlan struct {
	zr      *zip.Reader
	jobs    []entryJob
	written map[string]bool // the names it writes (files and links)
	links   []string        // its symlinks
	inOrder bool            // it must be written in order (links, a name twice)
}

// openWheel reads and checks a wheel's zip directory: every entry name,
// its type and the total size, before anything is written.
// check, if set, is run on the zip directory first (the METADATA check of
// a planned wheel), so the directory is read once.
func openWheel(ctx context.Context, r io.ReaderAt, size int64, check func(*zip.Reader) error) (*wheelPlan, error) {
	zr, err := fetch.OpenZip(r, size)
	if err != nil {
		return nil, fmt.Errorf("open wheel: %w", err)
	}
	if check != nil {
		if err := check(zr); err != nil {
			return nil, err
		}
	}
	if err := checkDeclaredSize(zr, size); err != nil {
		return nil, fmt.Errorf("extract wheel: %w", err)
	}
	// internal/inflate: compress/flate's output and checks, at about twice
	// its speed (BenchmarkInflate); inflating is most of an install's CPU.
	zr.RegisterDecompressor(zip.Deflate, inflate.NewReader)
	wp := &wheelPlan{zr: zr, written: map[string]bool{}}
	for _, f := range zr.File {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rel, err := entryPath(f.Name)
		if errors.Is(err, errSkip) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("extract wheel: %w", err)
		}
		if rootfs.Owned(rel) {
			return nil, fmt.Errorf("extract wheel: entry %q: %s is a name only cudaenv writes", f.Name, rootfs.Show(rel))
		}
		mode := f.Mode()
		switch {
		case mode.IsDir():
			continue
		case mode&fs.ModeSymlink != 0:
			wp.links = append(wp.links, rel)
			wp.inOrder = true // a link can change where later entries land
		case mode.IsRegular():
		default:
			return nil, fmt.Errorf("extract wheel: entry %q: unsupported file type %v", f.Name, mode.Type())
		}
		if wp.written[rel] {
			wp.inOrder = true // the last of the same name wins, as it always did
		}
		wp.written[rel] = true
		wp.jobs = append(wp.jobs, entryJob{f, rel})
	}
	return wp, nil
}

// finishWheel adds the development links for a wheel's libraries (see
// ExtractWheel) and resolves every link the wheel brought, once the whole
// wheel is in the tree.
func finishWheel(root *os.Root, written map[string]bool, links []string) error {
	for link, target := range devLinks(written) {
		if _, err := root.Lstat(link); err == nil {
			continue
		}
		if err := root.Symlink(target, link); err != nil {
			return fmt.Errorf("extract wheel: link %s: %w", link, err)
		}
	}
	// Links are resolved, not just read: lib/z1 → .. and lib/z2 → z1/..
	// each look harmless, and z2 is the tree's parent.
	for _, l := range links {
		if err := rootfs.Resolve(root, l); err != nil {
			return fmt.Errorf("extract wheel: %w", err)
		}
	}
	return nil
}

// checkDeclaredSize refuses a wheel whose zip directory declares more than
// rootfs.MaxUnpacked of its size; archive/zip then holds each entry to
// its declared size.
func checkDeclaredSize(zr *zip.Reader, size int64) error {
	limit := uint64(rootfs.MaxUnpacked(size))
	var total uint64
	for _, f := range zr.File {
		total += f.UncompressedSize64
		if total > limit || total < f.UncompressedSize64 {
			return fmt.Errorf("refusing the wheel: it unpacks to more than %.1f MiB, about %d times its size (an archive bomb?)", float64(limit)/(1<<20), rootfs.MaxExpansion)
		}
	}
	return nil
}

var versionedSO = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(.*/)?(lib[^/]+\.so)\.[0-9]+(\.[0-9]+)*$`) })

// devLinks returns the unversioned .so links to add for a set of written
// paths: link path → target name (in the same folder).
func devLinks(written map[string]bool) map[string]string {
	links := map[string]string{}
	for p := range written {
		m := versionedSO().FindStringSubmatch(p)
		if m == nil {
			continue
		}
		link := m[1] + m[2]
		if written[link] {
			continue
		}
		target := path.Base(p)
		if old, ok := links[link]; ok && (len(old) < len(target) || len(old) == len(target) && old < target) {
			continue
		}
		links[link] = target
	}
	return links
}

func extractFile(ctx context.Context, t *rootfs.Tree, f *zip.File, rel string, buf []byte, o writeOptions) error {
	perm := fs.FileMode(0o644)
	if f.Mode()&0o111 != 0 {
		perm = 0o755
	}
	src, err := f.Open()
	if err != nil {
		return fmt.Errorf("entry %q: %w", f.Name, err)
	}
	defer src.Close()
	mode := perm
	if o.readOnly {
		mode &^= 0o222
	}
	out, err := t.CreateFile(rel, mode)
	if err != nil {
		return fmt.Errorf("entry %q: %w", f.Name, err)
	}
	var w io.Writer = fileWriter{out}
	var h hash.Hash
	var known [sha256.Size]byte
	isKnown := false
	if o.known != nil {
		known, isKnown = o.known(f)
	}
	if (o.wrote != nil || o.sums != nil) && !isKnown {
		h = sha256.New()
		w = io.MultiWriter(w, h)
	}
	// zip checks the CRC-32 and the declared size at EOF.
	n, err := io.CopyBuffer(w, ctxReader{ctx, src}, buf)
	if err != nil {
		out.Close()
		return fmt.Errorf("entry %q: %w", f.Name, err)
	}
	var sum []byte
	if h != nil {
		sum = h.Sum(nil)
	}
	if o.sums != nil {
		if fi, err := out.Stat(); err == nil {
			s := known
			if !isKnown {
				copy(s[:], sum)
			}
			o.sums.Add(fi, s)
		}
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("entry %q: %w", f.Name, err)
	}
	if o.wrote != nil {
		o.wrote(f, rel, perm, n, sum)
	}
	return nil
}

// fileWriter hides *os.File's ReadFrom, so io.CopyBuffer uses the
// caller's buffer.
type fileWriter struct{ f *os.File }

func (w fileWriter) Write(p []byte) (int, error) { return w.f.Write(p) }

func extractLink(t *rootfs.Tree, f *zip.File, rel string) error {
	if f.UncompressedSize64 > maxLinkTarget {
		return fmt.Errorf("entry %q: symlink target too long", f.Name)
	}
	src, err := f.Open()
	if err != nil {
		return fmt.Errorf("entry %q: %w", f.Name, err)
	}
	b, err := io.ReadAll(io.LimitReader(src, maxLinkTarget+1))
	src.Close()
	if err != nil {
		return fmt.Errorf("entry %q: %w", f.Name, err)
	}
	target := string(b)
	if err := checkLinkTarget(rel, target); err != nil {
		return fmt.Errorf("entry %q: %w", f.Name, err)
	}
	if err := t.MkdirAll(path.Dir(rel)); err != nil {
		return fmt.Errorf("entry %q: %w", f.Name, err)
	}
	if err := removeExisting(t.Root(), rel); err != nil {
		return fmt.Errorf("entry %q: %w", f.Name, err)
	}
	if err := t.Root().Symlink(target, rel); err != nil {
		return fmt.Errorf("entry %q: %w", f.Name, err)
	}
	return nil
}

// checkLinkTarget accepts only relative targets that stay inside the tree
// when read from the link's folder; ExtractWheel resolves them for real
// once the wheel is in.
func checkLinkTarget(rel, target string) error {
	switch {
	case target == "":
		return errors.New("empty symlink target")
	case strings.ContainsRune(target, 0) || strings.Contains(target, `\`):
		return fmt.Errorf("symlink target %q: bad characters", target)
	case path.IsAbs(target) || (len(target) >= 2 && target[1] == ':'):
		return fmt.Errorf("symlink target %q is absolute", target)
	}
	joined := path.Join(path.Dir(rel), target)
	if joined == ".." || strings.HasPrefix(joined, "../") {
		return fmt.Errorf("symlink target %q leaves the tree", target)
	}
	return nil
}

// removeExisting clears the way for a new file or link at rel. It refuses
// to replace a folder with a file, and to replace a symlink: links already
// in the tree were checked to resolve inside it, and swapping one for
// another could send them elsewhere.
func removeExisting(root *os.Root, rel string) error {
	fi, err := root.Lstat(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return fmt.Errorf("%s is a folder in the tree", rel)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s is a symlink in the tree; refusing to replace it", rel)
	}
	return root.Remove(rel)
}

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
