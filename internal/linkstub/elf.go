package linkstub

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// Arch is a machine a stub is built for.
type Arch int

const (
	X86_64  Arch = iota + 1 // linux-x86_64
	AArch64                 // linux-sbsa and linux-aarch64
)

// ArchOf is the machine of an NVIDIA Linux platform key; false for the
// platforms no stub is built for (Windows, whose import libraries NVIDIA
// ships in lib/x64, and ppc64le).
func ArchOf(platform string) (Arch, bool) {
	switch platform {
	case "linux-x86_64":
		return X86_64, true
	case "linux-sbsa", "linux-aarch64":
		return AArch64, true
	}
	return 0, false
}

func (a Arch) String() string {
	switch a {
	case X86_64:
		return "x86-64"
	case AArch64:
		return "aarch64"
	}
	return fmt.Sprintf("Arch(%d)", int(a))
}

// code is one function body every symbol points at: it returns ret (the
// library's "this is a stub" error, should the stub ever be loaded).
func (a Arch) code(ret uint16) ([]byte, uint16, error) {
	switch a {
	case X86_64:
		// mov eax, imm32; ret; int3 padding.
		b := []byte{0xb8, byte(ret), byte(ret >> 8), 0, 0, 0xc3}
		return append(b, bytes.Repeat([]byte{0xcc}, 10)...), 62, nil // EM_X86_64
	case AArch64:
		// movz w0, #ret; ret
		b := binary.LittleEndian.AppendUint32(nil, 0x52800000|uint32(ret)<<5)
		b = binary.LittleEndian.AppendUint32(b, 0xd65f03c0)
		return b, 183, nil // EM_AARCH64
	}
	return nil, 0, fmt.Errorf("no stub for %v", a)
}

// ELF constants used below.
const (
	ptLoad      = 1
	ptDynamic   = 2
	ptGNUStack  = 0x6474e551
	shtProgbits = 1
	shtStrtab   = 3
	shtHash     = 5
	shtDynamic  = 6
	shtDynsym   = 11
	dtNull      = 0
	dtHash      = 4
	dtStrtab    = 5
	dtSymtab    = 6
	dtStrsz     = 10
	dtSyment    = 11
	dtSoname    = 14
	pageAlign   = 0x10000 // the largest page of either machine (aarch64 64K)
)

