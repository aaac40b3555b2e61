// Package inflate decompresses DEFLATE streams (RFC 1951), the zip
// entries of wheels, faster than compress/flate: the bit buffer is 64 bits
// wide and refilled eight bytes at a time without branches; while enough
// input is left, symbols are decoded with no check of the bits at hand
// (up to three literals per refill); each lookup in a table of 2048
// entries yields a whole literal, or a length or distance with its extra
// bits, consumed by one shift; matches are copied 8 bytes at a time (a
// distance of one byte is a fill) into an output buffer with room to
// overrun; tables are filled by doubling. Its output is byte for byte
// compress/flate's, and it accepts and rejects the same streams (a
// differential fuzz target holds it to that): the same checks on Huffman
// codes (complete, or a single code of one bit; empty trees fail when
// used), on block types, symbols, distances and stored-block lengths.
package inflate

import (
	"encoding/binary"
	"errors"
	"io"
	"math/bits"
	"strconv"
	"sync"
)

// CorruptInputError reports corrupt input at about a given offset.
type CorruptInputError int64

func (e CorruptInputError) Error() string {
	return "flate: corrupt input before offset " + strconv.FormatInt(int64(e), 10)
}

const (
	window   = 1 << 15           // history a match may reach back into
	outChunk = 256 << 10         // output decoded between flushes
	outSize  = window + outChunk // the output buffer: history, then new data
	outSlack = 16                // past outSize: room for a match's wide copy to overrun
	maxMatch = 258
	inSize   = 64 << 10
	inKeep   = 8 // bytes kept before the read position when input is compacted

	litBits  = 11 // primary table bits, literal/length code
	distBits = 8  // primary table bits, distance code
)

// Table entries: bits 0-7 the bits a symbol takes, its code and then its
// extra bits (a link to a subtable: the primary bits), 8-11 the code's
// length, where its extra bits start (a link: the subtable's bits), 12-15
// the kind, 16-31 the value (a literal, a base length or distance, a
// subtable's start). One load and one shift consume a symbol.
const (
	kLiteral = iota << 12
	kLength
	kEnd
	kLink
	kInvalid
	kindMask = 0xF << 12
)

const invalidEntry = kInvalid // length 0: never short of bits

