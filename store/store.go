// Package store keeps side-by-side CUDA toolkits and cuDNN builds on disk:
// it lists them, installs a new tree atomically (staging directory, one
// rename, receipt last), adopts existing toolkits by link, and removes them.
//
// A directory without a readable receipt.json is not an installed version.
// Work in progress sits beside the entries under dot names; whoever next
// takes an entry's lock finds a whole old or a whole new tree, putting back
// one that a killed reinstall had set aside.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cudaenv/cudaenv/internal/dirs"
	"github.com/cudaenv/cudaenv/internal/filelist"
	"github.com/cudaenv/cudaenv/internal/ledger"
	"github.com/cudaenv/cudaenv/internal/rootfs"
	"github.com/cudaenv/cudaenv/internal/version"
)

// Kind is what an entry holds.
type Kind string

const (
	CUDA  Kind = "cuda"
	Cudnn Kind = "cudnn"
)

// ReceiptName is written last into every entry; its presence means installed.
const ReceiptName = rootfs.ReceiptName

// Receipt records where an entry came from.
type Receipt struct {
	Kind           Kind        `json:"kind"`
	Version        string      `json:"version"`
	CUDAMajor      int         `json:"cuda_major,omitempty"`
	Source         string      `json:"source"`           // "nvidia", "pypi", "link"
	Target         string      `json:"target,omitempty"` // a linked entry's files
	URL            string      `json:"url,omitempty"`
	Platform       string      `json:"platform,omitempty"`
	Profile        string      `json:"profile,omitempty"`
	ManifestSHA256 string      `json:"manifest_sha256,omitempty"`
	Components     []Component `json:"components,omitempty"`
	// LibrariesOnly: a CUDA entry without nvcc (CUDA 11 and 12 from PyPI,
	// --components without cuda_nvcc): good for running prebuilt programs
	// and wheels, and for host code against its libraries, not for
	// compiling CUDA code.
	LibrariesOnly bool `json:"libraries_only,omitempty"`
	// Differs lists the components whose builds are not the release's own
	// (a toolkit made to the builds a framework pins: install --for), each
	// with the release's own version ("" when the release has none).
	Differs  map[string]string `json:"differs,omitempty"`
	Licenses []string          `json:"licenses,omitempty"`
	// InstalledBytes is the size of the entry's files when it was
	// installed (rootfs.Size), so that list need not walk thousands of
	// files; 0 in receipts written before it was recorded.
	InstalledBytes int64 `json:"installed_bytes,omitempty"`
	// Files and FileList are the count of the entry's files and the
	// sha256 of its file list (filelist.Name, beside the receipt), which
	// names every file, folder and symlink with its mode, size, sha256
	// and fingerprint; "" in receipts written before file lists.
	Files     int       `json:"files,omitempty"`
	FileList  string    `json:"file_list,omitempty"`
	Installed time.Time `json:"installed"`
}

// Component is one installed archive.
type Component struct {
	ID      string `json:"id"`
	Version string `json:"version"`
	SHA256  string `json:"sha256,omitempty"`
	Size    int64  `json:"size,omitempty"`
	License string `json:"license,omitempty"`
}

// DiffersText says which components are not the release's own builds:
// "cuda_nvrtc 12.6.77 (12.6.3's is 12.6.85)", sorted; "" when none.
func (r Receipt) DiffersText() string {
	if len(r.Differs) == 0 {
		return ""
	}
	ids := make([]string, 0, len(r.Differs))
	for id := range r.Differs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var parts []string
	for _, id := range ids {
		have := ""
		for _, c := range r.Components {
			if c.ID == id {
				have = c.Version
			}
		}
		own := r.Differs[id]
		switch {
		case own == "":
			parts = append(parts, fmt.Sprintf("%s %s (not in %s)", id, have, r.Version))
		default:
			parts = append(parts, fmt.Sprintf("%s %s (%s's is %s)", id, have, r.Version, own))
		}
	}
	return strings.Join(parts, ", ")
}

