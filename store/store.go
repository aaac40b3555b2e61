// Package store keeps side-by-side CUDA toolkits and cuDNN builds on disk:
// it lists them, installs a new tree atomically (staging directory, one
// rename, receipt last), adopts existing toolkits by link, and removes them.
//
// A directory without a readable receipt.json is not an installed version.
package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cudaenv/cudaenv/internal/dirs"
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
	Licenses       []string    `json:"licenses,omitempty"`
	Installed      time.Time   `json:"installed"`
}

// Component is one installed archive.
type Component struct {
	ID      string `json:"id"`
	Version string `json:"version"`
	SHA256  string `json:"sha256,omitempty"`
	Size    int64  `json:"size,omitempty"`
	License string `json:"license,omitempty"`
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
}

// Linked reports whether the entry adopts a toolkit that lives elsewhere.
func (e Entry) Linked() bool { return e.Receipt.Source == "link" }

// Label is how users name the entry: 12.4.1, cudnn@9.5.1.17 (cuda12).
func (e Entry) Label() string {
	if e.Kind == Cudnn {
		return fmt.Sprintf("cudnn@%s (cuda%d)", e.Version, e.CUDAMajor)
	}
	return e.Version.String()
}

// Store is the folder of installed versions.
type Store struct {
	Dirs dirs.Dirs
}

// New returns the store laid out by d.
func New(d dirs.Dirs) *Store { return &Store{Dirs: d} }

func (s *Store) kindDir(k Kind) string {
	if k == Cudnn {
		return s.Dirs.Cudnn()
	}
	return s.Dirs.CUDA()
}

// CudnnName is the directory name of a cuDNN build for a CUDA major.
func CudnnName(v version.Version, cudaMajor int) string {
	return v.String() + "-cuda" + strconv.Itoa(cudaMajor)
}

// parseName splits an entry directory name into version and CUDA major.
func parseName(k Kind, name string) (version.Version, int, error) {
	if k == Cudnn {
		base, major, ok := strings.Cut(name, "-cuda")
		if !ok {
			return nil, 0, errors.New("not a cudnn entry name")
		}
		m, err := strconv.Atoi(major)
		if err != nil || m <= 0 {
			return nil, 0, errors.New("not a cudnn entry name")
		}
		v, err := version.Parse(base)
		return v, m, err
	}
	v, err := version.Parse(name)
	return v, 0, err
}

