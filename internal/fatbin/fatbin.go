// Package fatbin lists what NVIDIA fat binaries (the .nv_fatbin sections
// of CUDA programs and libraries) carry: machine code (SASS) per GPU
// architecture and PTX per virtual architecture with its ISA version. It
// reads the containers' entry headers only: the architecture, the kind,
// the PTX ISA version and the compression are all in the header, so no
// payload is read or decompressed (compressed entries, LZ4 with flag
// 0x2000 or zstd with flag 0x8000, list like plain ones).
//
// Layout (learnt from cuobjdump's output on nvcc-built fixtures and from
// public descriptions: n-eiling/cuda-fatbin-decompression,
// GrigoryEvko/nvopen-tools fatbin/FORMAT_SPECIFICATION.md): a container is
// a 16-byte header (magic 0xBA55ED50, version 1, header size 16, size of
// what follows), then entries, each a header of at least 64 bytes (its
// own size at offset 4) followed by its payload (size at offset 8). An
// entry of kind 0x100 (nvcc --concat) holds several images in one
// payload; its header lists each image's own 64-byte-or-longer header.
package fatbin

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Magic starts every fat binary container.
const Magic = 0xBA55ED50

// Kind of an entry.
type Kind uint8

const (
	SASS Kind = iota + 1 // a cubin: machine code for one GPU architecture
	PTX                  // PTX text, JIT-compiled by the driver
)

// Entry is one image of a fat binary.
type Entry struct {
	Kind Kind
	Arch int    // 90 for sm_90 / compute_90
	Var  string // "a" (arch-specific, sm_90a) or "f" (family, compute_100f) or ""
	// ISA is a PTX entry's ISA version ("9.5"); for SASS the cubin's
	// format version.
	ISA string
	// Compression of the payload: "", "lz4" or "zstd".
	Compression string
	Size        uint64 // bytes of payload in the container
}

// Name is the architecture as nvcc and cuobjdump write it: sm_90a for
// machine code, compute_90 for PTX.
func (e Entry) Name() string {
	if e.Kind == PTX {
		return "compute_" + strconv.Itoa(e.Arch) + e.Var
	}
	return "sm_" + strconv.Itoa(e.Arch) + e.Var
}

// Limits bound what one file may make the reader do.
type Limits struct {
	Containers int // containers in a section
	Entries    int // entries in all
}

// DefaultLimits are far above real libraries (libtorch_cuda.so: about
// 5,000 containers; libcublasLt: 2,775 containers, 5,424 entries).
var DefaultLimits = Limits{Containers: 1 << 20, Entries: 1 << 21}

// ErrFormat is returned (wrapped) for bytes that are not a fat binary of a
// known layout.
var ErrFormat = errors.New("not a fat binary of a known layout")

const (
	containerHeader = 16
	entryBase       = 64
	maxEntryHeader  = 4096

	kindPTX    = 1
	kindELF    = 2
	kindConcat = 0x100

	flagLZ4    = 0x2000
	flagZstd   = 0x8000
	flagArch   = 0x100000 // sm_90a
	flagFamily = 0x200000 // compute_100f
)

// Read lists the entries of the containers that fill r from 0 to size
// (a .nv_fatbin section: containers back to back, zero padding between
// them allowed), reading headers only.
func Read(r io.ReaderAt, size int64, lim Limits) ([]Entry, error) {
	var out []Entry
	var hdr [containerHeader]byte
	containers := 0
	for off := int64(0); off+containerHeader <= size; {
		if _, err := r.ReadAt(hdr[:], off); err != nil {
			return out, fmt.Errorf("fatbin container at %#x: %w", off, err)
		}
		magic := binary.LittleEndian.Uint32(hdr[0:])
		if magic == 0 {
			off += 8 // alignment padding between containers
			continue
		}
		if containers++; containers > lim.Containers {
			return out, fmt.Errorf("more than %d fatbin containers: %w", lim.Containers, ErrFormat)
		}
		body, err := containerSize(hdr[:])
		if err != nil {
			return out, fmt.Errorf("fatbin container at %#x: %w", off, err)
		}
		end := off + containerHeader + int64(body)
		if body > uint64(size) || end > size {
			return out, fmt.Errorf("fatbin container at %#x claims %d bytes, past the section's end: %w", off, body, ErrFormat)
		}
		if out, err = readEntries(r, off+containerHeader, end, out, lim); err != nil {
			return out, fmt.Errorf("fatbin container at %#x: %w", off, err)
		}
		off = end
	}
	return out, nil
}

// containerSize checks a container header and returns the size of what
// follows it.
func containerSize(h []byte) (uint64, error) {
	if binary.LittleEndian.Uint32(h[0:]) != Magic {
		return 0, fmt.Errorf("magic %#x: %w", binary.LittleEndian.Uint32(h[0:]), ErrFormat)
	}
	if v, hs := binary.LittleEndian.Uint16(h[4:]), binary.LittleEndian.Uint16(h[6:]); v != 1 || hs != containerHeader {
		return 0, fmt.Errorf("version %d, header size %d: %w", v, hs, ErrFormat)
	}
	return binary.LittleEndian.Uint64(h[8:]), nil
}