// Entry is one installed or linked version.
type Entry struct {
	Kind      Kind
	Name      string // directory name: 12.4.1, 9.5.1.17-cuda12
	Version   version.Version
	CUDAMajor int    // cuDNN only
	Dir       string // the entry's directory in the store
	Path      string // where its files are: Dir, or a linked target
	Receipt   Receipt
	Err       error // set when the entry is broken
	// System is set for an entry of the read-only system store (see
	// Store.System); Shadows for a user entry that hides the system
	// store's entry of the same name.
	System  bool
	Shadows bool
	// receiptErr: the receipt is one the store wrote (InstalledReceipt)
	// but a field of it does not decode; see Damage.
	receiptErr error
	// ledger vouches for shared files whose fingerprint went stale (see
	// Check); nil for none.
	ledger *ledger.Ledger
}

// Linked reports whether the entry adopts a toolkit that lives elsewhere.
func (e Entry) Linked() bool { return e.Receipt.Source == "link" }

// Label is how users name the entry: 12.4.1, cudnn@9.5.1.17 (cuda12).
func (e Entry) Label() string {
	if e.Kind.Library() {
		return fmt.Sprintf("%s@%s (cuda%d)", e.Kind, e.Version, e.CUDAMajor)
	}
	return e.Version.String()
}

// Store is the folder of installed versions.
type Store struct {
	Dirs dirs.Dirs
	// Wait, when set, hears one line when Lock finds the lock taken by
	// another cudaenv and waits for it; an uncontended Lock says nothing.
	Wait io.Writer
	// System is the shared system store read beside this one, nil for
	// none: List and Get see its entries, except those a user entry of
	// the same name shadows. Nothing in this package writes to it (no
	// locks, staging or cleanup there), so it may be a read-only mount.
	System *Store
	// Shared marks the system store opened by its admin (NewSystem):
	// what Install writes is readable by everyone, whatever the umask.
	Shared bool
	// Warn, when set, hears each system store entry or folder skipped
	// because another ordinary user owns it or others may write it, once.
	Warn  func(string)
	trust *trustCheck
	// ledger is the download cache's record of shared files' states (see
	// package ledger), nil when there is no cache folder.
	ledger *ledger.Ledger
}

// New returns the store laid out by d, with d.System's store beside it.
func New(d dirs.Dirs) *Store {
	s := &Store{Dirs: d, ledger: ledger.Open(d.Cache)}
	if d.System != "" && !samePath(d.System, d.Root) {
		s.System = &Store{Dirs: dirs.Dirs{Root: d.System}, ledger: s.ledger}
		s.trust = &trustCheck{}
	}
	return s
}

func (s *Store) kindDir(k Kind) string {
	if k.Library() {
		return filepath.Join(s.Dirs.Root, string(k))
	}
	return s.Dirs.CUDA()
}

// CudnnName is the directory name of a cuDNN build for a CUDA major.
func CudnnName(v version.Version, cudaMajor int) string {
	return v.String() + "-cuda" + strconv.Itoa(cudaMajor)
}

// parseName splits an entry directory name into version and CUDA major.
func parseName(k Kind, name string) (version.Version, int, error) {
	if k.Library() {
		base, major, ok := strings.Cut(name, "-cuda")
		if !ok {
			return nil, 0, fmt.Errorf("not a %s entry name", k)
		}
		m, err := strconv.Atoi(major)
		if err != nil || m <= 0 {
			return nil, 0, fmt.Errorf("not a %s entry name", k)
		}
		v, err := version.Parse(base)
		return v, m, err
	}
	v, err := version.Parse(name)
	return v, 0, err
}

// List returns the entries of a kind, oldest version first, the system
// store's included (see Store.System). Directories without a receipt
// (interrupted installs) are left out; entries whose receipt is
// unreadable or whose linked target is gone are returned with Err.
func (s *Store) List(k Kind) ([]Entry, error) {
	own, err := s.listOwn(k)
	if err != nil || s.System == nil {
		return own, err
	}
	sys, err := s.System.listOwn(k)
	if err != nil {
		return nil, fmt.Errorf("system store %s: %w; check CUDAENV_SYSTEM_ROOT, or system_root in the settings file (cudaenv config get system_root)", s.System.Dirs.Root, err)
	}
	trusted := sys[:0]
	for _, e := range sys {
		e.System = true
		if s.systemUntrusted(e) == "" {
			trusted = append(trusted, e)
		}
	}
	return merge(own, trusted), nil
}