// List returns the entries of a kind, oldest version first. Directories
// without a receipt (interrupted installs) are left out; entries whose
// receipt is unreadable or whose linked target is gone are returned with Err.
func (s *Store) List(k Kind) ([]Entry, error) {
	des, err := os.ReadDir(s.kindDir(k))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", k, err)
	}
	var out []Entry
	for _, de := range des {
		if !de.IsDir() {
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
	sort.Slice(out, func(i, j int) bool {
		if c := version.Compare(out[i].Version, out[j].Version); c != 0 {
			return c < 0
		}
		return out[i].CUDAMajor < out[j].CUDAMajor
	})
	return out, nil
}

// Get returns one entry by directory name.
func (s *Store) Get(k Kind, name string) (Entry, bool) {
	v, major, err := parseName(k, name)
	if err != nil {
		return Entry{}, false
	}
	return s.load(k, name, v, major)
}

func (s *Store) load(k Kind, name string, v version.Version, major int) (Entry, bool) {
	dir := filepath.Join(s.kindDir(k), name)
	e := Entry{Kind: k, Name: name, Version: v, CUDAMajor: major, Dir: dir, Path: dir}
	data, err := os.ReadFile(filepath.Join(dir, ReceiptName))
	if errors.Is(err, fs.ErrNotExist) {
		return e, false
	}
	if err == nil {
		err = json.Unmarshal(data, &e.Receipt)
	}
	if err != nil {
		e.Err = fmt.Errorf("store entry %s is broken (%s: %v); run: cudaenv uninstall %s --force", dir, ReceiptName, err, uninstallArg(e))
		return e, true
	}
	if e.Linked() {
		e.Path = e.Receipt.Target
		if fi, err := os.Stat(e.Path); err != nil || !fi.IsDir() {
			e.Err = fmt.Errorf("store entry %s is broken (linked toolkit %s is gone); run: cudaenv uninstall %s", dir, e.Path, uninstallArg(e))
		}
	}
	return e, true
}

func uninstallArg(e Entry) string {
	if e.Kind == Cudnn {
		return "cudnn@" + e.Version.String()
	}
	return e.Version.String()
}

// Install builds an entry atomically. fill populates a fresh staging
// directory inside the store and returns the receipt; the receipt is written
// last and the tree moved into place with one rename, so an interrupted
// install never shows up as a version. An existing entry of the same name is
// replaced. The caller holds the entry's lock (see Lock).
func (s *Store) Install(k Kind, name string, fill func(stage string) (Receipt, error)) (Entry, error) {
	v, major, err := parseName(k, name)
	if err != nil {
		return Entry{}, fmt.Errorf("invalid store name %q", name)
	}
	if err := os.MkdirAll(s.Dirs.Staging(), 0o755); err != nil {
		return Entry{}, err
	}
	s.cleanStaging(k, name)
	stage, err := os.MkdirTemp(s.Dirs.Staging(), stagePrefix(k, name))
	if err != nil {
		return Entry{}, err
	}
	if err := os.Chmod(stage, 0o755); err != nil {
		return Entry{}, err
	}
	keep := false
	defer func() {
		if !keep {
			os.RemoveAll(stage)
		}
	}()
	r, err := fill(stage)
	if err != nil {
		return Entry{}, err
	}
	r.Kind, r.Version, r.CUDAMajor = k, v.String(), major
	if r.Installed.IsZero() {
		r.Installed = time.Now().UTC()
	}
	if err := writeReceipt(stage, r); err != nil {
		return Entry{}, err
	}
	final := filepath.Join(s.kindDir(k), name)
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return Entry{}, err
	}
	// Move an existing tree aside first; it is deleted once the new one is in.
	var old string
	if _, err := os.Lstat(final); err == nil {
		old = stage + ".old"
		if err := os.Rename(final, old); err != nil {
			return Entry{}, fmt.Errorf("replace %s: %w", final, err)
		}
	}
	if err := os.Rename(stage, final); err != nil {
		if old != "" {
			os.Rename(old, final)
		}
		return Entry{}, fmt.Errorf("move %s into place: %w", name, err)
	}
	keep = true
	if old != "" {
		os.RemoveAll(old)
	}
	e, _ := s.load(k, name, v, major)
	return e, e.Err
}

func stagePrefix(k Kind, name string) string { return string(k) + "-" + name + "-" }

// cleanStaging removes what an interrupted install of this entry left. The
// caller holds the entry's lock, so no live install owns those folders.
func (s *Store) cleanStaging(k Kind, name string) {
	des, _ := os.ReadDir(s.Dirs.Staging())
	for _, de := range des {
		if strings.HasPrefix(de.Name(), stagePrefix(k, name)) {
			os.RemoveAll(filepath.Join(s.Dirs.Staging(), de.Name()))
		}
	}
}

// writeReceipt writes the receipt as a new file through a root opened on
// the tree: a receipt.json already there (a file or link an archive
// shipped) fails the install rather than being written through.
func writeReceipt(dir string, r Receipt) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	t, err := rootfs.Open(dir)
	if err != nil {
		return err
	}
	defer t.Close()
	if err := t.WriteNew(ReceiptName, append(data, '\n'), 0o644); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("refusing to install: the tree already has a %s, which only cudaenv writes (a hostile archive?)", ReceiptName)
		}
		return fmt.Errorf("write %s: %w", ReceiptName, err)
	}
	return nil
}

// Remove deletes an entry. A linked entry loses only its link; the toolkit
// it points at is never touched.
func (s *Store) Remove(e Entry) error {
	if err := os.MkdirAll(s.Dirs.Staging(), 0o755); err != nil {
		return err
	}
	// Rename first so a half-deleted tree is never seen as a version.
	trash, err := os.MkdirTemp(s.Dirs.Staging(), "trash-")
	if err != nil {
		return err
	}
	if err := os.Rename(e.Dir, filepath.Join(trash, "x")); err != nil {
		os.Remove(trash)
		return fmt.Errorf("uninstall %s: %w", e.Label(), err)
	}
	return os.RemoveAll(trash)
}
