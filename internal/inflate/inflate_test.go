package inflate

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"errors"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
)

// both decodes data with compress/flate and with this package and fails
// unless they agree: the same bytes when both succeed, an error from both
// otherwise.
func both(t testing.TB, data []byte) {
	t.Helper()
	want, werr := io.ReadAll(flate.NewReader(bytes.NewReader(data)))
	r := NewReader(bytes.NewReader(data))
	got, gerr := io.ReadAll(r)
	cerr := r.Close()
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("compress/flate: %v; inflate: %v (input %d bytes)", werr, gerr, len(data))
	}
	if werr == nil && !bytes.Equal(got, want) {
		t.Fatalf("output differs: %d bytes, want %d", len(got), len(want))
	}
	if (gerr == nil) != (cerr == nil) {
		t.Fatalf("Read's error %v, Close's %v", gerr, cerr)
	}
}

// samples are inputs of the kinds wheels hold: text, binaries, runs,
// noise, and their mixtures, at every compression level.
func samples(t testing.TB) [][]byte {
	rng := rand.New(rand.NewSource(1))
	noise := make([]byte, 70000)
	rng.Read(noise)
	src, _ := os.ReadFile("inflate.go")
	exe, _ := os.ReadFile(os.Args[0]) // this test binary: machine code
	if len(exe) > 1<<20 {
		exe = exe[:1<<20]
	}
	text := bytes.Repeat(src, 20)
	var mixed []byte
	for i := 0; i < 200; i++ {
		switch rng.Intn(4) {
		case 0:
			mixed = append(mixed, noise[:rng.Intn(5000)]...)
		case 1:
			mixed = append(mixed, bytes.Repeat([]byte{byte(rng.Intn(256))}, rng.Intn(3000))...)
		case 2:
			o := rng.Intn(len(src) - 1000)
			mixed = append(mixed, src[o:o+rng.Intn(1000)]...)
		default:
			mixed = append(mixed, bytes.Repeat([]byte("abc"), rng.Intn(500))...)
		}
	}
	plain := [][]byte{nil, {0}, []byte("a"), noise, text, exe, mixed, bytes.Repeat([]byte{0}, 1<<20)}
	var out [][]byte
	for _, p := range plain {
		for _, level := range []int{flate.NoCompression, flate.BestSpeed, 5, flate.BestCompression, flate.HuffmanOnly} {
			var b bytes.Buffer
			w, _ := flate.NewWriter(&b, level)
			w.Write(p)
			w.Close()
			out = append(out, b.Bytes())
		}
	}
	return out
}

func TestInflateMatchesCompressFlateOnEveryLevelAndKindOfData(t *testing.T) {
	for _, s := range samples(t) {
		both(t, s)
	}
}

func TestInflateRejectsTruncatedAndDamagedStreamsAsCompressFlateDoes(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for _, s := range samples(t) {
		if len(s) > 200000 {
			s = s[:200000]
		}
		for _, n := range []int{0, 1, 2, 3, 5, 8, 13, len(s) / 3, len(s) / 2, len(s) - 2, len(s) - 1} {
			if n >= 0 && n < len(s) {
				both(t, s[:n])
			}
		}
		for range 20 {
			d := bytes.Clone(s)
			if len(d) == 0 {
				break
			}
			for range 1 + rng.Intn(3) {
				d[rng.Intn(len(d))] ^= byte(1 << rng.Intn(8))
			}
			both(t, d)
		}
	}
}

// Hand-made streams for each of compress/flate's checks.
var edgeCases = []struct {
	name string
	data []byte
}{
	{"an empty input", nil},
	{"reserved block type 3", []byte{0x07}},
	{"a stored block whose length's complement is wrong", []byte{0x01, 0x01, 0x00, 0x00, 0x00, 'x'}},
	{"a stored block cut short", []byte{0x01, 0x05, 0x00, 0xfa, 0xff, 'a', 'b'}},
	{"an empty final stored block then trailing junk", []byte{0x01, 0x00, 0x00, 0xff, 0xff, 0xde, 0xad}},
	{"a fixed block with literal 286", fixedBlock(t286)},
	{"a fixed block with distance code 30", fixedBlock(tDist30)},
	{"a fixed block whose match reaches before the start", fixedBlock(tFarBack)},
	{"a fixed block with one literal", fixedBlock(tOneLiteral)},
	// With more than 8 bytes of input after them, these take the fast path.
	{"a fixed block with literal 286 and more input after it", fixedBlock("1" + "10" + "11000110" + tTail)},
	{"a fixed block with distance code 30 and more input after it", fixedBlock("1" + "10" + "0000001" + "01111" + tTail)},
	{"a fixed block whose match reaches before the start, more input after it", fixedBlock("1" + "10" + "00110001" + "0000001" + "00001" + tTail)},
	{"a fixed block of literals 0 to 8 and matches at distance 9, 8, 7, 2 and 1", fixedBlock("1" + "10" + tNine + tRuns + tTail)},
	{"a dynamic block with a degenerate one-code distance tree", dynBlock(true, 1)},
	{"a dynamic block whose distance tree is empty, literals only", dynBlock(false, 1)},
	{"a dynamic block with an over-subscribed code-length code", overSubscribed()},
	{"a dynamic block with an incomplete literal code", dynBlock(false, 2)},
	{"a dynamic block declaring 287 literal codes", []byte{0x05 | 30<<3, 0x00, 0x00}},
}

