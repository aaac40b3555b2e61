package modulefile

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cudaenv/cudaenv/internal/activate"
	"github.com/cudaenv/cudaenv/internal/atomicfile"
	"github.com/cudaenv/cudaenv/internal/version"
	"github.com/cudaenv/cudaenv/store"
)

// ForStore is the modules for the named specs (the newest installed
// match of a CUDA spec; every CUDA major's build of a cuDNN spec), or for
// every installed entry.
func ForStore(st *store.Store, args []string, all bool) ([]Module, error) {
	var picked []store.Entry
	for _, k := range store.Kinds() {
		list, err := st.List(k)
		if err != nil {
			return nil, err
		}
		for _, ent := range list {
			if ent.Err != nil {
				continue
			}
			if all {
				picked = append(picked, ent)
			}
		}
		if all {
			continue
		}
		for _, a := range args {
			sp, err := version.ParseSpec(a)
			if err != nil || sp.Kind != version.Prefix {
				return nil, fmt.Errorf("invalid version %q; name an installed version, e.g. 12.4 or cudnn@9.5", a)
			}
			if (sp.Tool == version.CUDA) != (k == store.CUDA) || (k != store.CUDA && store.KindOf(sp.Tool) != k) {
				continue
			}
			found := matching(sp, list, k == store.CUDA)
			if len(found) == 0 {
				return nil, fmt.Errorf("%s is not installed; run: cudaenv install %s", a, a)
			}
			picked = append(picked, found...)
		}
	}
	mods := make([]Module, 0, len(picked))
	seen := map[string]bool{}
	for i := range picked {
		m := moduleOf(&picked[i])
		if !seen[m.Family+"/"+m.Version] {
			seen[m.Family+"/"+m.Version] = true
			mods = append(mods, m)
		}
	}
	return mods, nil
}

// matching is the entries a spec names: the newest one for CUDA, the
// newest per CUDA major for cuDNN.
func matching(sp version.Spec, list []store.Entry, newestOnly bool) []store.Entry {
	best := map[int]store.Entry{}
	for _, ent := range list {
		if ent.Err != nil || !sp.Match(ent.Version) {
			continue
		}
		if b, ok := best[ent.CUDAMajor]; !ok || version.Compare(ent.Version, b.Version) > 0 {
			best[ent.CUDAMajor] = ent
		}
	}
	var out []store.Entry
	for _, ent := range best {
		out = append(out, ent)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CUDAMajor < out[j].CUDAMajor })
	if newestOnly && len(out) > 1 {
		out = out[:1]
	}
	return out
}

func moduleOf(ent *store.Entry) Module {
	from := ent.Receipt.Source
	if ent.Linked() {
		from = "a link to " + ent.Path
	}
	if ent.Kind.Library() && ent.Kind != store.Cudnn {
		t := version.Tool(ent.Kind)
		return Module{
			Family:         string(ent.Kind),
			Version:        ent.Name,
			Whatis:         fmt.Sprintf("%s %s for CUDA %d", t.Title(), ent.Version, ent.CUDAMajor),
			Help:           fmt.Sprintf("%s %s built for CUDA %d, at %s (installed by cudaenv from %s). Loads a CUDA %d module when none is loaded.", t.Title(), ent.Version, ent.CUDAMajor, ent.Path, from, ent.CUDAMajor),
			Env:            activate.Want(activate.Resolved{Libs: map[version.Tool]*store.Entry{t: ent}}, "linux"),
			NeedsCUDAMajor: ent.CUDAMajor,
		}
	}
	if ent.Kind == store.Cudnn {
		return Module{
			Family:         "cudnn",
			Version:        ent.Name,
			Whatis:         fmt.Sprintf("cuDNN %s for CUDA %d", ent.Version, ent.CUDAMajor),
			Help:           fmt.Sprintf("cuDNN %s built for CUDA %d, at %s (installed by cudaenv from %s). Loads a CUDA %d module when none is loaded.", ent.Version, ent.CUDAMajor, ent.Path, from, ent.CUDAMajor),
			Env:            activate.Want(activate.Resolved{Cudnn: ent}, "linux"),
			NeedsCUDAMajor: ent.CUDAMajor,
		}
	}
	return Module{
		Family:  "cuda",
		Version: ent.Name,
		Whatis:  fmt.Sprintf("CUDA Toolkit %s", ent.Version),
		Help:    fmt.Sprintf("CUDA Toolkit %s at %s (installed by cudaenv from %s). Sets PATH, LD_LIBRARY_PATH, LIBRARY_PATH (its link stubs), CUDA_HOME, CUDA_PATH, CUDAToolkit_ROOT and CUDACXX as cudaenv's shell hook does.", ent.Version, ent.Path, from),
		Env:     activate.Want(activate.Resolved{CUDA: ent}, "linux"),
	}
}

// WriteTree writes each module under dir, telling say each file written
// or removed. With prune (--all), files
// of this format that carry cudaenv's marker and name no installed
// version are removed; files without the marker are never touched.
func WriteTree(dir string, mods []Module, f Format, prune bool, say func(line string)) error {
	keep := map[string]bool{}
	for _, m := range mods {
		rel := Path(m, f)
		keep[filepath.FromSlash(rel)] = true
		if err := atomicfile.Write(filepath.Join(dir, filepath.FromSlash(rel)), Render(m, f), 0o644); err != nil {
			return fmt.Errorf("write %s: %w", rel, err)
		}
		say("wrote " + filepath.Join(dir, filepath.FromSlash(rel)))
	}
	if !prune {
		return nil
	}
	for _, k := range store.Kinds() {
		family := string(k)
		names, err := os.ReadDir(filepath.Join(dir, family))
		if err != nil {
			continue
		}
		for _, n := range names {
			rel := filepath.Join(family, n.Name())
			if keep[rel] || !n.Type().IsRegular() || strings.HasSuffix(n.Name(), ".lua") != (f == Lua) {
				continue
			}
			p := filepath.Join(dir, rel)
			if !carriesMarker(p) {
				continue
			}
			if err := os.Remove(p); err != nil {
				return fmt.Errorf("remove stale %s: %w", rel, err)
			}
			say("removed " + p)
		}
	}
	return nil
}

func carriesMarker(p string) bool {
	fh, err := os.Open(p)
	if err != nil {
		return false
	}
	defer fh.Close()
	head := make([]byte, 256)
	n, _ := fh.Read(head)
	return bytes.Contains(head[:n], []byte(Marker))
}
