package store

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cudaenv/cudaenv/internal/dirs"
	"github.com/cudaenv/cudaenv/internal/filelist"
)

// ownedName is true for the names the store writes at an entry's top
// beside its files, which its file list leaves out.
func ownedName(rel string) bool { return rel == ReceiptName || rel == filelist.Name }

// writeFileList lists the staged tree (each file's sum from sums where the
// install reported it, hashed otherwise), writes the list beside the
// receipt and notes it, the count of files and their size in r.
func (s *Store) writeFileList(stage string, sums *filelist.Sums, r *Receipt) error {
	l, _, err := filelist.Build(stage, sums, ownedName)
	if err != nil {
		return fmt.Errorf("list the installed files: %w", err)
	}
	data := l.Encode()
	if err := writeOwned(stage, filelist.Name, data, s.Shared); err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	r.Files, r.FileList, r.InstalledBytes = l.Files(), hex.EncodeToString(sum[:]), l.Bytes()
	if !s.Shared && l.Shared() > 0 {
		// So that a file changed through another store's name can be
		// traced to this store's installs.
		if root, err := filepath.Abs(s.Dirs.Root); err == nil {
			_ = s.ledger.AddStore(root)
		}
	}
	return nil
}

// FileList reads the entry's list of files, checked against its receipt;
// nil and no error for an entry whose receipt names none (installed
// before file lists, or linked).
func (e Entry) FileList() (*filelist.List, error) {
	if e.Receipt.FileList == "" || e.Linked() || e.Err != nil {
		return nil, nil
	}
	data, err := readOwnFile(filepath.Join(e.Dir, filelist.Name), filelist.MaxSize)
	if err != nil {
		return nil, fmt.Errorf("its file list: %w", err)
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != e.Receipt.FileList {
		return nil, errors.New("its file list is not the one its receipt names")
	}
	l, err := filelist.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("its file list: %w", err)
	}
	return l, nil
}

// Health is what the fast check (fingerprints, see filelist.Check) says
// of an installed entry.
type Health struct {
	// Damage says what changed, naming a few files (see Entry.Damage).
	Damage error
	// Problems are every file found changed: damage, and the files whose
	// fingerprint can no longer tell (filelist.Changed).
	Problems []filelist.Problem
	// Unchecked counts the files whose fingerprint can no longer tell:
	// their inode was touched (a hard link made or removed elsewhere, a
	// chmod undone) and their content was not read; cudaenv verify
	// reads them.
	Unchecked int
	// Others are the installs (of this store or another) that hold a
	// file changed here: the change is theirs too.
	Others []string
	// NoList: the receipt names no file list (installed by an older
	// cudaenv), so only the key files of its components were checked.
	NoList bool
}

// Damage says what is wrong with an installed entry that its receipt does
// not explain: a receipt field that does not decode, or files changed
// since it was installed, by its file list's fingerprints (a few files
// named); for an entry installed before file lists, a key file of its
// components that is gone (bin/ deleted, say). nil for a whole entry, and
// for linked and broken ones (Err says what is wrong with those).
func (e Entry) Damage() error { return e.Health().Damage }

// Health runs the fast check on the entry (see Health).
func (e Entry) Health() Health {
	if e.Err != nil || e.Linked() {
		return Health{}
	}
	if e.receiptErr != nil {
		return Health{Damage: fmt.Errorf("%s does not read: %v", ReceiptName, e.receiptErr)}
	}
	if e.Receipt.FileList == "" {
		return Health{Damage: e.keyFilesGone(), NoList: true}
	}
	l, err := e.FileList()
	if err != nil {
		return Health{Damage: err}
	}
	res, err := filelist.Check(e.Dir, l, filelist.Options{Ledger: e.ledger})
	if err != nil {
		return Health{Damage: fmt.Errorf("cannot be checked: %v", err)}
	}
	return e.health(res)
}

// health words a check's result.
func (e Entry) health(res *filelist.Result) Health {
	h := Health{Problems: res.Problems}
	damaged := res.Damaged()
	h.Unchecked = len(res.Problems) - len(damaged)
	if len(damaged) == 0 {
		return h
	}
	h.Others = e.sharedWith(damaged)
	text := DamageText(damaged)
	if len(h.Others) > 0 {
		text += "; the same files are in " + strings.Join(h.Others, ", ")
	}
	h.Damage = errors.New(text)
	return h
}

