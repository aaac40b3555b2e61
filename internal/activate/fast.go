package activate

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/cudaenv/cudaenv/internal/resolve"
	"github.com/cudaenv/cudaenv/internal/version"
	"github.com/cudaenv/cudaenv/store"
)

// ResolveFast is Resolve for hot paths such as shims: it reads the store's
// directory names (the system store's too: see store.Store.System) and
// the receipts of the entries it picks, not of every entry, and decodes a
// receipt only when the entry is linked; so an entry's Receipt is the
// zero Receipt unless it is linked, and Shadows is not set. Otherwise it
// returns what Resolve returns; when a spec matches nothing it defers to
// Resolve, whose error lists what is installed.
func ResolveFast(st *store.Store, sel resolve.Selection) (Resolved, error) {
	r := Resolved{Selection: sel}
	if sel.System() {
		return r, nil
	}
	if spec, ok := sel.Spec(version.CUDA); ok {
		e, found := pick(st, store.CUDA, spec, 0)
		if !found {
			return Resolve(st, sel)
		}
		if e.Err != nil {
			return r, e.Err
		}
		r.CUDA = e
	}
	if spec, ok := sel.Spec(version.Cudnn); ok {
		major := 0
		if r.CUDA != nil {
			major = r.CUDA.Version.Major()
		}
		e, found := pick(st, store.Cudnn, spec, major)
		if !found {
			return Resolve(st, sel)
		}
		if e.Err != nil {
			return r, e.Err
		}
		r.Cudnn = e
	}
	for _, t := range OtherLibraries() {
		spec, ok := sel.Spec(t)
		if !ok {
			continue
		}
		major := 0
		if r.CUDA != nil {
			major = r.CUDA.Version.Major()
		}
		e, found := pick(st, store.KindOf(t), spec, major)
		if !found {
			return Resolve(st, sel)
		}
		if e.Err != nil {
			return r, e.Err
		}
		r.setLibrary(t, e)
	}
	return r, nil
}

type candidate struct {
	k      store.Kind
	name   string
	v      version.Version
	major  int
	st     *store.Store // the user's store, or its system store
	dir    string
	system bool
}

// pick returns the newest entry that matches spec (and, for cuDNN with
// cudaMajor > 0, is built for that CUDA major) and has a receipt, the
// same entry best picks from List: of the user's store, else of the
// system store, which a user entry of the same name shadows.
func pick(st *store.Store, k store.Kind, spec version.Spec, cudaMajor int) (*store.Entry, bool) {
	cands := candidates(nil, st, k, spec, cudaMajor, false)
	if st.System != nil {
		cands = candidates(cands, st.System, k, spec, cudaMajor, true)
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if c := version.Compare(cands[i].v, cands[j].v); c != 0 {
			return c > 0
		}
		if cands[i].major != cands[j].major {
			return cands[i].major > cands[j].major
		}
		return !cands[i].system && cands[j].system // the user's first
	})
	for _, c := range cands {
		if e, ok := load(c); ok {
			if c.system && !st.TrustSystem(*e) {
				continue // as List leaves it out
			}
			return e, true
		}
	}
	return nil, false
}

// candidates appends the entry names in st's own folder of kind k that
// match.
func candidates(cands []candidate, st *store.Store, k store.Kind, spec version.Spec, cudaMajor int, system bool) []candidate {
	dir := st.Dirs.CUDA()
	if k.Library() {
		dir = filepath.Join(st.Dirs.Root, string(k))
	}
	des, err := os.ReadDir(dir)
	if err != nil {
		return cands
	}
	for _, de := range des {
		if !de.IsDir() {
			continue
		}
		c := candidate{k: k, name: de.Name(), st: st, system: system}
		base := c.name
		if k.Library() {
			b, m, ok := strings.Cut(c.name, "-cuda")
			if !ok {
				continue
			}
			if c.major, err = strconv.Atoi(m); err != nil || c.major <= 0 {
				continue
			}
			base = b
		}
		if c.v, err = version.Parse(base); err != nil {
			continue
		}
		if (cudaMajor > 0 && c.major != cudaMajor) || !spec.Match(c.v) {
			continue
		}
		c.dir = filepath.Join(dir, c.name)
		cands = append(cands, c)
	}
	return cands
}

// load reads an entry as store.GetOwn does, but decodes the receipt only
// when the entry is linked (its files are elsewhere) or does not look like
// a JSON object; for the others Receipt is left zero. (encoding/json's
// first decode in a process costs more than the rest of a shim call.) The
// store writes a receipt whole, last, before the entry is renamed into
// place, so a receipt that begins with { and ends with } is one it wrote
// (store.InstalledReceipt, the reading List shares).
func load(c candidate) (*store.Entry, bool) {
	data, err := os.ReadFile(filepath.Join(c.dir, store.ReceiptName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false
	}
	if err != nil || !store.InstalledReceipt(data) {
		e, ok := c.st.GetOwn(c.k, c.name)
		e.System = c.system
		return &e, ok
	}
	return &store.Entry{Kind: c.k, Name: c.name, Version: c.v, CUDAMajor: c.major, Dir: c.dir, Path: c.dir, System: c.system}, true
}