// Build returns a shared object for arch, named soname, that exports
// names as functions: each returns ret. It is what a linker needs to
// resolve -l<name> (the dynamic symbols and the SONAME recorded in the
// program, so the real library is loaded at run time), nothing more: no
// relocations, no dependencies, no initialisers. names must be C
// identifiers (Functions' output); soname is checked too.
func Build(arch Arch, soname string, names []string, ret uint16) ([]byte, error) {
	code, machine, err := arch.code(ret)
	if err != nil {
		return nil, err
	}
	if !validSoname(soname) {
		return nil, fmt.Errorf("soname %q is not a library file name", soname)
	}
	if len(names) > MaxFunctions {
		return nil, fmt.Errorf("%d functions: more than %d", len(names), MaxFunctions)
	}
	seen := map[string]bool{}
	for _, n := range names {
		if !isIdent(n) || len(n) > maxName || seen[n] {
			return nil, fmt.Errorf("function name %q: not a C identifier, or given twice", n)
		}
		seen[n] = true
	}

	// .dynstr: "", the soname, the names.
	var dynstr bytes.Buffer
	dynstr.WriteByte(0)
	sonameOff := dynstr.Len()
	dynstr.WriteString(soname)
	dynstr.WriteByte(0)
	nameOff := make([]uint32, len(names))
	for i, n := range names {
		nameOff[i] = uint32(dynstr.Len())
		dynstr.WriteString(n)
		dynstr.WriteByte(0)
	}

	const ehdrSize, phdrSize, shdrSize, symSize, dynSize = 64, 56, 64, 24, 16
	const nPhdr, nShdr = 4, 7
	nsym := len(names) + 1
	nbucket := len(names)/2 + 1
	hashSize := 4 * (2 + nbucket + nsym)

	align := func(n, a int) int { return (n + a - 1) &^ (a - 1) }
	hashOff := align(ehdrSize+nPhdr*phdrSize, 8)
	symOff := align(hashOff+hashSize, 8)
	strOff := symOff + nsym*symSize
	textOff := align(strOff+dynstr.Len(), 16)
	textEnd := textOff + len(code)
	dynOff := align(textEnd, 8)
	dynAddr := dynOff + pageAlign // its own page: writable, not executable
	dyn := [][2]uint64{
		{dtSoname, uint64(sonameOff)}, {dtHash, uint64(hashOff)}, {dtStrtab, uint64(strOff)},
		{dtSymtab, uint64(symOff)}, {dtStrsz, uint64(dynstr.Len())}, {dtSyment, symSize}, {dtNull, 0},
	}
	dynEnd := dynOff + len(dyn)*dynSize
	shstr := []byte("\x00.hash\x00.dynsym\x00.dynstr\x00.text\x00.dynamic\x00.shstrtab\x00")
	shstrOff := dynEnd
	shOff := align(shstrOff+len(shstr), 8)
	size := shOff + nShdr*shdrSize

	out := make([]byte, size)
	le := binary.LittleEndian
	// ELF header.
	copy(out, []byte{0x7f, 'E', 'L', 'F', 2, 1, 1, 0}) // 64-bit, little-endian, version 1, System V
	le.PutUint16(out[16:], 3)                          // ET_DYN
	le.PutUint16(out[18:], machine)
	le.PutUint32(out[20:], 1)
	le.PutUint64(out[32:], ehdrSize) // e_phoff
	le.PutUint64(out[40:], uint64(shOff))
	le.PutUint16(out[52:], ehdrSize)
	le.PutUint16(out[54:], phdrSize)
	le.PutUint16(out[56:], nPhdr)
	le.PutUint16(out[58:], shdrSize)
	le.PutUint16(out[60:], nShdr)
	le.PutUint16(out[62:], nShdr-1) // .shstrtab

	phdr := func(i int, typ, flags uint32, off, addr, sz, al int) {
		p := out[ehdrSize+i*phdrSize:]
		le.PutUint32(p[0:], typ)
		le.PutUint32(p[4:], flags)
		le.PutUint64(p[8:], uint64(off))
		le.PutUint64(p[16:], uint64(addr))
		le.PutUint64(p[24:], uint64(addr))
		le.PutUint64(p[32:], uint64(sz))
		le.PutUint64(p[40:], uint64(sz))
		le.PutUint64(p[48:], uint64(al))
	}
	const pfX, pfW, pfR = 1, 2, 4
	phdr(0, ptLoad, pfR|pfX, 0, 0, textEnd, pageAlign)
	phdr(1, ptLoad, pfR|pfW, dynOff, dynAddr, dynEnd-dynOff, pageAlign)
	phdr(2, ptDynamic, pfR|pfW, dynOff, dynAddr, dynEnd-dynOff, 8)
	phdr(3, ptGNUStack, pfR|pfW, 0, 0, 0, 16)

	// .hash: the System V hash table the dynamic loader reads.
	h := out[hashOff:]
	le.PutUint32(h[0:], uint32(nbucket))
	le.PutUint32(h[4:], uint32(nsym))
	buckets, chains := h[8:], h[8+4*nbucket:]
	for i, n := range names {
		sym := uint32(i + 1)
		b := elfHash(n) % uint32(nbucket)
		le.PutUint32(chains[4*sym:], le.Uint32(buckets[4*b:]))
		le.PutUint32(buckets[4*b:], sym)
	}

	// .dynsym: the null symbol, then one global function per name.
	for i := range names {
		s := out[symOff+(i+1)*symSize:]
		le.PutUint32(s[0:], nameOff[i])
		s[4] = 1<<4 | 2        // STB_GLOBAL, STT_FUNC
		le.PutUint16(s[6:], 4) // .text
		le.PutUint64(s[8:], uint64(textOff))
		le.PutUint64(s[16:], uint64(len(code)))
	}
	copy(out[strOff:], dynstr.Bytes())
	copy(out[textOff:], code)
	for i, d := range dyn {
		le.PutUint64(out[dynOff+i*dynSize:], d[0])
		le.PutUint64(out[dynOff+i*dynSize+8:], d[1])
	}
	copy(out[shstrOff:], shstr)

	sh := func(i int, name, typ uint32, flags uint64, addr, off, sz int, link, info uint32, al, entsize uint64) {
		s := out[shOff+i*shdrSize:]
		le.PutUint32(s[0:], name)
		le.PutUint32(s[4:], typ)
		le.PutUint64(s[8:], flags)
		le.PutUint64(s[16:], uint64(addr))
		le.PutUint64(s[24:], uint64(off))
		le.PutUint64(s[32:], uint64(sz))
		le.PutUint32(s[40:], link)
		le.PutUint32(s[44:], info)
		le.PutUint64(s[48:], al)
		le.PutUint64(s[56:], entsize)
	}
	const shfW, shfA, shfX = 1, 2, 4
	name := func(s string) uint32 { return uint32(bytes.Index(shstr, []byte("\x00"+s+"\x00")) + 1) }
	sh(1, name(".hash"), shtHash, shfA, hashOff, hashOff, hashSize, 2, 0, 8, 4)
	sh(2, name(".dynsym"), shtDynsym, shfA, symOff, symOff, nsym*symSize, 3, 1, 8, symSize)
	sh(3, name(".dynstr"), shtStrtab, shfA, strOff, strOff, dynstr.Len(), 0, 0, 1, 0)
	sh(4, name(".text"), shtProgbits, shfA|shfX, textOff, textOff, len(code), 0, 0, 16, 0)
	sh(5, name(".dynamic"), shtDynamic, shfW|shfA, dynAddr, dynOff, dynEnd-dynOff, 3, 0, 8, dynSize)
	sh(6, name(".shstrtab"), shtStrtab, 0, 0, shstrOff, len(shstr), 0, 0, 1, 0)
	return out, nil
}

// elfHash is the System V ABI's symbol hash.
func elfHash(name string) uint32 {
	var h uint32
	for i := 0; i < len(name); i++ {
		h = h<<4 + uint32(name[i])
		if g := h & 0xf0000000; g != 0 {
			h ^= g >> 24
		}
		h &^= 0xf0000000
	}
	return h
}

// validSoname: lib<name>.so[.N...], plain characters only.
func validSoname(s string) bool {
	if len(s) > maxName || len(s) < 7 || s[:3] != "lib" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isIdentChar(c) && c != '.' && c != '-' && c != '+' {
			return false
		}
	}
	return bytes.Contains([]byte(s), []byte(".so"))
}
