// Package ldso says which files glibc's dynamic loader would load for a
// program or library, and from where: for each DT_NEEDED name, the
// DT_RPATH of the object and of the objects that loaded it (when the
// object has no DT_RUNPATH), LD_LIBRARY_PATH, the object's DT_RUNPATH,
// /etc/ld.so.cache, then the default folders, in that order (ld.so(8)),
// breadth first, a soname already loaded being used again. It reads
// objects through an injected Open, so tests and callers decide what a
// file is.
package ldso

import (
	"errors"
	"path"
	"strings"
)

// Object is what the loader reads of an ELF object.
type Object struct {
	Path    string // the file (links resolved or not: as found)
	Soname  string // DT_SONAME; "" for none
	Needed  []string
	RPath   []string // DT_RPATH entries, unexpanded ($ORIGIN)
	RunPath []string // DT_RUNPATH entries
	// NoDefaultLib: DF_1_NODEFLIB, the cache and default folders are not
	// searched for its dependencies.
	NoDefaultLib bool
	// Arch is the cache's architecture flag for the object's kind
	// (FlagX8664Lib64); candidates of another kind are passed over.
	Arch int32
}

// ErrWrongKind is what Open returns for a file of another class or
// machine: the loader passes it over and searches on.
var ErrWrongKind = errors.New("an ELF object of another kind")

// Env is the loader's world.
type Env struct {
	LibraryPath []string // LD_LIBRARY_PATH's entries, in order ("" is the current folder)
	Cache       *Cache   // nil: none
	DefaultDirs []string // nil: DefaultDirs(arch)
	// Open reads an object's loader facts; an error for a file that is
	// not there or not an ELF object of the wanted kind (ErrWrongKind).
	Open func(path string, arch int32) (Object, error)
	// MaxObjects bounds the objects loaded (a loop of links or a hostile
	// folder cannot make it grow without end).
	MaxObjects int
	// Platform and Lib expand $PLATFORM and $LIB ("x86_64", "lib64").
	Platform, Lib string
}

// Pick is where one DT_NEEDED name of an object resolved.
type Pick struct {
	Name string // as DT_NEEDED says: libcudart.so.13
	By   string // the object that needs it
	Path string // the file picked; "" when none was found
	// Via says how: "RPATH of <path>", "LD_LIBRARY_PATH", "RUNPATH",
	// "ld.so.cache", "default folder", "already loaded", "path".
	Via string
}

// Result is a simulated load.
type Result struct {
	Loaded []Object // in load order (the global scope's order)
	Picks  []Pick   // every DT_NEEDED of every loaded object, in order
	// Truncated: MaxObjects was reached.
	Truncated bool
}

// DefaultDirs are the folders searched last for an architecture, as
// glibc and Debian's multiarch glibc have them.
func DefaultDirs(arch int32) []string {
	switch arch {
	case FlagAArch64:
		return []string{"/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"}
	}
	return []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"}
}

// Load loads roots in order, as a program that dlopens each path would,
// with every dependency; objects already loaded (by soname or path) are
// not loaded twice.
func (e Env) Load(roots ...Object) Result {
	var res Result
	max := e.MaxObjects
	if max <= 0 {
		max = 4096
	}
	type node struct {
		obj    Object
		loader int    // index in nodes of the object that loaded it; -1 for a root
		as     string // the DT_NEEDED name it was loaded for ("" for a root)
	}
	var nodes []node
	// An object answers to its soname, its path and the name it was
	// loaded as (glibc's l_libname).
	loaded := func(name string) (Object, bool) {
		for _, n := range nodes {
			if n.obj.Soname == name || n.obj.Path == name || n.as == name || path.Base(n.obj.Path) == name && n.obj.Soname == "" {
				return n.obj, true
			}
		}
		return Object{}, false
	}
	for _, root := range roots {
		if _, ok := loaded(root.Path); ok || root.Soname != "" && func() bool { _, ok := loaded(root.Soname); return ok }() {
			continue
		}
		first := len(nodes)
		nodes = append(nodes, node{root, -1, ""})
		// Breadth first from this root: its needs, then theirs.
		for i := first; i < len(nodes); i++ {
			obj := nodes[i].obj
			for _, name := range obj.Needed {
				pick := Pick{Name: name, By: obj.Path}
				if o, ok := loaded(name); ok {
					pick.Path, pick.Via = o.Path, "already loaded"
					res.Picks = append(res.Picks, pick)
					continue
				}
				var chain []Object
				for j := i; j >= 0; j = nodes[j].loader {
					chain = append(chain, nodes[j].obj)
				}
				found, via, ok := e.search(name, chain)
				if !ok {
					res.Picks = append(res.Picks, pick)
					continue
				}
				pick.Path, pick.Via = found.Path, via
				res.Picks = append(res.Picks, pick)
				if len(nodes) >= max {
					res.Truncated = true
					continue
				}
				nodes = append(nodes, node{found, i, name})
			}
		}
	}
	for _, n := range nodes {
		res.Loaded = append(res.Loaded, n.obj)
	}
	return res
}

// search finds name for chain[0], whose loaders are chain[1:].
func (e Env) search(name string, chain []Object) (Object, string, bool) {
	obj := chain[0]
	try := func(p string) (Object, bool) {
		o, err := e.Open(p, obj.Arch)
		if err != nil {
			return Object{}, false
		}
		if o.Path == "" {
			o.Path = p
		}
		return o, true
	}
	if strings.Contains(name, "/") {
		o, ok := try(e.expand(name, obj.Path))
		return o, "path", ok
	}
	if len(obj.RunPath) == 0 {
		// DT_RPATH of the object, then of each object up the chain that
		// has no DT_RUNPATH either.
		for _, o := range chain {
			if len(o.RunPath) > 0 {
				break
			}
			for _, dir := range o.RPath {
				if f, ok := try(path.Join(e.expand(dir, o.Path), name)); ok {
					return f, "RPATH of " + o.Path, true
				}
			}
		}
	}
	for _, dir := range e.LibraryPath {
		if dir == "" {
			dir = "."
		}
		if f, ok := try(path.Join(e.expand(dir, ""), name)); ok {
			return f, "LD_LIBRARY_PATH", true
		}
	}
	for _, dir := range obj.RunPath {
		if f, ok := try(path.Join(e.expand(dir, obj.Path), name)); ok {
			return f, "RUNPATH", true
		}
	}
	if obj.NoDefaultLib {
		return Object{}, "", false
	}
	if p, ok := e.Cache.Lookup(name, obj.Arch); ok {
		if f, ok := try(p); ok {
			return f, "ld.so.cache", true
		}
	}
	dirs := e.DefaultDirs
	if dirs == nil {
		dirs = DefaultDirs(obj.Arch)
	}
	for _, dir := range dirs {
		if f, ok := try(path.Join(dir, name)); ok {
			return f, "default folder", true
		}
	}
	return Object{}, "", false
}

// expand replaces $ORIGIN (the folder of the object whose entry it is),
// $LIB and $PLATFORM, braced or not.
func (e Env) expand(dir, owner string) string {
	lib, plat := e.Lib, e.Platform
	if lib == "" {
		lib = "lib64"
	}
	if plat == "" {
		plat = "x86_64"
	}
	origin := path.Dir(owner)
	r := strings.NewReplacer("${ORIGIN}", origin, "$ORIGIN", origin, "${LIB}", lib, "$LIB", lib, "${PLATFORM}", plat, "$PLATFORM", plat)
	return r.Replace(dir)
}