// listOwn lists this store's own folder only.
func (s *Store) listOwn(k Kind) ([]Entry, error) {
	des, err := os.ReadDir(s.kindDir(k))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", k, err)
	}
	var out []Entry
	for _, de := range des {
		if !de.IsDir() || strings.HasPrefix(de.Name(), ".") { // staging, asides, trash
			continue
		}
		v, major, err := parseName(k, de.Name())
		if err != nil {
			continue
		}
		e, ok := s.load(k, de.Name(), v, major)
		if ok {
			out = append(out, e)
		}
	}
	sortEntries(out)
	return out, nil
}

// sortEntries orders entries oldest version first, then by CUDA major.
func sortEntries(out []Entry) {
	sort.SliceStable(out, func(i, j int) bool {
		if c := version.Compare(out[i].Version, out[j].Version); c != 0 {
			return c < 0
		}
		return out[i].CUDAMajor < out[j].CUDAMajor
	})
}

// Get returns one entry by directory name: this store's, else the
// system store's.
func (s *Store) Get(k Kind, name string) (Entry, bool) {
	e, ok := s.GetOwn(k, name)
	if ok || s.System == nil {
		e.Shadows = ok && s.Shadows(k, name)
		return e, ok
	}
	if e, ok = s.System.GetOwn(k, name); ok {
		e.System = true
		if s.systemUntrusted(e) != "" {
			return Entry{}, false
		}
	}
	return e, ok
}

// Shadows reports whether the system store has an entry of this name
// (a receipt there, readable or not), which an entry of this store's of
// the same name hides. It decodes nothing.
func (s *Store) Shadows(k Kind, name string) bool {
	if s.System == nil {
		return false
	}
	_, err := os.Stat(filepath.Join(s.System.kindDir(k), name, ReceiptName))
	return !errors.Is(err, fs.ErrNotExist)
}

// GetOwn returns one entry of this store's own folder, never the system
// store's: what an install or a link here would replace.
func (s *Store) GetOwn(k Kind, name string) (Entry, bool) {
	v, major, err := parseName(k, name)
	if err != nil {
		return Entry{}, false
	}
	return s.load(k, name, v, major)
}

func (s *Store) load(k Kind, name string, v version.Version, major int) (Entry, bool) {
	dir := filepath.Join(s.kindDir(k), name)
	e := Entry{Kind: k, Name: name, Version: v, CUDAMajor: major, Dir: dir, Path: dir, ledger: s.ledger}
	data, err := readOwnFile(filepath.Join(dir, ReceiptName), maxReceipt)
	if errors.Is(err, fs.ErrNotExist) {
		return e, false
	}
	if err == nil && InstalledReceipt(data) {
		// Installed files, in dir: what the hook and the shims take it
		// for without decoding it. A field that does not decode is
		// damage, which list and doctor report.
		if derr := json.Unmarshal(data, &e.Receipt); derr != nil {
			e.receiptErr = derr
		}
		if e.Receipt.Source == "link" {
			// Spelt with escapes, which the store never writes: its
			// readers take the files to be here, not at Target.
			e.Receipt.Source, e.Receipt.Target = "", ""
			if e.receiptErr == nil {
				e.receiptErr = errors.New(`its source is "link" spelt with escapes, which cudaenv never writes`)
			}
		}
		return e, true
	}
	if err == nil {
		err = json.Unmarshal(data, &e.Receipt)
	}
	if err != nil {
		e.Err = fmt.Errorf("store entry %s is broken (%s: %v); run: cudaenv uninstall %s --force", dir, ReceiptName, err, uninstallArg(e))
		return e, true
	}
	if e.Linked() {
		// The C fast shim (link_target in shims/fastshim/fastshim.c)
		// reads link receipts as this does, for the fields Receipt has
		// now: a change here is a change there, or it hands them on.
		e.Path = e.Receipt.Target
		// A receipt is a file on disk: its path meets the rule link
		// applied before it goes anywhere near PATH.
		if err := dirs.CheckOnPath(e.Path); err != nil {
			e.Err = fmt.Errorf("store entry %s is broken (its linked path %v); run: cudaenv uninstall %s", dir, err, uninstallArg(e))
		} else if fi, err := os.Stat(e.Path); err != nil || !fi.IsDir() {
			e.Err = fmt.Errorf("store entry %s is broken (linked toolkit %s is gone); run: cudaenv uninstall %s", dir, e.Path, uninstallArg(e))
		}
	}
	return e, true
}

