package cudabin

import (
	"archive/zip"
	"bytes"
	"context"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/cudaenv/cudaenv/internal/fatbin"
	"github.com/cudaenv/cudaenv/internal/inflate"
)

// Bounds on a wheel's members.
// maxStreamPrefix is how much of the start of a deflated member is kept
// to read its dynamic strings from (the rest streams by); a variable for
// tests.
var maxStreamPrefix int64 = 32 << 20

// maxStreamTail is kept before the section headers, where GNU ld puts
// .shstrtab; a variable for tests.
var maxStreamTail int64 = 64 << 10

const (
	maxNamesTable = 64 << 10 // a sane .shstrtab
	maxWheelFiles = 200000
)

// wheel reports on a wheel's ELF members, read in place: a stored member
// through its byte range, a deflated one inflated once as a stream
// (fat binaries found by their headers as they pass, the dynamic section
// and string table kept). Its libraries are not looked up on this
// machine: the wheel is not installed.
func (in *inspector) wheel(ctx context.Context, p string, named bool) ([]Report, error) {
	f, err := openRegular(in.file(p))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	zr, err := zip.NewReader(f, fi.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: not a wheel: %w", p, err)
	}
	if len(zr.File) > maxWheelFiles {
		return nil, fmt.Errorf("%s: %d files in a wheel", p, len(zr.File))
	}
	zr.RegisterDecompressor(zip.Deflate, func(r io.Reader) io.ReadCloser { return inflate.NewReader(r) })
	var members []*zip.File
	for _, m := range zr.File {
		name := path.Base(m.Name)
		if strings.HasSuffix(m.Name, "/") || !(strings.HasSuffix(name, ".so") || strings.Contains(name, ".so.") || strings.Contains(m.Name, "/bin/")) {
			continue
		}
		if m.Method != zip.Store && m.Method != zip.Deflate {
			continue
		}
		members = append(members, m)
	}
	if len(members) > in.opt.MaxFiles {
		return nil, fmt.Errorf("%s: more than %d libraries in a wheel", p, in.opt.MaxFiles)
	}
	// Largest first: the biggest member sets the time, so it starts first.
	sort.SliceStable(members, func(i, j int) bool { return members[i].UncompressedSize64 > members[j].UncompressedSize64 })
	out, err := in.each(ctx, len(members), func(i int) *Report {
		r, err := in.member(ctx, f, p, members[i])
		switch {
		case errors.Is(err, errNotELF):
		case err != nil:
			u := unreadable(p+"!"+members[i].Name, err)
			return &u
		case interesting(r):
			return &r
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	if named && len(out) == 0 {
		out = append(out, Report{Path: p, Kind: "wheel", SASS: []string{}, PTX: []PTX{}, Needs: []Need{}, Undefined: []Undefined{}, Notes: []string{"no library or program in it has GPU code or links a CUDA library"}})
	}
	return out, nil
}

// member reports on one member of a wheel.
func (in *inspector) member(ctx context.Context, wf *os.File, wheel string, m *zip.File) (Report, error) {
	name := wheel + "!" + m.Name
	var obj object
	if m.Method == zip.Store {
		off, err := m.DataOffset()
		if err != nil {
			return Report{}, err
		}
		obj, err = readObject(io.NewSectionReader(wf, off, int64(m.UncompressedSize64)), int64(m.UncompressedSize64), name, true)
		if err != nil {
			return Report{}, err
		}
	} else {
		rc, err := m.Open()
		if err != nil {
			return Report{}, err
		}
		defer rc.Close()
		obj, err = streamObject(ctxReader{ctx, rc}, name, int64(m.UncompressedSize64))
		if err != nil {
			return Report{}, err
		}
	}
	rep := in.fatbinReport(name, obj)
	for _, n := range obj.Needed {
		if IsCUDALibrary(n) {
			rep.Needs = append(rep.Needs, Need{Name: n, Via: "not looked up: the wheel is not installed"})
		}
	}
	rep.Verdict = judge(rep, in.opt)
	return rep, nil
}

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// streamObject reads an ELF file from a stream of size bytes in one
// pass: its fat binaries as they pass, and the windows debug/elf needs
// for the loader facts (the start, the dynamic segment, the section
// headers and what precedes them).
func streamObject(r io.Reader, name string, size int64) (object, error) {
	head := make([]byte, min(size, 64<<10))
	if _, err := io.ReadFull(r, head); err != nil {
		return object{}, fmt.Errorf("%s: %w", name, err)
	}
	if len(head) < 64 || string(head[:4]) != elf.ELFMAG {
		return object{}, errNotELF
	}
	cap := &captured{size: size, dynamic: -1}
	cap.want(0, min(size, maxStreamPrefix))
	if head[elf.EI_CLASS] == byte(elf.ELFCLASS64) && head[elf.EI_DATA] == byte(elf.ELFDATA2LSB) {
		le := binary.LittleEndian
		phoff, shoff := int64(le.Uint64(head[0x20:])), int64(le.Uint64(head[0x28:]))
		phent, phnum := int64(le.Uint16(head[0x36:])), int64(le.Uint16(head[0x38:]))
		shent, shnum := int64(le.Uint16(head[0x3a:])), int64(le.Uint16(head[0x3c:]))
		var loads [][3]int64 // vaddr, offset, filesz
		for i := range phnum {
			at := phoff + i*phent
			if at < 0 || phent < 56 || at+56 > int64(len(head)) {
				break
			}
			off, filesz := int64(le.Uint64(head[at+8:])), int64(le.Uint64(head[at+32:]))
			switch elf.ProgType(le.Uint32(head[at:])) {
			case elf.PT_DYNAMIC:
				cap.dynamic = len(cap.windows)
				cap.want(off, filesz)
			case elf.PT_LOAD:
				loads = append(loads, [3]int64{int64(le.Uint64(head[at+16:])), off, filesz})
			}
		}
		// patchelf moves .dynstr past .dynamic, to the end: once the
		// dynamic section has passed, keep its string table if it is ahead.
		cap.onDynamic = func(dyn []byte) {
			var strtab, strsz int64 = -1, 0
			for p := 0; p+16 <= len(dyn); p += 16 {
				switch elf.DynTag(le.Uint64(dyn[p:])) {
				case elf.DT_STRTAB:
					strtab = int64(le.Uint64(dyn[p+8:]))
				case elf.DT_STRSZ:
					strsz = int64(le.Uint64(dyn[p+8:]))
				}
			}
			for _, l := range loads {
				if strtab >= l[0] && strtab < l[0]+l[2] {
					cap.want(l[1]+strtab-l[0], strsz)
					return
				}
			}
		}
		if shoff > 0 && shent > 0 {
			cap.want(shoff-maxStreamTail, maxStreamTail+shent*shnum)
		}
	}
	cap.write(head)
	tee := io.TeeReader(r, cap)
	entries, ferr := fatbin.Scan(io.MultiReader(bytes.NewReader(head), tee), fatbin.DefaultLimits)
	// The section headers come last: read to the end.
	if _, err := io.Copy(io.Discard, tee); err != nil {
		return object{}, fmt.Errorf("%s: %w", name, err)
	}
	cap.nameless(head)
	obj, err := readObject(cap, size, name, false)
	if err != nil {
		// The loader facts lie outside what was kept: the fat binaries
		// still say what the file carries.
		obj = object{Kind: "ELF file"}
		obj.Path = name
	}
	obj.Entries = entries
	if ferr != nil {
		obj.FatbinErr = ferr.Error()
	}
	return obj, nil
}

// captured keeps chosen byte ranges of a stream written to it in order,
// and reads them back (io.ReaderAt); a read outside them fails.
type captured struct {
	size    int64
	off     int64
	windows []window
	// dynamic is the index of the dynamic segment's window (-1: none);
	// onDynamic is called once it is whole.
	dynamic   int
	onDynamic func([]byte)
	// zeros is a range read as zeros (the section names' table).
	zeros [2]int64
}

type window struct {
	start int64
	data  []byte
	n     int64 // bytes wanted
}

var errNotKept = errors.New("outside the parts of the stream kept")

func (c *captured) want(start, n int64) {
	if start < 0 {
		n += start
		start = 0
	}
	if n <= 0 || start >= c.size || n > maxTableBytes {
		return
	}
	n = min(n, c.size-start)
	c.windows = append(c.windows, window{start: start, n: n, data: make([]byte, 0, min(n, 1<<20))})
}

func (c *captured) Write(p []byte) (int, error) {
	c.write(p)
	return len(p), nil
}

func (c *captured) write(p []byte) {
	c.fill(p)
	if c.dynamic >= 0 && c.onDynamic != nil {
		if w := c.windows[c.dynamic]; int64(len(w.data)) == w.n {
			f := c.onDynamic
			c.onDynamic = nil
			f(w.data)
			c.fill(p) // a window just added may start in p
		}
	}
	c.off += int64(len(p))
}

// fill copies what p (at c.off) holds of each window.
func (c *captured) fill(p []byte) {
	end := c.off + int64(len(p))
	for i := range c.windows {
		w := &c.windows[i]
		have := w.start + int64(len(w.data))
		if have >= w.start+w.n || have >= end || have < c.off {
			continue
		}
		upto := min(end, w.start+w.n)
		w.data = append(w.data, p[have-c.off:upto-c.off]...)
	}
}

func (c *captured) ReadAt(p []byte, off int64) (int, error) {
	for _, w := range c.windows {
		if off >= w.start && off+int64(len(p)) <= w.start+int64(len(w.data)) {
			return copy(p, w.data[off-w.start:]), nil
		}
	}
	if z := c.zeros; len(p) > 0 && off >= z[0] && off+int64(len(p)) <= z[1] {
		clear(p)
		return len(p), nil
	}
	return 0, errNotKept
}

// nameless makes the section names' table read as zeros when it streamed
// by before the section headers said where it was (a .symtab between
// them, as in JAX's plugin): the sections are then nameless, and inspect
// finds the ones it reads by their types.
func (c *captured) nameless(head []byte) {
	if len(head) < 64 || head[elf.EI_CLASS] != byte(elf.ELFCLASS64) || head[elf.EI_DATA] != byte(elf.ELFDATA2LSB) {
		return
	}
	le := binary.LittleEndian
	shoff, shent, idx := int64(le.Uint64(head[0x28:])), int64(le.Uint16(head[0x3a:])), int64(le.Uint16(head[0x3e:]))
	var h [64]byte
	if shent < 64 || c.readAt(h[:], shoff+idx*shent) != nil {
		return
	}
	off, n := int64(le.Uint64(h[0x18:])), int64(le.Uint64(h[0x20:]))
	if off < 0 || n < 0 || n > maxNamesTable || c.readAt(make([]byte, n), off) == nil {
		return // kept, or not a names' table of a sane size
	}
	c.zeros = [2]int64{off, off + n}
}

func (c *captured) readAt(p []byte, off int64) error {
	_, err := c.ReadAt(p, off)
	return err
}
