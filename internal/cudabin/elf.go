package cudabin

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/cudaenv/cudaenv/internal/fatbin"
	"github.com/cudaenv/cudaenv/internal/ldso"
)

// Bounds on what one ELF file may make inspect read: real libraries stay
// far below them (libtorch_cpu.so's .dynstr: about 30 MB).
const (
	maxTableBytes = 256 << 20 // .dynamic, .dynstr, .dynsym, version tables
	maxSections   = 1 << 16
	maxNeeded     = 4096
)

// errNotELF is returned for a file that does not start with ELF's magic.
var errNotELF = errors.New("not an ELF file")

// elfError is an error reading path's ELF structure in words a user
// can act on: debug/elf says a bare "EOF" for a header that points past
// the end of the file (a truncated download, a damaged copy).
func elfError(path string, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%s: a truncated or damaged ELF file (its headers point past its end)", path)
	}
	return fmt.Errorf("%s: %w", path, err)
}

// object is one ELF file as inspect reads it.
type object struct {
	ldso.Object
	Kind    string // "shared object", "executable", "relocatable"
	Entries []fatbin.Entry
	// FatbinErr says why a fat binary could not be read whole (the
	// entries before the fault are kept).
	FatbinErr string
}

// readObject reads an ELF file's loader facts and, with fatbins, the
// entries of its .nv_fatbin sections, through r (size bytes): headers,
// the dynamic section and its strings, and the fat binaries' entry
// headers, never the rest.
func readObject(r io.ReaderAt, size int64, path string, withFatbins bool) (obj object, err error) {
	defer func() {
		// debug/elf on a hostile file must not take inspect down.
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: unreadable ELF file (%v)", path, p)
		}
	}()
	var magic [4]byte
	if _, err := r.ReadAt(magic[:], 0); err != nil || string(magic[:]) != elf.ELFMAG {
		return obj, errNotELF
	}
	f, err := elf.NewFile(r)
	if err != nil {
		return obj, elfError(path, err)
	}
	if err := sane(f, size); err != nil {
		return obj, elfError(path, err)
	}
	obj.Path = path
	obj.Arch = archFlag(f)
	switch f.Type {
	case elf.ET_DYN:
		obj.Kind = "shared object"
		if f.Entry != 0 && hasInterp(f) {
			obj.Kind = "executable" // a PIE
		}
	case elf.ET_EXEC:
		obj.Kind = "executable"
	case elf.ET_REL:
		obj.Kind = "relocatable object"
	default:
		obj.Kind = f.Type.String()
	}
	if err := dynamicFacts(f, &obj.Object); err != nil {
		return obj, elfError(path, err)
	}
	if withFatbins {
		for _, s := range f.Sections {
			if s.Name != ".nv_fatbin" && s.Name != "__nv_relfatbin" || s.Type == elf.SHT_NOBITS {
				continue
			}
			es, err := fatbin.Read(s, int64(s.Size), fatbin.DefaultLimits)
			obj.Entries = append(obj.Entries, es...)
			if err != nil && obj.FatbinErr == "" {
				obj.FatbinErr = err.Error()
			}
		}
	}
	return obj, nil
}

func hasInterp(f *elf.File) bool {
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return true
		}
	}
	return false
}

// archFlag is the ld.so.cache architecture of a file's kind; 0 for kinds
// the cache does not flag (the loader then takes any entry of 0).
func archFlag(f *elf.File) int32 {
	switch {
	case f.Class == elf.ELFCLASS64 && f.Machine == elf.EM_X86_64:
		return ldso.FlagX8664Lib64
	case f.Class == elf.ELFCLASS64 && f.Machine == elf.EM_AARCH64:
		return ldso.FlagAArch64
	}
	return -1 // matches no cache entry
}