// DamageText names what changed, the first few files and how many more:
// "lib/libcudart.so.13 deleted, bin/nvcc modified, and 3 more". What a
// deleted folder held is not named again.
func DamageText(problems []filelist.Problem) string {
	var gone []string
	var named []string
	more := 0
	for _, p := range problems {
		if p.Kind == filelist.Missing {
			if slices.ContainsFunc(gone, func(g string) bool { return strings.HasPrefix(p.Path, g+"/") }) {
				continue
			}
			gone = append(gone, p.Path)
		}
		if len(named) == 3 {
			more++
			continue
		}
		named = append(named, p.Name()+" "+p.What())
	}
	if more > 0 {
		named = append(named, fmt.Sprintf("and %d more", more))
	}
	return strings.Join(named, ", ")
}

// keyFilesGone is the check of an entry whose receipt names no file list:
// a file its components always have (keyFiles) that is gone.
func (e Entry) keyFilesGone() error {
	var gone []string
	for _, c := range e.Receipt.Components {
		if c.ID == "cuda_nvcc" && e.Receipt.LibrariesOnly {
			continue // the CUDA 12 nvcc wheel ships no nvcc
		}
		for _, f := range keyFiles[c.ID] {
			if !exists(filepath.Join(e.Path, filepath.FromSlash(f[0]))) && (f[1] == "" || !exists(filepath.Join(e.Path, filepath.FromSlash(f[1])))) {
				gone = append(gone, f[0]+" ("+c.ID+")")
			}
		}
	}
	if len(gone) > 0 {
		return fmt.Errorf("%s missing", strings.Join(gone, ", "))
	}
	return nil
}

// Verification is what Verify found of one entry.
type Verification struct {
	Health
	Result *filelist.Result // nil without a file list
}

// Verify checks an installed entry against its file list: by fingerprint,
// reading the files whose only change the ledger cannot vouch for, or,
// with full, reading every file. Files read and found as listed are
// recorded in the ledger, so that their fingerprints pass again. An
// entry without a file list gets the key-file check (Health.NoList).
func (e Entry) Verify(full bool) (*Verification, error) {
	if e.Err != nil {
		return nil, e.Err
	}
	if e.Linked() {
		return &Verification{}, nil
	}
	if e.receiptErr != nil || e.Receipt.FileList == "" {
		return &Verification{Health: e.Health()}, nil
	}
	l, err := e.FileList()
	if err != nil {
		return &Verification{Health: Health{Damage: err}}, nil
	}
	res, err := filelist.Check(e.Dir, l, filelist.Options{Full: full, HashChanged: true, Ledger: e.ledger})
	if err != nil {
		return nil, err
	}
	if len(res.Vouch) > 0 {
		_ = e.ledger.Record(res.Vouch)
	}
	return &Verification{Health: e.health(res), Result: res}, nil
}

// sharedWith names the other installs that hold a file changed in place
// here (one with other names): this store's other entries, and those of
// the other stores sharing the download cache's files (ledger.Stores),
// "CUDA 12.6.3" or "CUDA 13.0.2 in /other/store".
func (e Entry) sharedWith(problems []filelist.Problem) []string {
	type key struct{ dev, ino uint64 }
	want := map[key]bool{}
	for _, p := range problems {
		if p.InPlace() && p.Nlink > 1 {
			want[key{p.Dev, p.Ino}] = true
		}
	}
	if len(want) == 0 {
		return nil
	}
	root := filepath.Dir(filepath.Dir(e.Dir))
	roots := []string{root}
	for _, r := range e.ledger.Stores() {
		if !samePath(r, root) && !slices.Contains(roots, r) {
			roots = append(roots, r)
		}
	}
	var out []string
	for i, r := range roots {
		s := &Store{Dirs: dirs.Dirs{Root: r}}
		for _, k := range Kinds() {
			entries, _ := s.listOwn(k)
			for _, o := range entries {
				if o.Dir == e.Dir {
					continue
				}
				l, err := o.FileList()
				if err != nil || l == nil {
					continue
				}
				if slices.ContainsFunc(l.Entries, func(f filelist.Entry) bool { return f.Type == filelist.File && want[key{l.Dev, f.Ino}] }) {
					label := o.Label()
					if o.Kind == CUDA {
						label = "CUDA " + label
					}
					if i > 0 {
						label += " in " + path.Clean(r)
					}
					out = append(out, label)
				}
			}
		}
	}
	return out
}