func uninstallArg(e Entry) string {
	if e.Kind.Library() {
		return string(e.Kind) + "@" + e.Version.String()
	}
	return e.Version.String()
}

// Install builds an entry atomically. fill populates a fresh staging
// directory and returns the receipt; the receipt is written last and the
// tree moved into place with one rename, so an interrupted install never
// shows up as a version. An existing entry of the same name is replaced:
// it is renamed aside first and deleted once the new tree is in; a run
// killed between the two renames leaves it aside, and the next run that
// takes the entry's lock puts it back (see settle). The caller holds the
// entry's lock (see Lock).
//
// Staging, the aside and the trash are all in the kind folder itself
// (cuda/.stage-12.4.1-N, cuda/.old-12.4.1-N, cuda/.trash-12.4.1-N), so
// every rename stays inside one folder, on one file system, even when
// cuda/ is a link to another disk.
func (s *Store) Install(k Kind, name string, fill func(stage string) (Receipt, error)) (Entry, error) {
	return s.InstallFiles(k, name, nil, fill)
}

// InstallFiles is Install for a fill that reports the sha256 of the files
// it writes or links into sums (see filelist.Sums), so that the entry's
// file list is written without reading them again; files it has no sum
// for are hashed.
func (s *Store) InstallFiles(k Kind, name string, sums *filelist.Sums, fill func(stage string) (Receipt, error)) (Entry, error) {
	v, major, err := parseName(k, name)
	if err != nil {
		return Entry{}, fmt.Errorf("invalid store name %q", name)
	}
	if err := s.checkUTF8(); err != nil {
		return Entry{}, fmt.Errorf("install %s: %w", lockLabel(k, name), err)
	}
	dir := s.kindDir(k)
	if err := s.mkdirKind(dir); err != nil {
		return Entry{}, err
	}
	s.settle(k, name)
	stage, err := os.MkdirTemp(dir, stagePrefix+name+"-")
	if err != nil {
		return Entry{}, err
	}
	if err := os.Chmod(stage, 0o755); err != nil {
		os.RemoveAll(stage)
		return Entry{}, err
	}
	keep := false
	defer func() {
		if !keep {
			s.discard(stage, trashPrefix+name+"-")
		}
	}()
	r, err := fill(stage)
	if errors.Is(err, context.Canceled) {
		// Interrupted: hide the half tree at once and leave deleting it
		// (seconds for gigabytes) to the next command that settles it.
		keep = true
		if trash, terr := os.MkdirTemp(dir, trashPrefix+name+"-"); terr == nil {
			if os.Rename(stage, filepath.Join(trash, "x")) != nil {
				os.Remove(trash)
				keep = false
			}
		} else {
			keep = false
		}
	}
	if err != nil {
		return Entry{}, err
	}
	step("filled")
	r.Kind, r.Version, r.CUDAMajor = k, v.String(), major
	if r.Installed.IsZero() {
		r.Installed = time.Now().UTC()
	}
	if s.Shared {
		// Before the list: its fingerprints are of the files as they stay.
		if err := readableByAll(stage); err != nil {
			return Entry{}, fmt.Errorf("install %s: %w", lockLabel(k, name), err)
		}
	}
	if r.Source != "link" {
		// A linked entry's files are not the store's: its receipt stays
		// as the fast shim reads it, and nothing lists them.
		if err := s.writeFileList(stage, sums, &r); err != nil {
			return Entry{}, fmt.Errorf("install %s: %w", lockLabel(k, name), err)
		}
	}
	if err := writeReceipt(stage, r, s.Shared); err != nil {
		return Entry{}, err
	}
	step("staged")
	final := filepath.Join(dir, name)
	var old string
	if _, err := os.Lstat(final); err == nil {
		// One atomic swap where the file system has it: the entry's path
		// never goes missing, so a shim or build that starts a command
		// of it meanwhile finds the old tree or the new one. The stage's
		// name then holds the old tree, a leftover settle would delete.
		step("aside")
		err := exchange(stage, final)
		if err == nil {
			keep = true
			step("placed")
			s.discard(stage, trashPrefix+name+"-")
			e, _ := s.Get(k, name)
			return e, e.Err
		}
		if !errors.Is(err, errNoExchange) {
			return Entry{}, fmt.Errorf("replace %s: %w", final, err)
		}
		old = filepath.Join(dir, asidePrefix+strings.TrimPrefix(filepath.Base(stage), stagePrefix))
		if err := os.Rename(final, old); err != nil {
			return Entry{}, fmt.Errorf("replace %s: %w", final, err)
		}
		step("aside")
	}
	if err := os.Rename(stage, final); err != nil {
		if old != "" {
			os.Rename(old, final)
		}
		return Entry{}, fmt.Errorf("move %s into place: %w", name, err)
	}
	keep = true
	step("placed")
	if old != "" {
		s.discard(old, trashPrefix+name+"-")
	}
	e, _ := s.Get(k, name)
	return e, e.Err
}

