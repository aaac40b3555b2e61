// Package cudabin says what a CUDA binary carries and needs, before it
// runs: the GPU architectures it has machine code (SASS) for and the PTX
// it carries (with the oldest CUDA that can have built it), the CUDA
// libraries it links and the files the dynamic loader would pick for
// them, the versioned symbols none of those defines (the "undefined
// symbol" error), and whether it runs on a GPU and driver (the "no kernel
// image is available" error). It reads ELF files, wheels (in place) and
// folders (walked), never running anything, with bounded reads.
package cudabin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/cudaenv/cudaenv/compat"
	"github.com/cudaenv/cudaenv/internal/fatbin"
	"github.com/cudaenv/cudaenv/internal/ldso"
)

// Report is what inspect says of one file.
type Report struct {
	Path string `json:"path"` // the file; for a wheel's member: wheel!member
	Kind string `json:"kind"` // "shared object", "executable", ...
	// SASS are the architectures with machine code, from every fat binary
	// in the file: sm_75, sm_90a; lowest first.
	SASS []string `json:"sass"`
	PTX  []PTX    `json:"ptx"`
	// Fatbins is the number of fat binary entries read.
	Fatbins int `json:"fatbin_entries"`
	// Needs are the CUDA libraries it loads (its own DT_NEEDED first,
	// then its libraries' libraries), each with the file picked.
	Needs     []Need      `json:"needs"`
	Undefined []Undefined `json:"undefined"`
	Verdict   *Verdict    `json:"verdict,omitempty"`
	// Notes say what could not be read or judged.
	Notes []string `json:"notes,omitempty"`
}

// PTX is the PTX for one virtual architecture.
type PTX struct {
	Arch string `json:"arch"` // compute_90
	ISA  string `json:"isa"`  // 9.5
	// BuiltWith is the oldest CUDA release that emits that ISA: the file
	// was built with it or a newer one; "" when the table lacks the ISA.
	BuiltWith string `json:"built_with"`
}

// Need is one library the loader loads for the file.
type Need struct {
	Name string `json:"name"`          // as DT_NEEDED names it
	By   string `json:"by,omitempty"`  // the library that needs it; "" for the file itself
	Path string `json:"path"`          // the file picked; "" when none is found
	Via  string `json:"via,omitempty"` // RPATH, LD_LIBRARY_PATH, RUNPATH, ld.so.cache, ...
}

// Undefined is a symbol a loaded object needs at a version that the
// library it expects it from, as the loader picks it, does not define.
type Undefined struct {
	Symbol  string `json:"symbol"`  // __nvJitLinkComplete_12_4@libnvJitLink.so.12
	By      string `json:"by"`      // the object that needs it
	Library string `json:"library"` // the library expected to define it
	Picked  string `json:"picked"`  // the file the loader picks for that library
}

// Options say for which machine and selection files are judged.
type Options struct {
	// LibraryPath is LD_LIBRARY_PATH's entries; Cache is ld.so.cache
	// (nil: none); DefaultDirs nil: the loader's.
	LibraryPath []string
	Cache       *ldso.Cache
	DefaultDirs []string
	// Root prefixes every absolute path the loader looks at (tests).
	Root string
	// GPU is the compute capability to judge for ("8.6"); "" for none.
	// Driver is the driver's version; "" when unknown.
	GPU, Driver, GOOS string
	// Preload are files loaded, in order, before each file inspected (a
	// framework that loads its libraries by path).
	Preload []string
	// Workers read files at once in a folder or wheel (0: 2).
	Workers int
	// MaxFiles bounds the files a folder or wheel yields (0: 20000).
	MaxFiles int
}