// Fixed-block streams, as bit strings, least significant bit first.
const (
	t286        = "1" + "10" + "11000110" + "0000000"                       // final, fixed, code 286, EOB
	tDist30     = "1" + "10" + "0000001" + "01111" + "0000000"              // length 3, distance code 30
	tFarBack    = "1" + "10" + "00110001" + "0000001" + "00001" + "0000000" // a literal, then length 3 at distance 2
	tOneLiteral = "1" + "10" + "00110001" + "0000000"
	// tTail is 12 literals (byte 1) and the end of block.
	tTail = "0011000100110001001100010011000100110001001100010011000100110001001100010011000100110001" + "00110001" + "0000000"
	// tNine is the literals 0 to 8.
	tNine = "00110000" + "00110001" + "00110010" + "00110011" + "00110100" + "00110101" + "00110110" + "00110111" + "00111000"
	// tRuns: length 3 (code 257) at distance 9 (code 6, extra bits 00),
	// 10 (264) at 8 and at 7 (code 5, extra bit 1 and 0), 3 at 2 (code 1),
	// 10 at 1 (code 0): copies reaching the distinct literals, overlapping
	// themselves.
	tRuns = "0000001" + "00110" + "00" + "0001000" + "00101" + "1" + "0001000" + "00101" + "0" + "0000001" + "00001" + "0001000" + "00000"
)

func fixedBlock(bits string) []byte { return pack(bits) }

// pack turns a string of '0' and '1' written in the stream's bit order
// into bytes; Huffman codes must be given most significant bit first, as
// RFC 1951 draws them, which in stream order they are.
func pack(bits string) []byte {
	out := make([]byte, (len(bits)+7)/8)
	for i, c := range bits {
		if c == '1' {
			out[i/8] |= 1 << (i % 8)
		}
	}
	return out
}

// overSubscribed is a dynamic block header whose code-length code gives
// four symbols one bit each.
func overSubscribed() []byte {
	var w bitWriter
	w.put(1, 1)
	w.put(2, 2)
	w.put(0, 5)
	w.put(0, 5)
	w.put(0, 4) // 4 code-length codes
	for range 4 {
		w.put(1, 3)
	}
	w.put(0, 16)
	return w.bytes()
}

// dynBlock is a final dynamic block whose literal code gives 'a' and the
// end of block litLen bits each (1: a complete code), with one distance
// code of one bit (degenerate) or none, and then 'a', 'a', end of block.
func dynBlock(withDist bool, litLen uint32) []byte {
	var w bitWriter
	w.put(1, 1)  // final
	w.put(2, 2)  // dynamic
	w.put(0, 5)  // 257 literal/length codes
	w.put(0, 5)  // 1 distance code
	w.put(15, 4) // 19 code-length codes
	// The code-length code: symbols 0, 1, 2 and 18, two bits each.
	var cl [19]int
	cl[0], cl[1], cl[2], cl[18] = 2, 2, 2, 2
	for _, s := range codeOrder {
		w.put(uint32(cl[s]), 3)
	}
	code := map[int]uint32{0: 0, 1: 1, 2: 2, 18: 3} // canonical
	emit := func(sym int) { w.putCode(code[sym], 2) }
	zeros := func(n int) {
		for n > 0 {
			k := min(n, 138)
			if k < 11 {
				for range k {
					emit(0)
				}
				return
			}
			emit(18)
			w.put(uint32(k-11), 7)
			n -= k
		}
	}
	zeros(97)
	emit(int(litLen))
	zeros(256 - 98)
	emit(int(litLen))
	if withDist {
		emit(1)
	} else {
		emit(0)
	}
	w.put(0b100, 3) // codes 0, 0, 1 in stream order
	return w.bytes()
}

