// Package cmakepkg writes what CMake's find_package reads in an installed
// tree and NVIDIA's wheels leave out: a toolkit's version.json, laid out
// as NVIDIA's installers write it (FindCUDAToolkit takes it for the
// toolkit's root and version when there is no nvcc, from CMake 3.27), with
// the version.txt older CMake reads instead; and a library's CMake package
// (lib/cmake/cudss/cudss-config.cmake) where NVIDIA's archive ships one,
// written from the files the library installed. Files are written through
// the tree's rooted writer and never replace one the tree has: NVIDIA's
// own come first. Names and versions are checked before they reach a
// CMake script, and every path in one is relative to the script, so the
// tree works wherever it is moved.
package cmakepkg

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/cudaenv/cudaenv/internal/rootfs"
)

// Component is one part of a toolkit as version.json lists it.
type Component struct {
	ID, Name, Version string
}

// plainVersion is what may stand as a version in a file CMake reads.
var plainVersion = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]+(\.[0-9]+){0,4}$`) })

// componentID is the shape of NVIDIA's component ids (cuda_cudart, libcublas).
var componentID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`) })

// VersionJSON is a toolkit's version.json as NVIDIA's installers write it:
// "cuda" (the release, named "CUDA SDK"), then each component by id with
// its name and version, keys sorted. Components whose id or version is not
// plain are left out; release must be plain.
func VersionJSON(release string, comps []Component) ([]byte, error) {
	if !plainVersion().MatchString(release) {
		return nil, fmt.Errorf("version.json: release %q is not a plain version", release)
	}
	type entry struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	m := map[string]entry{"cuda": {Name: "CUDA SDK", Version: release}}
	for _, c := range comps {
		if c.ID == "cuda" || !componentID().MatchString(c.ID) || !plainVersion().MatchString(c.Version) {
			continue
		}
		name := c.Name
		if name == "" || len(name) > 200 || strings.ContainsFunc(name, func(r rune) bool { return r < ' ' || r == 0x7f }) {
			name = c.ID
		}
		m[c.ID] = entry{Name: name, Version: c.Version}
	}
	b, err := json.MarshalIndent(m, "", "   ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// VersionTxt is the version.txt of CUDA 11.0 and older, which CMake up to
// 3.26 reads (its FindCUDAToolkit knows no version.json).
func VersionTxt(release string) ([]byte, error) {
	if !plainVersion().MatchString(release) {
		return nil, fmt.Errorf("version.txt: release %q is not a plain version", release)
	}
	return []byte("CUDA Version " + release + "\n"), nil
}

// WriteToolkit writes version.json and version.txt into a toolkit tree
// that has neither; a tree that has one (NVIDIA's installer's) keeps what
// it has. It returns the names it wrote.
func WriteToolkit(t *rootfs.Tree, release string, comps []Component) ([]string, error) {
	for _, n := range []string{"version.json", "version.txt"} {
		if _, err := t.Root().Lstat(n); err == nil {
			return nil, nil
		}
	}
	js, err := VersionJSON(release, comps)
	if err != nil {
		return nil, err
	}
	txt, err := VersionTxt(release)
	if err != nil {
		return nil, err
	}
	if err := t.WriteNew("version.json", js, 0o444); err != nil {
		return nil, fmt.Errorf("version.json: %w", err)
	}
	if err := t.WriteNew("version.txt", txt, 0o444); err != nil {
		return []string{"version.json"}, fmt.Errorf("version.txt: %w", err)
	}
	return []string{"version.json", "version.txt"}, nil
}

// Target is one imported target of a package: a library of the tree.
type Target struct {
	Name   string // the target's name: cudss, nvshmem::nvshmem_host
	Lib    string // the library's base name: cudss for lib/libcudss.so.*
	Static bool   // lib/lib<Lib>.a rather than a shared library
}

// Package is a library's CMake package as NVIDIA's archive ships it.
type Package struct {
	Name    string // what find_package names: cudss, NVSHMEM
	Dir     string // lib/cmake/<Dir>
	Config  string // <Config>.cmake and <Config>-version.cmake (or <Config>Version.cmake)
	Targets []Target
	// VarPrefix starts the variables the config sets (cudss_INCLUDE_DIR,
	// cudss_LIBRARY_DIR), as NVIDIA's does; "" for none.
	VarPrefix string
}

// Packages are the CMake packages written per library kind (the store's
// folder name): cuDSS's archive ships lib/cmake/cudss (find_package(cudss)
// with the target cudss, NVIDIA's samples use it); NVSHMEM's ships
// lib/cmake/nvshmem (find_package(NVSHMEM) with nvshmem::nvshmem_host and
// nvshmem::nvshmem_device). cuTENSOR, cuSPARSELt and NCCL archives ship
// none that was found, so none is made up for them.
var Packages = map[string]Package{
	"cudss": {Name: "cudss", Dir: "cudss", Config: "cudss-config", VarPrefix: "cudss", Targets: []Target{
		{Name: "cudss", Lib: "cudss"}, {Name: "cudss_static", Lib: "cudss_static", Static: true},
	}},
	"nvshmem": {Name: "NVSHMEM", Dir: "nvshmem", Config: "NVSHMEMConfig", VarPrefix: "NVSHMEM", Targets: []Target{
		{Name: "nvshmem::nvshmem_host", Lib: "nvshmem_host"}, {Name: "nvshmem::nvshmem_device", Lib: "nvshmem_device", Static: true},
	}},
}

// versionFile is the version file's name CMake looks for beside a config:
// <name>-config-version.cmake for <name>-config.cmake, <Name>ConfigVersion.cmake for <Name>Config.cmake.
func (p Package) versionFile() string {
	if c, ok := strings.CutSuffix(p.Config, "-config"); ok {
		return c + "-config-version.cmake"
	}
	return p.Config + "Version.cmake"
}

// WritePackage writes the CMake package of a library kind (see Packages)
// into its tree when the tree has none: the config, naming each target
// whose library the tree's lib/ holds, and its version file. version is
// the library's. It returns the files written (none for kinds without a
// package, or a tree whose lib/ holds none of its libraries).
func WritePackage(t *rootfs.Tree, kind, version string) ([]string, error) {
	p, ok := Packages[kind]
	if !ok {
		return nil, nil
	}
	if !plainVersion().MatchString(version) {
		return nil, fmt.Errorf("cmake package %s: version %q is not a plain version", p.Name, version)
	}
	dir := path.Join("lib", "cmake", p.Dir)
	cfg, ver := path.Join(dir, p.Config+".cmake"), path.Join(dir, p.versionFile())
	for _, f := range []string{cfg, ver} {
		if _, err := t.Root().Lstat(f); err == nil {
			return nil, nil
		}
	}
	libs, err := libFiles(t)
	if err != nil {
		return nil, fmt.Errorf("cmake package %s: %w", p.Name, err)
	}
	var found []foundTarget
	for _, tg := range p.Targets {
		if f, ok := pickLib(libs, tg); ok {
			found = append(found, foundTarget{tg, f})
		}
	}
	if len(found) == 0 {
		return nil, nil
	}
	if err := t.WriteNew(cfg, []byte(configScript(p, version, found)), 0o444); err != nil {
		return nil, fmt.Errorf("cmake package %s: %w", p.Name, err)
	}
	if err := t.WriteNew(ver, []byte(versionScript(version)), 0o444); err != nil {
		return []string{cfg}, fmt.Errorf("cmake package %s: %w", p.Name, err)
	}
	return []string{cfg, ver}, nil
}

type foundTarget struct {
	Target
	file string // in lib/
}

// libFiles are the names of the regular files and links in the tree's lib/.
func libFiles(t *rootfs.Tree) ([]string, error) {
	f, err := t.Root().Open("lib")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ents, err := f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if e.Type().IsRegular() || e.Type()&fs.ModeSymlink != 0 {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}

// pickLib is the file a target imports: lib<Lib>.a for a static one; for
// a shared one the versioned file with the fewest parts (its SONAME's
// name in the wheels, libcudss.so.0), else lib<Lib>.so.
func pickLib(libs []string, tg Target) (string, bool) {
	if tg.Static {
		n := "lib" + tg.Lib + ".a"
		return n, slices.Contains(libs, n)
	}
	best := ""
	for _, n := range libs {
		rest, ok := strings.CutPrefix(n, "lib"+tg.Lib+".so.")
		if !ok || !plainVersion().MatchString(rest) {
			continue
		}
		if best == "" || strings.Count(n, ".") < strings.Count(best, ".") {
			best = n
		}
	}
	if best != "" {
		return best, true
	}
	n := "lib" + tg.Lib + ".so"
	return n, slices.Contains(libs, n)
}

// configScript is the package's config: its variables, then each target
// imported from the files found, every path from the script's folder.
func configScript(p Package, version string, found []foundTarget) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s.cmake: written by cudaenv from the files of %s %s installed here,\n", p.Config, p.Name, version)
	b.WriteString("# as NVIDIA's archive ships one and its wheel does not. find_package(" + p.Name + " CONFIG)\n")
	b.WriteString("# reads it through CMAKE_PREFIX_PATH, which cudaenv's activation sets.\n")
	b.WriteString("get_filename_component(_cudaenv_prefix \"${CMAKE_CURRENT_LIST_DIR}/../../..\" ABSOLUTE)\n")
	vp := p.VarPrefix
	fmt.Fprintf(&b, "set(%s_VERSION \"%s\")\n", vp, version)
	fmt.Fprintf(&b, "set(%s_INCLUDE_DIR \"${_cudaenv_prefix}/include\")\n", vp)
	fmt.Fprintf(&b, "set(%s_INCLUDE_DIRS \"${_cudaenv_prefix}/include\")\n", vp)
	fmt.Fprintf(&b, "set(%s_LIBRARY_DIR \"${_cudaenv_prefix}/lib\")\n", vp)
	fmt.Fprintf(&b, "set(%s_BINARY_DIR \"${_cudaenv_prefix}/bin\")\n", vp)
	for _, f := range found {
		kind := "SHARED"
		if f.Static {
			kind = "STATIC"
		}
		fmt.Fprintf(&b, "if(NOT TARGET %s)\n", f.Name)
		fmt.Fprintf(&b, "  add_library(%s %s IMPORTED)\n", f.Name, kind)
		fmt.Fprintf(&b, "  set_target_properties(%s PROPERTIES\n", f.Name)
		fmt.Fprintf(&b, "    IMPORTED_LOCATION \"${_cudaenv_prefix}/lib/%s\"\n", f.file)
		if !f.Static && strings.Contains(f.file, ".so.") {
			fmt.Fprintf(&b, "    IMPORTED_SONAME \"%s\"\n", f.file)
		}
		b.WriteString("    INTERFACE_INCLUDE_DIRECTORIES \"${_cudaenv_prefix}/include\")\n")
		b.WriteString("endif()\n")
	}
	fmt.Fprintf(&b, "set(%s_FOUND TRUE)\n", p.Name)
	b.WriteString("unset(_cudaenv_prefix)\n")
	return b.String()
}

// versionScript accepts a request for this version or an older one.
func versionScript(version string) string {
	return "# written by cudaenv: this version, compatible with requests for it or older ones.\n" +
		"set(PACKAGE_VERSION \"" + version + "\")\n" +
		"if(PACKAGE_FIND_VERSION AND PACKAGE_VERSION VERSION_LESS PACKAGE_FIND_VERSION)\n" +
		"  set(PACKAGE_VERSION_COMPATIBLE FALSE)\n" +
		"else()\n" +
		"  set(PACKAGE_VERSION_COMPATIBLE TRUE)\n" +
		"  if(PACKAGE_FIND_VERSION STREQUAL PACKAGE_VERSION)\n" +
		"    set(PACKAGE_VERSION_EXACT TRUE)\n" +
		"  endif()\n" +
		"endif()\n"
}