// Inspect reports on each path: an ELF file, a wheel, or a folder (every
// ELF file and wheel in it). Files without CUDA code or CUDA libraries in
// a folder or wheel are left out; a file named is always reported.
//
// It returns when ctx ends even if a read is stuck (a file system that
// does not answer): the reading goes on in the background, unreported.
func Inspect(ctx context.Context, paths []string, opt Options) ([]Report, error) {
	type result struct {
		reps []Report
		err  error
	}
	done := make(chan result, 1)
	go func() {
		in := newInspector(opt)
		var out []Report
		for _, p := range paths {
			reps, err := in.path(ctx, p)
			if err != nil {
				done <- result{out, err}
				return
			}
			out = append(out, reps...)
		}
		done <- result{out, nil}
	}()
	select {
	case r := <-done:
		return r.reps, r.err
	case <-ctx.Done():
		return nil, fmt.Errorf("not done in time: %w", ctx.Err())
	}
}

type inspector struct {
	opt Options
	mu  sync.Mutex
	// objs and syms cache what was read of each file (the libraries of a
	// venv's files are mostly the same ones).
	objs map[string]objResult
	syms map[string]symResult
	defs map[string]symResult
}

type objResult struct {
	obj object
	err error
}

type symResult struct {
	syms symbols
	err  error
}

func newInspector(opt Options) *inspector {
	if opt.Workers <= 0 {
		opt.Workers = 2
	}
	if opt.MaxFiles <= 0 {
		opt.MaxFiles = 20000
	}
	return &inspector{opt: opt, objs: map[string]objResult{}, syms: map[string]symResult{}, defs: map[string]symResult{}}
}

// file is the path the loader reads path at (Root prefixed).
func (in *inspector) file(p string) string {
	if in.opt.Root == "" || !filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(in.opt.Root, p)
}

// open reads a file's loader facts (and fatbins), once.
func (in *inspector) open(p string, withFatbins bool) (object, error) {
	if !withFatbins {
		in.mu.Lock()
		r, ok := in.objs[p]
		in.mu.Unlock()
		if ok {
			return r.obj, r.err
		}
	}
	obj, err := in.read(p, withFatbins)
	in.mu.Lock()
	in.objs[p] = objResult{obj, err}
	in.mu.Unlock()
	return obj, err
}