// Names of what Install and Remove leave in a kind folder while they work.
// They start with a dot, which no version does, so List skips them.
const (
	stagePrefix = ".stage-" // .stage-<name>-<n>: a tree being built
	asidePrefix = ".old-"   // .old-<name>-<n>: the tree a reinstall replaces
	trashPrefix = ".trash-" // .trash-<name>-<n>: a tree being deleted
)

// errNoExchange is exchange's answer where the file system has no atomic
// swap of two names.
var errNoExchange = errors.New("no atomic exchange")

// step is a test hook: a test makes it end the process at a named step,
// as a kill would.
var step = func(string) {}

// discard deletes a tree by first renaming it into a new trash folder
// (named by pattern, see os.MkdirTemp) beside it, so a kill halfway through
// the deletion never leaves a half tree under a name that means something
// (an entry, or an aside that settle would put back). Files it shares with
// the cache stay vouched for (ledger.Remove).
//
// With no inode left for a new folder (a full file system, a cluster's
// file-count quota), which is when a failed install's tree most needs
// deleting, the tree itself is renamed to a trash name (a rename needs no
// new inode), or, a half-built tree meaning nothing, deleted in place.
func (s *Store) discard(path, pattern string) {
	trash, err := os.MkdirTemp(filepath.Dir(path), pattern)
	if err != nil {
		renamed := filepath.Join(filepath.Dir(path), pattern+"r"+strconv.FormatInt(time.Now().UnixNano(), 36))
		switch {
		case os.Rename(path, renamed) == nil:
			step("trashed")
			s.ledger.Remove(renamed)
		case strings.HasPrefix(filepath.Base(path), stagePrefix):
			s.ledger.Remove(path)
		}
		return
	}
	if err := os.Rename(path, filepath.Join(trash, "x")); err != nil {
		os.Remove(trash)
		return
	}
	step("trashed")
	s.ledger.Remove(trash)
}

// settle puts an entry back in order after an interrupted install or
// uninstall: when the entry is missing and a tree that a reinstall set
// aside is there, that tree goes back (the reinstall never finished); then
// the entry's other leftovers (half-built trees, asides no longer needed,
// trash) are deleted. It also reads the older layout, which staged in
// .staging/<kind>-<name>-<n> and set aside to .staging/<kind>-<name>-<n>.old.
// The caller holds the entry's lock, so no live process owns these folders.
func (s *Store) settle(k Kind, name string) {
	if !k.known() {
		return
	}
	dir, legacy := s.kindDir(k), s.Dirs.Staging()
	var stages, asides, trash []string
	des, _ := os.ReadDir(dir)
	for _, de := range des {
		p := filepath.Join(dir, de.Name())
		if n, ok := leftoverName(de.Name(), stagePrefix); ok && n == name {
			stages = append(stages, p)
		} else if n, ok := leftoverName(de.Name(), asidePrefix); ok && n == name {
			asides = append(asides, p)
		} else if n, ok := leftoverName(de.Name(), trashPrefix); ok && n == name {
			trash = append(trash, p)
		}
	}
	des, _ = os.ReadDir(legacy)
	for _, de := range des {
		lk, n, aside, ok := splitLegacyStageName(de.Name())
		if !ok || lk != k || n != name {
			continue
		}
		if aside {
			asides = append(asides, filepath.Join(legacy, de.Name()))
		} else {
			stages = append(stages, filepath.Join(legacy, de.Name()))
		}
	}
	final := filepath.Join(dir, name)
	_, err := os.Lstat(final)
	if errors.Is(err, fs.ErrNotExist) && len(asides) > 0 {
		os.MkdirAll(dir, 0o755)
		for i, a := range asides {
			if os.Rename(a, final) == nil {
				asides = append(asides[:i:i], asides[i+1:]...)
				err = nil
				break
			}
		}
	}
	// An aside is deleted only once the entry is in place: until then it
	// may be the only copy of the installed version.
	if err != nil {
		asides = nil
	}
	for _, p := range append(stages, asides...) {
		if filepath.Dir(p) == legacy {
			s.discard(p, "trash-") // CleanStaging deletes these
		} else {
			s.discard(p, trashPrefix+name+"-")
		}
	}
	for _, p := range trash {
		s.ledger.Remove(p)
	}
}

