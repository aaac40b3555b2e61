package activate

import (
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/cudaenv/cudaenv/internal/resolve"
	"github.com/cudaenv/cudaenv/internal/version"
	"github.com/cudaenv/cudaenv/store"
)

// ResolveFast is Resolve for hot paths such as shims: it reads the store's
// directory names and the receipts of the entries it picks, not of every
// entry. It returns what Resolve returns; when a spec matches nothing it
// defers to Resolve, whose error lists what is installed.
func ResolveFast(st *store.Store, sel resolve.Selection) (Resolved, error) {
	r := Resolved{Selection: sel}
	if sel.System() {
		return r, nil
	}
	if spec, ok := sel.Spec(version.CUDA); ok {
		e, found := pick(st, store.CUDA, st.Dirs.CUDA(), spec, 0)
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
		e, found := pick(st, store.Cudnn, st.Dirs.Cudnn(), spec, major)
		if !found {
			return Resolve(st, sel)
		}
		if e.Err != nil {
			return r, e.Err
		}
		r.Cudnn = e
	}
	return r, nil
}

type candidate struct {
	name  string
	v     version.Version
	major int
}

// pick returns the newest entry of dir that matches spec (and, for cuDNN
// with cudaMajor > 0, is built for that CUDA major) and has a receipt, the
// same entry best picks from List.
func pick(st *store.Store, k store.Kind, dir string, spec version.Spec, cudaMajor int) (*store.Entry, bool) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, false
	}
	cands := make([]candidate, 0, len(des))
	for _, de := range des {
		if !de.IsDir() {
			continue
		}
		c := candidate{name: de.Name()}
		base := c.name
		if k == store.Cudnn {
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
		cands = append(cands, c)
	}
	sort.Slice(cands, func(i, j int) bool {
		if c := version.Compare(cands[i].v, cands[j].v); c != 0 {
			return c > 0
		}
		return cands[i].major > cands[j].major
	})
	for _, c := range cands {
		if e, ok := st.Get(k, c.name); ok {
			return &e, true
		}
	}
	return nil, false
}
