package pypi

import (
	"archive/zip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"sync"

	"github.com/cudaenv/cudaenv/fetch"
	"github.com/cudaenv/cudaenv/internal/filelist"
	"github.com/cudaenv/cudaenv/internal/rootfs"
)

// WheelCache is the cache of unpacked trees (fetch.UnpackedCache) as
// wheels use it: each wheel is unpacked once, laid out as ExtractWheel
// lays it out (without the development links, which depend on the tree it
// joins), with each file's sum from the wheel's RECORD, else hashed as it
// is written. Installing the same wheel again gives the store clones or
// hard links of those read-only files, not inflated copies; where the
// store is on another file system, they are copied.
//
// An entry is used only if this user made it and it is for this very
// wheel, project and version; its files are read again only when their
// fingerprints are not the ledger's (see fetch.UnpackedCache.Place). An
// entry that fails a check is reported through Notice once, removed, and
// the wheel is unpacked again.
type WheelCache struct {
	*fetch.UnpackedCache
}

// NewWheelCache is the cache of unpacked wheels in the download cache dir.
func NewWheelCache(dir string, notice func(string)) WheelCache {
	return WheelCache{fetch.NewUnpackedCache(dir, notice)}
}

// wheelRules are the names and link targets a wheel's entry may hold:
// those ExtractWheel could have written.
var wheelRules = fetch.IndexRules{
	Name: func(p string) error {
		if err := checkEntryName(p); err != nil {
			return err
		}
		if strings.HasSuffix(p, "/") {
			return errors.New("a folder")
		}
		return nil
	},
	Link: checkLinkTarget,
}

// decodeUnpackedIndex parses a wheel's entry index strictly.
func decodeUnpackedIndex(data []byte) (*fetch.UnpackedIndex, error) {
	return fetch.DecodeUnpackedIndex(data, wheelRules)
}

// Unpack is ExtractPlannedWheel through the cache: the wheel (sha256 sha,
// checked by the caller) is unpacked into a new entry of the cache, which
// is then cloned or linked into dest. Where the cache cannot be used
// (none, not this user's, another file system than dest's, a store that
// owns its files) it is ExtractPlannedWheel.
func (c WheelCache) Unpack(ctx context.Context, r io.ReaderAt, size int64, sha, dest, project, version string) error {
	wp, err := openPlannedWheel(ctx, r, size, project, version)
	if err != nil {
		return err
	}
	if !c.UsableFor(dest, sha) {
		// Written once, where it is installed.
		return extractPlanned(ctx, wp, dest)
	}
	entry, idx, done, err := c.NewEntry(sha, func(tree string) (*fetch.UnpackedIndex, error) {
		idx, err := unpackInto(ctx, wp, tree, c.WasRefused(sha))
		if err != nil {
			return nil, err
		}
		idx.Project, idx.Version = project, version
		return idx, nil
	})
	if err != nil {
		// Most likely the cache's disk: the store's may still have room.
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return extractPlanned(ctx, wp, dest)
	}
	defer done()
	// The sums are the wheel's own (its RECORD, inside the wheel whose
	// sha256 the index gave) or were hashed as written: the entry is
	// vouched for from now on.
	err = c.place(ctx, entry, idx, dest, false)
	var re *fetch.RefusedEntry
	if errors.As(err, &re) {
		// Changed between writing and linking: by nobody but this user.
		return fmt.Errorf("extract wheel: the cache of unpacked wheels changed while it was written (%s); run: cudaenv cache prune", re.Why)
	}
	return err
}

// Reuse installs the wheel sha (planned as project==version) into dest
// from the cache, and reports whether it did. An entry that is missing
// is nothing to report; one that fails a check is reported, removed, and
// Reuse returns false, so that the wheel is unpacked again. Files already
// placed into dest by then are regular files that unpacking replaces;
// symlinks are made only once every file has passed.
func (c WheelCache) Reuse(ctx context.Context, sha, dest, project, version string) (bool, error) {
	entry, unlock, ok := c.Lookup(sha)
	if !ok {
		return false, nil
	}
	defer unlock()
	idx, err := c.ReadIndex(entry, sha, wheelRules)
	if err == nil {
		if NormalizeProject(idx.Project) != NormalizeProject(project) || !SameVersion(idx.Version, version) {
			err = fetch.Refuse("index.json is for %s %s", quoteMeta(idx.Project), quoteMeta(idx.Version))
		} else {
			err = c.place(ctx, entry, idx, dest, true)
		}
	}
	var re *fetch.RefusedEntry
	if !errors.As(err, &re) {
		return err == nil, err
	}
	c.Refused(entry, sha, project+" "+version, "wheel", re)
	return false, nil
}

// place puts an entry's tree into dest (see fetch.UnpackedCache.Place),
// then the symlinks in the wheel's order, then the development links,
// then every link resolved, as ExtractWheel leaves a tree.
func (c WheelCache) place(ctx context.Context, entry string, idx *fetch.UnpackedIndex, dest string, verify bool) error {
	t, err := rootfs.Open(dest)
	if err != nil {
		return fmt.Errorf("open extraction target: %w", err)
	}
	defer t.Close()
	if _, err := c.Place(ctx, entry, idx, fetch.DirectTarget(t), verify, true); err != nil {
		var re *fetch.RefusedEntry
		if errors.As(err, &re) || ctx.Err() != nil {
			return err
		}
		return fmt.Errorf("extract wheel: %w", err)
	}
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

// unpackInto writes the wheel into tree (a new, empty folder) read-only,
// and returns its index. A file's sha256 is the one the wheel's RECORD
// gives for it (at its size), else it is hashed as it is written; with
// hashAll every file is hashed.
func unpackInto(ctx context.Context, wp *wheelPlan, tree string, hashAll bool) (*fetch.UnpackedIndex, error) {
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
	files := map[string]fetch.UnpackedFile{}
	opts := writeOptions{readOnly: true,
		known: func(f *zip.File) ([32]byte, bool) {
			r, ok := record[f.Name]
			return r.sum, ok && r.size == f.UncompressedSize64
		},
		wrote: func(f *zip.File, rel string, perm fs.FileMode, size int64, sum []byte) {
			if sum == nil {
				known := record[f.Name].sum
				sum = known[:]
			}
			mu.Lock()
			files[rel] = fetch.UnpackedFile{Path: rel, Exec: perm&0o111 != 0, Size: size, SHA256: hex.EncodeToString(sum)}
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
	idx := &fetch.UnpackedIndex{Files: []fetch.UnpackedFile{}, Links: []fetch.UnpackedLink{}}
	for i, j := range wp.jobs {
		if last[j.rel] != i {
			continue
		}
		if j.f.Mode()&fs.ModeSymlink != 0 {
			target, err := t.Root().Readlink(j.rel)
			if err != nil {
				return nil, err
			}
			idx.Links = append(idx.Links, fetch.UnpackedLink{Path: j.rel, Target: target})
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