// leftoverName reads "<prefix><name>-<n>" (see MkdirTemp) and returns name.
func leftoverName(file, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(file, prefix)
	if !ok {
		return "", false
	}
	i := strings.LastIndexByte(rest, '-')
	if i <= 0 {
		return "", false
	}
	return rest[:i], true
}

// splitLegacyStageName reads the older "<kind>-<name>-<n>[.old]".
func splitLegacyStageName(n string) (k Kind, name string, aside, ok bool) {
	kind, rest, ok := strings.Cut(n, "-")
	if !ok || !Kind(kind).known() {
		return "", "", false, false
	}
	rest, aside = strings.CutSuffix(rest, ".old")
	i := strings.LastIndexByte(rest, '-')
	if i <= 0 {
		return "", "", false, false
	}
	return Kind(kind), rest[:i], aside, true
}

// checkUTF8 refuses paths (then the store's own) that are not valid
// UTF-8, bytes escaped: entry paths go into receipts (JSON) and into the
// shells' environment, neither of which carries such bytes intact.
func (s *Store) checkUTF8(paths ...string) error {
	for _, p := range paths {
		if !utf8.ValidString(p) {
			return fmt.Errorf("path %s is not valid UTF-8; move or rename it", strconv.Quote(p))
		}
	}
	root := s.Dirs.Root
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	if !utf8.ValidString(root) {
		return fmt.Errorf("store folder %s is not valid UTF-8; move or rename it, or set CUDAENV_ROOT to another folder", strconv.Quote(root))
	}
	return nil
}

// writeReceipt writes the receipt as a new file through a root opened on
// the tree: a receipt.json already there (a file or link an archive
// shipped) fails the install rather than being written through. In a
// shared store it is readable by all whatever the umask.
func writeReceipt(dir string, r Receipt, shared bool) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return writeOwned(dir, ReceiptName, append(data, '\n'), shared)
}

// writeOwned writes one of the files cudaenv writes into a tree beside its
// files (the receipt, the file list) as a new file.
func writeOwned(dir, name string, data []byte, shared bool) error {
	t, err := rootfs.Open(dir)
	if err != nil {
		return err
	}
	defer t.Close()
	if err := t.WriteNew(name, data, 0o644); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("refusing to install: the tree already has a %s, which only cudaenv writes (a hostile archive?)", name)
		}
		return fmt.Errorf("write %s: %w", name, err)
	}
	if shared {
		if err := t.Root().Chmod(name, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	return nil
}

// Remove deletes an entry. A linked entry loses only its link; the toolkit
// it points at is never touched.
func (s *Store) Remove(e Entry) error {
	if e.System {
		return fmt.Errorf("uninstall %s: it is in the system store %s, which only its admin changes (cudaenv uninstall --system); select another version, or install your own copy, which comes first", e.Label(), filepath.Dir(filepath.Dir(e.Dir)))
	}
	// Rename first so a half-deleted tree is never seen as a version; the
	// trash is beside the entry so the rename stays on its file system.
	trash, err := os.MkdirTemp(filepath.Dir(e.Dir), trashPrefix+e.Name+"-")
	if err != nil {
		return fmt.Errorf("uninstall %s: %w", e.Label(), err)
	}
	if err := os.Rename(e.Dir, filepath.Join(trash, "x")); err != nil {
		os.Remove(trash)
		return fmt.Errorf("uninstall %s: %w", e.Label(), err)
	}
	step("trashed")
	return s.ledger.Remove(trash)
}