func (in *inspector) read(p string, withFatbins bool) (object, error) {
	f, err := openRegular(in.file(p))
	if err != nil {
		return object{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return object{}, err
	}
	return readObject(f, fi.Size(), p, withFatbins)
}

// openRegular opens a regular file, following links as the loader does;
// a fifo or device in a hostile folder is opened without waiting and
// refused by the descriptor's mode, never read.
func openRegular(p string) (*os.File, error) {
	f, err := os.OpenFile(p, openFlags, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &os.PathError{Op: "open", Path: p, Err: errNotRegular}
	}
	return f, nil
}

// loaderEnv is the dynamic loader of this machine and selection.
func (in *inspector) loaderEnv() ldso.Env {
	return ldso.Env{
		LibraryPath: in.opt.LibraryPath,
		Cache:       in.opt.Cache,
		DefaultDirs: in.opt.DefaultDirs,
		MaxObjects:  1024,
		Open: func(p string, arch int32) (ldso.Object, error) {
			o, err := in.open(p, false)
			if err != nil {
				return ldso.Object{}, err
			}
			if o.Arch != arch {
				return ldso.Object{}, ldso.ErrWrongKind
			}
			return o.Object, nil
		},
	}
}

// elfFile reports on one ELF file on disk.
func (in *inspector) elfFile(p string) (Report, error) {
	obj, err := in.open(p, true)
	if err != nil {
		return Report{}, err
	}
	rep := in.fatbinReport(p, obj)
	in.resolve(&rep, obj)
	rep.Verdict = judge(rep, in.opt)
	return rep, nil
}

// fatbinReport fills a report's SASS and PTX from obj's entries.
func (in *inspector) fatbinReport(p string, obj object) Report {
	rep := Report{Path: p, Kind: obj.Kind, SASS: []string{}, PTX: []PTX{}, Needs: []Need{}, Undefined: []Undefined{}}
	rep.Fatbins = len(obj.Entries)
	seenSASS := map[string]bool{}
	seenPTX := map[string]bool{}
	for _, e := range obj.Entries {
		switch e.Kind {
		case fatbin.SASS:
			if !seenSASS[e.Name()] {
				seenSASS[e.Name()] = true
				rep.SASS = append(rep.SASS, e.Name())
			}
		case fatbin.PTX:
			key := e.Name() + " " + e.ISA
			if !seenPTX[key] {
				seenPTX[key] = true
				built, _ := compat.PTXBuiltWith(e.ISA)
				rep.PTX = append(rep.PTX, PTX{Arch: e.Name(), ISA: e.ISA, BuiltWith: built})
			}
		}
	}
	sort.Slice(rep.SASS, func(i, j int) bool { return archLess(rep.SASS[i], rep.SASS[j]) })
	sort.Slice(rep.PTX, func(i, j int) bool {
		if rep.PTX[i].Arch != rep.PTX[j].Arch {
			return archLess(rep.PTX[i].Arch, rep.PTX[j].Arch)
		}
		return compat.CompareVersions(rep.PTX[i].ISA, rep.PTX[j].ISA) < 0
	})
	if obj.FatbinErr != "" {
		rep.Notes = append(rep.Notes, "a fat binary could not be read whole: "+obj.FatbinErr)
	}
	return rep
}

// resolve fills Needs and Undefined: the file loaded (after the
// preloads) as the loader would load it.
func (in *inspector) resolve(rep *Report, obj object) {
	env := in.loaderEnv()
	var roots []ldso.Object
	for _, p := range in.opt.Preload {
		if o, err := in.open(p, false); err == nil {
			roots = append(roots, o.Object)
		}
	}
	res := env.Load(append(roots, obj.Object)...)
	if res.Truncated {
		rep.Notes = append(rep.Notes, "more than 1024 libraries: the rest were not followed")
	}
	// The file's own libraries first, then what they load.
	seen := map[string]bool{}
	for _, own := range []bool{true, false} {
		for _, pk := range res.Picks {
			if (pk.By == obj.Path) != own {
				continue
			}
			if seen[pk.Name] || !IsCUDALibrary(pk.Name) {
				continue
			}
			seen[pk.Name] = true
			n := Need{Name: pk.Name, Path: pk.Path, Via: pk.Via}
			if !own {
				n.By = pk.By
			}
			rep.Needs = append(rep.Needs, n)
		}
	}
	// Which loaded object answers for each library name.
	bySoname := map[string]ldso.Object{}
	for _, o := range res.Loaded {
		if o.Soname != "" {
			if _, ok := bySoname[o.Soname]; !ok {
				bySoname[o.Soname] = o
			}
		}
		if _, ok := bySoname[filepath.Base(o.Path)]; !ok {
			bySoname[filepath.Base(o.Path)] = o
		}
	}
	// Versioned references of every loaded object, checked against the
	// object loaded for the library each names.
	wants := map[string][]symRef{}
	byOf := map[string][]string{}
	for _, o := range res.Loaded {
		s, err := in.symbols(o.Path)
		if err != nil {
			rep.Notes = append(rep.Notes, "symbols of "+o.Path+" not read: "+err.Error())
			continue
		}
		for _, ref := range s.undefined {
			if _, ok := bySoname[ref.library]; !ok {
				continue // a library not found: Needs says so
			}
			wants[ref.library] = append(wants[ref.library], ref)
			byOf[ref.library] = append(byOf[ref.library], o.Path)
		}
	}
	// A reference binds to a definition of its name and version in any
	// loaded object (glibc searches the global scope); the library named
	// is asked first, the others only for what it lacks.
	defines := func(p string, names map[string]bool) (symbols, bool) {
		defs, err := in.definitions(p, names)
		if err != nil {
			rep.Notes = append(rep.Notes, "symbols of "+p+" not read: "+err.Error())
			return defs, false
		}
		return defs, true
	}
	found := func(defs symbols, ref symRef) bool {
		return defs.noVerdef && len(defs.defined[ref.name]) > 0 || slices.Contains(defs.defined[ref.name], ref.version)
	}
	type missing struct {
		ref symRef
		by  string
	}
	var left []missing
	for _, lib := range slices.Sorted(mapsKeys(wants)) {
		lo := bySoname[lib]
		names := map[string]bool{}
		for _, ref := range wants[lib] {
			names[ref.name] = true
		}
		defs, ok := defines(lo.Path, names)
		if !ok {
			continue
		}
		for i, ref := range wants[lib] {
			if !found(defs, ref) {
				left = append(left, missing{ref, byOf[lib][i]})
			}
		}
	}
	if len(left) > 0 {
		names := map[string]bool{}
		for _, m := range left {
			names[m.ref.name] = true
		}
		for _, o := range res.Loaded {
			defs, ok := defines(o.Path, names)
			if !ok {
				continue
			}
			kept := left[:0]
			for _, m := range left {
				if !found(defs, m.ref) {
					kept = append(kept, m)
				}
			}
			left = kept
		}
	}
	seenRef := map[string]bool{}
	for _, m := range left {
		sym := m.ref.name + "@" + m.ref.version
		if seenRef[sym] {
			continue
		}
		seenRef[sym] = true
		rep.Undefined = append(rep.Undefined, Undefined{Symbol: sym, By: m.by, Library: m.ref.library, Picked: bySoname[m.ref.library].Path})
	}
	sort.SliceStable(rep.Undefined, func(i, j int) bool { return rep.Undefined[i].Symbol < rep.Undefined[j].Symbol })
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// symbols are a file's versioned references, read once.
func (in *inspector) symbols(p string) (symbols, error) {
	in.mu.Lock()
	r, ok := in.syms[p]
	in.mu.Unlock()
	if ok {
		return r.syms, r.err
	}
	f, err := openRegular(in.file(p))
	var s symbols
	if err == nil {
		var fi os.FileInfo
		if fi, err = f.Stat(); err == nil {
			s, err = readSymbols(f, fi.Size(), nil)
		}
		f.Close()
	}
	in.mu.Lock()
	in.syms[p] = symResult{s, err}
	in.mu.Unlock()
	return s, err
}

// definitions is what a file defines, at which versions: read once (the
// files asked are those versioned references name: libc, libstdc++,
// NVIDIA's libraries), then kept for every file that loads it.
func (in *inspector) definitions(p string, _ map[string]bool) (symbols, error) {
	in.mu.Lock()
	r, ok := in.defs[p]
	in.mu.Unlock()
	if ok {
		return r.syms, r.err
	}
	var s symbols
	f, err := openRegular(in.file(p))
	if err == nil {
		var fi os.FileInfo
		if fi, err = f.Stat(); err == nil {
			s, err = readSymbols(f, fi.Size(), func(string) bool { return true })
		}
		f.Close()
	}
	in.mu.Lock()
	in.defs[p] = symResult{s, err}
	in.mu.Unlock()
	return s, err
}

// archLess orders sm_75 < sm_90 < sm_90a < sm_100 < sm_100f.
func archLess(a, b string) bool {
	na, sa := archNumber(a)
	nb, sb := archNumber(b)
	if na != nb {
		return na < nb
	}
	return sa < sb
}

// archNumber splits sm_90a into 90 and "a".
func archNumber(s string) (int, string) {
	_, s, _ = strings.Cut(s, "_")
	i := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	if i < 0 {
		i = len(s)
	}
	n, _ := strconv.Atoi(s[:i])
	return n, s[i:]
}

// IsCUDALibrary reports whether a soname is one of NVIDIA's CUDA
// libraries (the runtime, the math libraries, cuDNN, NCCL, ...).
func IsCUDALibrary(soname string) bool {
	base, _, _ := strings.Cut(soname, ".so")
	for _, p := range []string{"libcuda", "libcublas", "libcufft", "libcurand", "libcusparse", "libcusolver", "libnvJitLink", "libnvrtc", "libcudnn", "libnccl", "libnvToolsExt", "libnvtx", "libcupti", "libnvjpeg", "libnpp", "libcufile", "libnvshmem", "libcutensor", "libcudss", "libnvidia-ml", "libnvblas", "libnvperf", "libcusparseLt", "libnvptxcompiler", "libnvvm", "libnvfatbin"} {
		if base == p || strings.HasPrefix(base, p) {
			return true
		}
	}
	return false
}