type bitWriter struct {
	out []byte
	n   uint
}

func (w *bitWriter) put(v uint32, n uint) {
	for i := range n {
		if w.n%8 == 0 {
			w.out = append(w.out, 0)
		}
		if v>>i&1 == 1 {
			w.out[len(w.out)-1] |= 1 << (w.n % 8)
		}
		w.n++
	}
}

// putCode writes a Huffman code, most significant bit first.
func (w *bitWriter) putCode(c uint32, n uint) {
	for i := int(n) - 1; i >= 0; i-- {
		w.put(c>>uint(i)&1, 1)
	}
}

func (w *bitWriter) bytes() []byte { return w.out }

func TestInflateAgreesWithCompressFlateOnEachOfItsChecks(t *testing.T) {
	for _, c := range edgeCases {
		t.Run(c.name, func(t *testing.T) {
			both(t, c.data)
			for n := range len(c.data) {
				both(t, c.data[:n])
			}
		})
	}
}

func TestInflateReportsAReadErrorOfItsSource(t *testing.T) {
	var b bytes.Buffer
	w, _ := flate.NewWriter(&b, 5)
	w.Write(bytes.Repeat([]byte("cuda "), 100000))
	w.Close()
	boom := errors.New("disk on fire")
	r := NewReader(io.MultiReader(bytes.NewReader(b.Bytes()[:b.Len()/2]), errReader{boom}))
	if _, err := io.ReadAll(r); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want %v", err, boom)
	}
	if err := r.Close(); !errors.Is(err, boom) {
		t.Fatalf("Close = %v", err)
	}
	if _, err := r.Read(make([]byte, 1)); err == nil {
		t.Fatal("Read after Close succeeded")
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// The wheels in CUDAENV_PYPI_WHEELS (see fetch/pypi/realwheels_test.go),
// when set: every deflated entry inflates to compress/flate's bytes.
func TestInflateMatchesCompressFlateOnRealWheels(t *testing.T) {
	dir := os.Getenv("CUDAENV_PYPI_WHEELS")
	if dir == "" {
		t.Skip("set CUDAENV_PYPI_WHEELS to a folder of real wheels")
	}
	wheels, _ := filepath.Glob(filepath.Join(dir, "*.whl"))
	if len(wheels) == 0 {
		t.Fatalf("no wheels in %s", dir)
	}
	for _, w := range wheels {
		zr, err := zip.OpenReader(w)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range zr.File {
			if f.Method != zip.Deflate {
				continue
			}
			raw, err := f.OpenRaw()
			if err != nil {
				t.Fatal(err)
			}
			a := NewReader(raw)
			raw2, _ := f.OpenRaw()
			b := flate.NewReader(raw2)
			if !sameStream(t, a, b) {
				t.Errorf("%s: %s differs", filepath.Base(w), f.Name)
			}
			a.Close()
		}
		zr.Close()
	}
}

func sameStream(t *testing.T, a, b io.Reader) bool {
	ba, bb := make([]byte, 1<<16), make([]byte, 1<<16)
	for {
		na, ea := io.ReadFull(a, ba)
		nb, eb := io.ReadFull(b, bb)
		if na != nb || !bytes.Equal(ba[:na], bb[:nb]) || (ea == nil) != (eb == nil) {
			t.Logf("a: %d %v, b: %d %v", na, ea, nb, eb)
			return false
		}
		if ea != nil {
			return true
		}
	}
}

// FuzzInflate holds the package to compress/flate on any input: the same
// bytes, or an error from both.
func FuzzInflate(f *testing.F) {
	for _, p := range [][]byte{[]byte("nvidia/cu13/bin/nvcc nvcc nvcc"), bytes.Repeat([]byte{1, 2, 3, 4, 5}, 300)} {
		for _, level := range []int{flate.NoCompression, flate.BestSpeed, flate.BestCompression, flate.HuffmanOnly} {
			var b bytes.Buffer
			w, _ := flate.NewWriter(&b, level)
			w.Write(p)
			w.Close()
			f.Add(b.Bytes())
		}
	}
	for _, c := range edgeCases {
		f.Add(c.data)
	}
	f.Fuzz(func(t *testing.T, data []byte) { both(t, data) })
}