// readEntries appends the entries between off and end.
func readEntries(r io.ReaderAt, off, end int64, out []Entry, lim Limits) ([]Entry, error) {
	buf := make([]byte, entryBase)
	for off < end {
		if end-off < entryBase {
			if allZero(r, off, end) {
				return out, nil
			}
			return out, fmt.Errorf("%d bytes left after the entries: %w", end-off, ErrFormat)
		}
		if _, err := r.ReadAt(buf[:entryBase], off); err != nil {
			return out, err
		}
		hsz := int64(binary.LittleEndian.Uint32(buf[4:]))
		payload := binary.LittleEndian.Uint64(buf[8:])
		if hsz < entryBase || hsz > maxEntryHeader || payload > uint64(end-off-hsz) {
			return out, fmt.Errorf("entry at %#x: header %d bytes, payload %d bytes, %d left: %w", off, hsz, payload, end-off, ErrFormat)
		}
		if int64(len(buf)) < hsz {
			buf = make([]byte, hsz)
		}
		h := buf[:hsz]
		if _, err := r.ReadAt(h, off); err != nil {
			return out, err
		}
		var err error
		if out, err = appendEntry(out, h, lim); err != nil {
			return out, fmt.Errorf("entry at %#x: %w", off, err)
		}
		off += hsz + int64(payload)
	}
	return out, nil
}

func allZero(r io.ReaderAt, off, end int64) bool {
	b := make([]byte, end-off)
	if _, err := r.ReadAt(b, off); err != nil {
		return false
	}
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// appendEntry decodes one entry header h (its whole length) and appends
// the images it describes.
func appendEntry(out []Entry, h []byte, lim Limits) ([]Entry, error) {
	kind := binary.LittleEndian.Uint16(h[0:])
	if kind != kindConcat {
		if len(out) >= lim.Entries {
			return out, fmt.Errorf("more than %d entries: %w", lim.Entries, ErrFormat)
		}
		if e, ok := decode(h, binary.LittleEndian.Uint64(h[8:])); ok {
			out = append(out, e)
		}
		return out, nil
	}
	// nvcc --concat: after the 64-byte header, a count and the length of
	// the list, then each image's header; an image header's size field
	// holds the image's offset in the (decompressed) payload instead.
	if len(h) < entryBase+8 {
		return out, fmt.Errorf("concatenated entry without a list: %w", ErrFormat)
	}
	count := int(binary.LittleEndian.Uint32(h[entryBase:]))
	list := int(binary.LittleEndian.Uint32(h[entryBase+4:]))
	if count <= 0 || list < 8 || entryBase+list > len(h) || count > (list-8)/entryBase {
		return out, fmt.Errorf("concatenated entry lists %d images in %d bytes: %w", count, list, ErrFormat)
	}
	subs := h[entryBase+8 : entryBase+list]
	lengths, ok := subLengths(subs, count)
	if !ok {
		return out, fmt.Errorf("concatenated entry's image headers do not chain: %w", ErrFormat)
	}
	for i, p := 0, 0; i < count; i++ {
		if len(out) >= lim.Entries {
			return out, fmt.Errorf("more than %d entries: %w", lim.Entries, ErrFormat)
		}
		sh := subs[p : p+lengths[i]]
		e, ok := decode(sh, binary.LittleEndian.Uint64(sh[8:]))
		if ok {
			if e.Compression == "" {
				e.Compression = compression(binary.LittleEndian.Uint64(h[40:]))
			}
			out = append(out, e)
		}
		p += lengths[i]
	}
	return out, nil
}

// subLengths finds the length of each image header in a concatenated
// entry's list: 64 bytes, or more for images with an extension (80 for
// PTX, 120 for sm_100 and newer cubins). The list says no lengths, so the
// split is the one where every header is an image of a known kind and the
// images' offsets follow one another.
func subLengths(subs []byte, count int) ([]int, bool) {
	var lengths []int
	var walk func(p int, want uint64) bool
	walk = func(p int, want uint64) bool {
		if len(lengths) == count {
			return p == len(subs)
		}
		for n := entryBase; n <= 256 && p+n <= len(subs); n += 8 {
			h := subs[p:]
			kind := binary.LittleEndian.Uint16(h[0:])
			at := uint64(binary.LittleEndian.Uint32(h[4:]))
			if kind != kindPTX && kind != kindELF || at != want && at != (want+7)&^7 {
				return false
			}
			if len(lengths) < count-1 {
				// The next header must start right here.
				if p+n+entryBase > len(subs) {
					break
				}
				nk := binary.LittleEndian.Uint16(subs[p+n:])
				if nk != kindPTX && nk != kindELF || binary.LittleEndian.Uint16(subs[p+n+2:]) != binary.LittleEndian.Uint16(h[2:]) {
					continue
				}
			}
			lengths = append(lengths, n)
			if walk(p+n, at+binary.LittleEndian.Uint64(h[8:])) {
				return true
			}
			lengths = lengths[:len(lengths)-1]
		}
		return false
	}
	return lengths, walk(0, 0)
}

// decode reads an image header: kind at 0, PTX ISA (or cubin version)
// minor at 24 and major at 26, architecture at 28, flags at 40.
func decode(h []byte, size uint64) (Entry, bool) {
	e := Entry{Size: size}
	switch binary.LittleEndian.Uint16(h[0:]) {
	case kindPTX:
		e.Kind = PTX
	case kindELF:
		e.Kind = SASS
	default:
		return e, false
	}
	minor, major := binary.LittleEndian.Uint16(h[24:]), binary.LittleEndian.Uint16(h[26:])
	e.ISA = strconv.Itoa(int(major)) + "." + strconv.Itoa(int(minor))
	arch := binary.LittleEndian.Uint32(h[28:])
	if arch == 0 || arch > 10000 {
		return e, false
	}
	e.Arch = int(arch)
	flags := binary.LittleEndian.Uint64(h[40:])
	switch {
	case flags&flagArch != 0:
		e.Var = "a"
	case flags&flagFamily != 0 && e.Kind == PTX:
		// cuobjdump names a family cubin by its architecture alone.
		e.Var = "f"
	}
	e.Compression = compression(flags)
	return e, true
}

func compression(flags uint64) string {
	switch {
	case flags&flagZstd != 0:
		return "zstd"
	case flags&flagLZ4 != 0:
		return "lz4"
	}
	return ""
}