var (
	lengthBase  = [29]uint32{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
	lengthExtra = [29]uint32{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	distBase    = [30]uint32{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
	distExtra   = [30]uint32{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}
	codeOrder   = [19]int{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}
)

// table is a Huffman decoding table: a primary table of 1<<bits entries,
// then its subtables. Its fixed size (a code of 286 symbols has at most 286
// subtables of 1<<(15-litBits) entries; of 30 symbols, 30 of 1<<(15-distBits))
// lets a masked index need no bounds check.
type table struct {
	e [tableSize]uint32
}

const (
	tableSize = 1 << 13
	tableMask = tableSize - 1
)

// build fills e for code lengths lengths (symbol i has length lengths[i],
// 0 for none) with entries[sym] plus the code's length as each symbol's
// entry. It refuses, as compress/flate does, a code that is neither
// complete nor a single one-bit code; an empty code is accepted and fails
// when used.
func build(e []uint32, lengths []uint8, bitsN uint, entries []uint32) bool {
	var count [16]int
	maxLen := 0
	for _, n := range lengths {
		count[n&15]++
		maxLen = max(maxLen, int(n))
	}
	count[0] = 0
	size := 1 << bitsN
	e = e[:size]
	if maxLen == 0 {
		for i := range e {
			e[i] = invalidEntry
		}
		return true
	}
	code := 0
	var offs [17]int // where each length's symbols start in canonical order
	for i := 1; i <= maxLen; i++ {
		code = code<<1 + count[i]
		offs[i+1] = offs[i] + count[i]
	}
	if code != 1<<maxLen {
		if !(code == 1 && maxLen == 1) {
			return false
		}
		// A single one-bit code leaves half of the table empty.
		for i := range e {
			e[i] = invalidEntry
		}
	}
	var sorted [288]uint16
	for sym, n := range lengths {
		if n != 0 {
			sorted[offs[n]] = uint16(sym)
			offs[n]++
		}
	}
	// A complete code covers every entry of the primary table and of each
	// subtable, so nothing needs clearing first. In canonical order the
	// codes sharing a subtable (their first bits bits) are consecutive.
	subBits := uint(0)
	if uint(maxLen) > bitsN {
		subBits = uint(maxLen) - bitsN
	}
	e = e[:cap(e)]
	code, i := 0, 0
	for n := 1; n <= int(bitsN); n++ {
		for range count[n] {
			sym := sorted[i]
			i++
			r := bits.Reverse16(uint16(code)) >> (16 - n)
			code++
			e[r] = entries[sym] + uint32(n) + uint32(n)<<8
		}
		code <<= 1
		// The first 1<<n entries now hold every code of n bits or fewer:
		// double them, as codes of n bits fill every 1<<n-th entry.
		if n < int(bitsN) {
			copy(e[1<<n:2<<n], e[:1<<n])
		}
	}
	used, prefix, start := size, -1, 0
	for n := int(bitsN) + 1; n <= maxLen; n++ {
		for range count[n] {
			sym := sorted[i]
			i++
			r := int(bits.Reverse16(uint16(code)) >> (16 - n))
			code++
			v := entries[sym] + uint32(n) + uint32(n)<<8
			if low := r & (size - 1); low != prefix {
				prefix, start = low, used
				e[low] = uint32(used)<<16 | kLink | uint32(subBits)<<8 | uint32(bitsN)
				used += 1 << subBits
			}
			for off := r >> bitsN; off < 1<<subBits; off += 1 << (uint(n) - bitsN) {
				e[start+off] = v
			}
		}
		code <<= 1
	}
	return true
}

var (
	litEntries  [288]uint32
	distEntries [32]uint32
	clEntries   [19]uint32
)

func init() {
	for sym := range litEntries {
		switch {
		case sym < 256:
			litEntries[sym] = kLiteral | uint32(sym)<<16
		case sym == 256:
			litEntries[sym] = kEnd
		case sym < 286:
			litEntries[sym] = kLength | lengthBase[sym-257]<<16 | lengthExtra[sym-257]
		default:
			litEntries[sym] = kInvalid // 286 and 287: corrupt when used
		}
	}
	for sym := range distEntries {
		distEntries[sym] = kInvalid
		if sym < 30 {
			distEntries[sym] = kLength | distBase[sym]<<16 | distExtra[sym]
		}
	}
	for sym := range clEntries {
		clEntries[sym] = kLiteral | uint32(sym)<<16
	}
}

var fixed = sync.OnceValue(func() *[2]table {
	var t [2]table
	var l [288]uint8
	for i := range l {
		switch {
		case i < 144:
			l[i] = 8
		case i < 256:
			l[i] = 9
		case i < 280:
			l[i] = 7
		default:
			l[i] = 8
		}
	}
	build(t[0].e[:], l[:], litBits, litEntries[:])
	var d [32]uint8
	for i := range d {
		d[i] = 5
	}
	build(t[1].e[:], d[:], distBits, distEntries[:])
	return &t
})

// decoder's state between Reads: it stops only between symbols, or inside
// a stored block.
type decoder struct {
	r     io.Reader
	in    []byte
	inPos int
	inEnd int
	inOff int64 // stream offset of in[0]
	inEOF bool  // r has no more
	rErr  error // r's error other than io.EOF

	bb uint64 // bit buffer, low bits first
	bl uint   // valid bits in bb

	out     []byte
	outPos  int // end of decoded data
	flushed int // what Read has handed out

	inBlock   bool
	final     bool
	stored    int // bytes left in a stored block; -1 in a Huffman block
	lit, dist *table
	dyn       *[2]table
	lens      [286 + 30]uint8
	err       error // io.EOF once the final block is out
}

var pool = sync.Pool{New: func() any {
	return &decoder{in: make([]byte, inSize), out: make([]byte, outSize+outSlack), dyn: new([2]table)}
}}

// reader hands a pooled decoder back on Close.
type reader struct{ d *decoder }

// NewReader returns a reader of the data decompressed from r. It may read
// past the end of the stream; data after the final block is ignored.
// Close returns the reader's memory to a pool, so it must not be read
// after Close.
func NewReader(r io.Reader) io.ReadCloser {
	d := pool.Get().(*decoder)
	d.reset(r)
	return &reader{d}
}

var errClosed = errors.New("inflate: read after close")

func (r *reader) Read(p []byte) (int, error) {
	if r.d == nil {
		return 0, errClosed
	}
	return r.d.Read(p)
}

// Close returns nil once the whole stream was read, else the error that
// ended it (nil too if it was not read to its end).
func (r *reader) Close() error {
	d := r.d
	if d == nil {
		return errClosed
	}
	r.d = nil
	err := d.err
	d.r = nil
	pool.Put(d)
	if err == io.EOF {
		return nil
	}
	return err
}

func (d *decoder) reset(r io.Reader) {
	*d = decoder{r: r, in: d.in, out: d.out, dyn: d.dyn, stored: -1}
}

func (d *decoder) Read(p []byte) (int, error) {
	for {
		if d.flushed < d.outPos {
			n := copy(p, d.out[d.flushed:d.outPos])
			d.flushed += n
			return n, nil
		}
		if d.err != nil {
			return 0, d.err
		}
		if d.outPos > outSize-maxMatch {
			// Keep the last window of history at the front.
			copy(d.out, d.out[d.outPos-window:d.outPos])
			d.outPos, d.flushed = window, window
		}
		d.err = d.step()
	}
}

// step decodes until the output is nearly full, the stream ends or fails.
func (d *decoder) step() error {
	for d.outPos <= outSize-maxMatch {
		if !d.inBlock {
			if d.final {
				return io.EOF
			}
			if err := d.header(); err != nil {
				return err
			}
			continue
		}
		var err error
		if d.stored >= 0 {
			err = d.copyStored()
		} else {
			err = d.huffman()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// fill reads more input, keeping the unread bytes and inKeep before them.
func (d *decoder) fill() {
	if d.inEOF {
		return
	}
	if d.inEnd == len(d.in) || d.inPos > len(d.in)/2 {
		k := max(d.inPos-inKeep, 0)
		n := copy(d.in, d.in[k:d.inEnd])
		d.inOff += int64(k)
		d.inPos -= k
		d.inEnd = n
	}
	for d.inEnd-d.inPos < 8 && d.inEnd < len(d.in) {
		n, err := d.r.Read(d.in[d.inEnd:])
		d.inEnd += n
		if err != nil {
			d.inEOF = true
			if err != io.EOF {
				d.rErr = err
			}
			return
		}
	}
}

// need makes sure the bit buffer holds n bits (n <= 56).
func (d *decoder) need(n uint) error {
	for d.bl < n {
		if d.inPos >= d.inEnd {
			d.fill()
			if d.inPos >= d.inEnd {
				return d.eofErr()
			}
		}
		d.bb |= uint64(d.in[d.inPos]) << d.bl
		d.inPos++
		d.bl += 8
	}
	return nil
}

// refill tops the bit buffer up to at least 56 bits, or to what is left.
func (d *decoder) refill() {
	if d.inEnd-d.inPos < 8 {
		d.fill()
		if d.inEnd-d.inPos < 8 {
			for d.bl < 56 && d.inPos < d.inEnd {
				d.bb |= uint64(d.in[d.inPos]) << d.bl
				d.inPos++
				d.bl += 8
			}
			return
		}
	}
	d.bb |= binary.LittleEndian.Uint64(d.in[d.inPos:]) << d.bl
	k := (63 - d.bl) >> 3
	d.inPos += int(k)
	d.bl += k << 3
}

func (d *decoder) eofErr() error {
	if d.rErr != nil {
		return d.rErr
	}
	return io.ErrUnexpectedEOF
}

func (d *decoder) corrupt() error {
	return CorruptInputError(d.inOff + int64(d.inPos))
}

func (d *decoder) bits(n uint) (uint32, error) {
	if err := d.need(n); err != nil {
		return 0, err
	}
	v := uint32(d.bb & (1<<n - 1))
	d.bb >>= n
	d.bl -= n
	return v, nil
}

func (d *decoder) header() error {
	h, err := d.bits(3)
	if err != nil {
		return err
	}
	d.final = h&1 == 1
	switch h >> 1 {
	case 0:
		// Drop the rest of this byte; hand back the whole bytes read ahead.
		d.bb >>= d.bl & 7
		d.bl -= d.bl & 7
		d.inPos -= int(d.bl >> 3)
		d.bb, d.bl = 0, 0
		if d.inEnd-d.inPos < 4 {
			d.fill()
		}
		if d.inEnd-d.inPos < 4 {
			return d.eofErr()
		}
		b := d.in[d.inPos : d.inPos+4]
		d.inPos += 4
		n := int(b[0]) | int(b[1])<<8
		if uint16(int(b[2])|int(b[3])<<8) != ^uint16(n) {
			return d.corrupt()
		}
		d.stored = n
	case 1:
		f := fixed()
		d.lit, d.dist, d.stored = &f[0], &f[1], -1
	case 2:
		if err := d.readTables(); err != nil {
			return err
		}
		d.lit, d.dist, d.stored = &d.dyn[0], &d.dyn[1], -1
	default:
		return d.corrupt()
	}
	d.inBlock = true
	return nil
}

func (d *decoder) readTables() error {
	h, err := d.bits(14)
	if err != nil {
		return err
	}
	nlit := int(h&0x1F) + 257
	ndist := int(h>>5&0x1F) + 1
	nclen := int(h>>10) + 4
	if nlit > 286 || ndist > 30 {
		return d.corrupt()
	}
	// The bits are taken from the buffer directly, refilled (to 56 bits,
	// or what is left) only when a step might lack them.
	var cl [19]uint8
	for i := range nclen {
		if d.bl < 3 {
			d.refill()
			if d.bl < 3 {
				return d.eofErr()
			}
		}
		cl[codeOrder[i]] = uint8(d.bb & 7)
		d.bb >>= 3
		d.bl -= 3
	}
	var clt [1 << 7]uint32
	if !build(clt[:], cl[:], 7, clEntries[:]) {
		return d.corrupt()
	}
	lens := d.lens[:nlit+ndist]
	for i := 0; i < len(lens); {
		if d.bl < 14 { // a code and its extra bits
			d.refill() // fewer bits left may still hold a short code
		}
		e := clt[d.bb&(1<<7-1)]
		n := uint(e & 0xFF)
		if e&kindMask == kInvalid {
			return d.corrupt()
		}
		if n > d.bl {
			return d.eofErr()
		}
		d.bb >>= n
		d.bl -= n
		x := e >> 16
		if x < 16 {
			lens[i] = uint8(x)
			i++
			continue
		}
		var rep, nb uint
		var v uint8
		switch x {
		case 16:
			if i == 0 {
				return d.corrupt()
			}
			rep, nb, v = 3, 2, lens[i-1]
		case 17:
			rep, nb = 3, 3
		default:
			rep, nb = 11, 7
		}
		if nb > d.bl {
			return d.eofErr()
		}
		rep += uint(d.bb & (1<<nb - 1))
		d.bb >>= nb
		d.bl -= nb
		if i+int(rep) > len(lens) {
			return d.corrupt()
		}
		for range rep {
			lens[i] = v
			i++
		}
	}
	if !build(d.dyn[0].e[:], lens[:nlit], litBits, litEntries[:]) || !build(d.dyn[1].e[:], lens[nlit:], distBits, distEntries[:]) {
		return d.corrupt()
	}
	return nil
}

func (d *decoder) copyStored() error {
	for d.stored > 0 && d.outPos < outSize {
		if d.inPos >= d.inEnd {
			d.fill()
			if d.inPos >= d.inEnd {
				return d.eofErr()
			}
		}
		n := copy(d.out[d.outPos:min(outSize, d.outPos+d.stored)], d.in[d.inPos:d.inEnd])
		d.inPos += n
		d.outPos += n
		d.stored -= n
	}
	if d.stored == 0 {
		d.inBlock, d.stored = false, -1
	}
	return nil
}

// huffman decodes symbols of a Huffman block until its end or until the
// output is nearly full. While 8 bytes of input are left (the fast path),
// a refill brings the bit buffer to 56 bits or more, enough for a length,
// its extra bits, a distance and its extra bits (48 at most), so no step
// checks the bits it has, and the next symbol's entry is looked up before
// the refill that precedes it. Near the end of the input each symbol takes
// the careful path, which checks.
func (d *decoder) huffman() error {
	lit, dist := &d.lit.e, &d.dist.e
	out := d.out[:outSize+outSlack]
	outPos := d.outPos
	// The decoder's state lives in locals here (registers), put back in d
	// before anything that reads it there.
	in, inPos, inEnd := d.in, d.inPos, d.inEnd
	bb, bl := d.bb, d.bl
	for outPos <= outSize-maxMatch {
		if inEnd-inPos >= 8 {
			// Branchless refill: bl becomes 56 to 63, and all 64 bits of
			// bb are input.
			bb |= binary.LittleEndian.Uint64(in[inPos:]) << (bl & 63)
			inPos += int((63 - bl) >> 3)
			bl |= 56
			e := lit[bb&(1<<litBits-1)]
			for {
				// e is the primary entry of the next symbol, looked up
				// with 11 bits of input or more; bb holds 56 bits or more.
				if e&kindMask == kLiteral {
					// Up to three literals of the primary table (33 bits)
					// on one refill, and the lookup of the next.
					bb >>= e & 63
					bl -= uint(e & 63)
					out[outPos] = byte(e >> 16)
					outPos++
					e = lit[bb&(1<<litBits-1)]
					if e&kindMask == kLiteral {
						bb >>= e & 63
						bl -= uint(e & 63)
						out[outPos] = byte(e >> 16)
						outPos++
						e = lit[bb&(1<<litBits-1)]
						if e&kindMask == kLiteral {
							bb >>= e & 63
							bl -= uint(e & 63)
							out[outPos] = byte(e >> 16)
							outPos++
							e = lit[bb&(1<<litBits-1)]
						}
					}
				} else {
					if e&kindMask == kLink {
						e = lit[(e>>16+uint32(bb>>(e&63))&(1<<(e>>8&15)-1))&tableMask]
					}
					saved := bb
					bb >>= e & 63
					bl -= uint(e & 63)
					if e&kindMask != kLength {
						switch e & kindMask {
						case kLiteral: // a long code, from a subtable
							out[outPos] = byte(e >> 16)
							outPos++
							e = lit[bb&(1<<litBits-1)]
						case kEnd:
							d.outPos, d.inPos, d.bb, d.bl = outPos, inPos, bb, bl
							d.inBlock = false
							return nil
						default:
							d.outPos, d.inPos, d.bb, d.bl = outPos, inPos, bb, bl
							return d.corrupt()
						}
					} else {
						length := int(e>>16) + int(saved&(1<<(e&63)-1)>>(e>>8&15))
						e = dist[bb&(1<<distBits-1)]
						if e&kindMask == kLink {
							e = dist[(e>>16+uint32(bb>>(e&63))&(1<<(e>>8&15)-1))&tableMask]
						}
						if e&kindMask != kLength {
							d.outPos, d.inPos, d.bb, d.bl = outPos, inPos, bb, bl
							return d.corrupt()
						}
						saved = bb
						bb >>= e & 63
						bl -= uint(e & 63)
						dst := int(e>>16) + int(saved&(1<<(e&63)-1)>>(e>>8&15))
						if dst > outPos {
							d.outPos, d.inPos, d.bb, d.bl = outPos, inPos, bb, bl
							return d.corrupt()
						}
						// Refill now (as few as 8 bits may be left) and
						// look the next symbol up while the match is copied.
						if inEnd-inPos < 8 {
							outPos = copyMatch(out, outPos, dst, length)
							break
						}
						bb |= binary.LittleEndian.Uint64(in[inPos:]) << (bl & 63)
						inPos += int((63 - bl) >> 3)
						bl |= 56
						e = lit[bb&(1<<litBits-1)]
						outPos = copyMatch(out, outPos, dst, length)
						if outPos > outSize-maxMatch {
							break
						}
						continue
					}
				}
				if outPos > outSize-maxMatch || inEnd-inPos < 8 {
					break
				}
				bb |= binary.LittleEndian.Uint64(in[inPos:]) << (bl & 63)
				inPos += int((63 - bl) >> 3)
				bl |= 56
			}
			continue
		}
		// The careful path: one symbol.
		d.outPos, d.inPos, d.bb, d.bl = outPos, inPos, bb, bl
		d.refill()
		in, inPos, inEnd, bb, bl = d.in, d.inPos, d.inEnd, d.bb, d.bl
		e := lit[bb&(1<<litBits-1)]
		if e&kindMask == kLink {
			e = lit[(e>>16+uint32(bb>>(e&63))&(1<<(e>>8&15)-1))&tableMask]
		}
		if uint(e&63) > bl {
			d.outPos, d.inPos, d.bb, d.bl = outPos, inPos, bb, bl
			return d.eofErr()
		}
		saved := bb
		bb >>= e & 63
		bl -= uint(e & 63)
		switch e & kindMask {
		case kLiteral:
			out[outPos] = byte(e >> 16)
			outPos++
			continue
		case kEnd:
			d.outPos, d.inPos, d.bb, d.bl = outPos, inPos, bb, bl
			d.inBlock = false
			return nil
		case kInvalid:
			d.outPos, d.inPos, d.bb, d.bl = outPos, inPos, bb, bl
			return d.corrupt()
		}
		length := int(e>>16) + int(saved&(1<<(e&63)-1)>>(e>>8&15))
		e = dist[bb&(1<<distBits-1)]
		if e&kindMask == kLink {
			e = dist[(e>>16+uint32(bb>>(e&63))&(1<<(e>>8&15)-1))&tableMask]
		}
		if e&kindMask == kInvalid {
			d.outPos, d.inPos, d.bb, d.bl = outPos, inPos, bb, bl
			return d.corrupt()
		}
		if uint(e&63) > bl {
			d.outPos, d.inPos, d.bb, d.bl = outPos, inPos, bb, bl
			return d.eofErr()
		}
		saved = bb
		bb >>= e & 63
		bl -= uint(e & 63)
		dst := int(e>>16) + int(saved&(1<<(e&63)-1)>>(e>>8&15))
		if dst > outPos {
			d.outPos, d.inPos, d.bb, d.bl = outPos, inPos, bb, bl
			return d.corrupt()
		}
		outPos = copyMatch(out, outPos, dst, length)
	}
	d.outPos, d.inPos, d.bb, d.bl = outPos, inPos, bb, bl
	return nil
}

// copyMatch copies length bytes from dst back to outPos in out and
// returns the new end of output. outPos <= outSize-maxMatch; it may write up
// to 15 bytes past the match's end (into outSlack at worst), bytes not yet
// decoded.
func copyMatch(out []byte, outPos, dst, length int) int {
	from := outPos - dst
	end := outPos + length
	switch {
	case dst >= 8:
		// Each 8 bytes read lie wholly before the 8 written. Most matches
		// are short: 16 bytes at once, then 8 at a time.
		binary.LittleEndian.PutUint64(out[outPos:], binary.LittleEndian.Uint64(out[from:]))
		binary.LittleEndian.PutUint64(out[outPos+8:], binary.LittleEndian.Uint64(out[from+8:]))
		for outPos, from = outPos+16, from+16; outPos < end; outPos, from = outPos+8, from+8 {
			binary.LittleEndian.PutUint64(out[outPos:], binary.LittleEndian.Uint64(out[from:]))
		}
	case dst == 1:
		v := uint64(out[from]) * 0x0101010101010101
		for outPos < end {
			binary.LittleEndian.PutUint64(out[outPos:], v)
			outPos += 8
		}
	default:
		for outPos < end {
			out[outPos] = out[from]
			outPos++
			from++
		}
	}
	return end
}
