package fetch

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/cudaenv/cudaenv/internal/filelist"
	"github.com/cudaenv/cudaenv/internal/ledger"
	"github.com/cudaenv/cudaenv/internal/rootfs"
)

// NVIDIA's redist archives go through the cache of unpacked trees as
// wheels do: each is unpacked once into an entry (every file hashed as it
// is written), and merged into an install from there by clone or hard
// link, each file at its rank (the later archive wins a name, whatever
// the order they finish in), so that a reinstall, or another release with
// the same archive, decodes nothing.

// reusable reports whether a is an archive Fetch itself unpacks (not a
// wheel, which has its own Unpack) and the cache of unpacked trees may
// hold it.
func (m *merger) reusable(a *Artifact) bool {
	return m.cache != nil && a.Unpack == nil && a.Reuse == nil && ValidSHA256(a.SHA256)
}

// reuse merges the archive a from its entry in the cache at rank, and
// reports whether it did. A missing entry is nothing to report; one that
// fails a check is reported once, removed, and reuse returns false, so
// that the archive is unpacked again (it writes each of its names again
// at the same rank).
func (m *merger) reuse(ctx context.Context, a *Artifact, rank int) (bool, error) {
	entry, unlock, ok := m.cache.Lookup(a.SHA256)
	if !ok {
		return false, nil
	}
	defer unlock()
	idx, err := m.cache.ReadIndex(entry, a.SHA256, IndexRules{})
	if err == nil {
		if idx.Project != a.Component || idx.Version != a.Version {
			err = Refuse("index.json is for %s %s", rootfs.Show(idx.Project), rootfs.Show(idx.Version))
		} else {
			err = m.place(ctx, entry, idx, rank, true)
		}
	}
	var re *RefusedEntry
	if !errors.As(err, &re) {
		return err == nil, err
	}
	m.cache.Refused(entry, a.SHA256, a.label(), "archive", re)
	return false, nil
}

// place merges an entry's tree into the install at rank: its files (see
// UnpackedCache.Place), then its symlinks. The files' states go to the
// ledger once the merge is done (recordPlaced): a later archive that
// wins a name changes the state of the file it displaces.
func (m *merger) place(ctx context.Context, entry string, idx *UnpackedIndex, rank int, verify bool) error {
	states, err := m.cache.Place(ctx, entry, idx, mergeTarget{m, rank}, verify, false)
	if states != nil {
		m.mu.Lock()
		m.placed = append(m.placed, placedEntry{entry, idx, states})
		m.mu.Unlock()
	}
	if err != nil {
		return err
	}
	for _, l := range idx.Links {
		if err := m.symlink(l.Path, l.Target, rank); err != nil {
			return err
		}
	}
	return nil
}

// placedEntry is an entry merged into the install, with its files' states
// once placed.
type placedEntry struct {
	entry  string
	idx    *UnpackedIndex
	states []ledger.State
}

// recordPlaced writes the states of the entries' files, as they are now
// the merge is done, to the ledger: a file whose state changed since it
// was placed in nothing but its ctime (its name in the install replaced
// by a later archive's) is recorded as it is now.
func (m *merger) recordPlaced() {
	if m.cache == nil {
		return
	}
	var all []ledger.State
	for _, p := range m.placed {
		for i, f := range p.idx.Files {
			st := p.states[i]
			if st.Ino == 0 {
				continue
			}
			fi, err := os.Lstat(filepath.Join(p.entry, "tree", filepath.FromSlash(f.Path)))
			if err != nil {
				continue
			}
			now, ok := ledger.StateOf(fi, st.SHA256)
			if !ok || now.Ino != st.Ino || now.Size != st.Size || now.Mtime != st.Mtime || now.Mode != st.Mode {
				continue
			}
			all = append(all, now)
		}
	}
	_ = m.cache.Ledger().Record(all)
}

// mergeTarget places files under temporary names and commits each at its
// rank, as the merger writes an archive's.
type mergeTarget struct {
	m    *merger
	rank int
}

func (t mergeTarget) Tree() *rootfs.Tree { return t.m.tree }
func (t mergeTarget) Name(rel string) string {
	return t.m.tempName(rel)
}
func (t mergeTarget) Commit(rel, tmp string) error { return t.m.commit(rel, tmp, t.rank) }

// cacheable reports whether the archive a, about to be extracted, goes
// into a new entry of the cache of unpacked trees first.
func (m *merger) cacheable(a *Artifact) bool {
	return m.reusable(a) && m.cache.UsableFor(m.root, a.SHA256)
}

// extractCached unpacks the archive f (of artifact a) into a new entry of
// the cache, then merges the entry at rank. Where no entry can be made
// (the cache's disk full, say), it is unpacked straight into the install.
func (m *merger) extractCached(ctx context.Context, u *unpacker, f *os.File, st fs.FileInfo, a *Artifact, rank int, checked func(string, fs.FileInfo) bool) error {
	entry, idx, done, err := m.cache.NewEntry(a.SHA256, func(tree string) (*UnpackedIndex, error) {
		em, err := newMerger(tree)
		if err != nil {
			return nil, err
		}
		defer em.close()
		em.readOnly = true
		sums := filelist.NewSums()
		if err := em.extractFile(filelist.WithSums(ctx, sums), u, f, st, a, 0, checked); err != nil {
			return nil, err
		}
		idx, err := indexOf(tree, sums)
		if err != nil {
			return nil, err
		}
		idx.Project, idx.Version = a.Component, a.Version
		return idx, nil
	})
	if err != nil {
		if ctx.Err() != nil || !isLocal(err) {
			return err
		}
		if _, serr := f.Seek(0, io.SeekStart); serr != nil {
			return err
		}
		return m.extractFile(ctx, u, f, st, a, rank, checked)
	}
	defer done()
	err = m.place(ctx, entry, idx, rank, false)
	var re *RefusedEntry
	if errors.As(err, &re) && ctx.Err() == nil {
		// Changed or gone between writing and linking (a cache prune ran
		// meanwhile): the archive is unpacked straight into the install,
		// each of its names written again at the same rank.
		if _, serr := f.Seek(0, io.SeekStart); serr != nil {
			return fmt.Errorf("the cache of unpacked trees changed while it was written (%s): %w", re.Why, serr)
		}
		return m.extractFile(ctx, u, f, st, a, rank, checked)
	}
	return err
}

// isLocal reports whether an error unpacking into the cache is this
// machine's (a full disk, a folder it cannot write), not the archive's.
func isLocal(err error) bool {
	return isNoSpace(err) || errors.Is(err, fs.ErrPermission) || isReadOnly(err)
}

// indexOf is the index of a tree just unpacked, each file's sum from sums.
func indexOf(tree string, sums *filelist.Sums) (*UnpackedIndex, error) {
	l, _, err := filelist.Build(tree, sums, nil)
	if err != nil {
		return nil, err
	}
	idx := &UnpackedIndex{}
	parents := map[string]bool{}
	for _, e := range l.Entries {
		parents[path.Dir(e.Path)] = true
	}
	for _, e := range l.Entries {
		switch e.Type {
		case filelist.File:
			idx.Files = append(idx.Files, UnpackedFile{Path: e.Path, Exec: e.Perm&0o111 != 0, Size: e.Size, SHA256: hex.EncodeToString(e.SHA256[:])})
		case filelist.Link:
			idx.Links = append(idx.Links, UnpackedLink{Path: e.Path, Target: e.Target})
		case filelist.Dir:
			if !parents[e.Path] {
				idx.Dirs = append(idx.Dirs, e.Path)
			}
		}
	}
	return idx, nil
}