// dynamicFacts reads DT_NEEDED, DT_SONAME, DT_RPATH, DT_RUNPATH and
// DF_1_NODEFLIB, checking the tables' sizes first.
func dynamicFacts(f *elf.File, o *ldso.Object) error {
	ds := f.SectionByType(elf.SHT_DYNAMIC)
	if ds == nil {
		return nil // static, or a relocatable object
	}
	if ds.Size > maxTableBytes {
		return fmt.Errorf("dynamic section of %d bytes", ds.Size)
	}
	if ds.Link == 0 || int(ds.Link) >= len(f.Sections) || f.Sections[ds.Link].Size > maxTableBytes {
		return errors.New("dynamic section without a string table of a sane size")
	}
	var err error
	if o.Needed, err = f.DynString(elf.DT_NEEDED); err != nil {
		return err
	}
	if len(o.Needed) > maxNeeded {
		return fmt.Errorf("%d DT_NEEDED entries", len(o.Needed))
	}
	if s, _ := f.DynString(elf.DT_SONAME); len(s) > 0 {
		o.Soname = s[0]
	}
	for _, tag := range []elf.DynTag{elf.DT_RPATH, elf.DT_RUNPATH} {
		v, err := f.DynString(tag)
		if err != nil {
			return err
		}
		var dirs []string
		for _, s := range v {
			dirs = append(dirs, strings.Split(s, ":")...)
		}
		if tag == elf.DT_RPATH {
			o.RPath = dirs
		} else {
			o.RunPath = dirs
		}
	}
	if v, _ := f.DynValue(elf.DT_FLAGS_1); len(v) > 0 && v[0]&uint64(elf.DF_1_NODEFLIB) != 0 {
		o.NoDefaultLib = true
	}
	return nil
}

// symbols are the versioned dynamic symbols of a file that matter to the
// undefined check.
type symbols struct {
	undefined []symRef            // non-weak references with a version node
	defined   map[string][]string // name -> versions, only for names asked
	noVerdef  bool                // the file defines no versions
}

type symRef struct{ name, version, library string }

// readSymbols reads a file's dynamic symbols: its versioned undefined
// references, and, of the names keep accepts (nil: none), the versions it
// defines.
func readSymbols(r io.ReaderAt, size int64, keep func(string) bool) (syms symbols, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("unreadable symbol table (%v)", p)
		}
	}()
	f, err := elf.NewFile(r)
	if err != nil {
		return syms, err
	}
	if err := sane(f, size); err != nil {
		return syms, err
	}
	for _, t := range []elf.SectionType{elf.SHT_DYNSYM, elf.SHT_GNU_VERSYM, elf.SHT_GNU_VERNEED, elf.SHT_GNU_VERDEF} {
		if s := f.SectionByType(t); s != nil && s.Size > maxTableBytes {
			return syms, fmt.Errorf("%s of %d bytes", t, s.Size)
		}
	}
	if s := f.SectionByType(elf.SHT_DYNSYM); s != nil && (s.Link == 0 || int(s.Link) >= len(f.Sections) || f.Sections[s.Link].Size > maxTableBytes) {
		return syms, errors.New("symbol table without a string table of a sane size")
	}
	all, err := f.DynamicSymbols()
	if err != nil {
		if errors.Is(err, elf.ErrNoSymbols) {
			return syms, nil
		}
		return syms, err
	}
	syms.noVerdef = f.SectionByType(elf.SHT_GNU_VERDEF) == nil
	syms.defined = map[string][]string{}
	for _, s := range all {
		if s.Section == elf.SHN_UNDEF {
			if elf.ST_BIND(s.Info) != elf.STB_WEAK && s.Name != "" && s.Version != "" && s.Library != "" {
				syms.undefined = append(syms.undefined, symRef{s.Name, s.Version, s.Library})
			}
			continue
		}
		if keep != nil && keep(s.Name) {
			syms.defined[s.Name] = append(syms.defined[s.Name], s.Version)
		}
	}
	return syms, nil
}

// sane refuses a file whose sections claim bytes it does not have (a
// hostile file would make debug/elf read or allocate for them).
func sane(f *elf.File, size int64) error {
	if len(f.Sections) > maxSections {
		return fmt.Errorf("%d sections", len(f.Sections))
	}
	for _, s := range f.Sections {
		if s.Type == elf.SHT_NOBITS || s.Type == elf.SHT_NULL {
			continue
		}
		if s.Offset > uint64(size) || s.Size > uint64(size)-s.Offset {
			return fmt.Errorf("section %q runs past the end of the file", s.Name)
		}
	}
	return nil
}
