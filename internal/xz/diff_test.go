package xz_test

// Differential tests: this fork must decode every stream exactly as the
// upstream package it was forked from (same bytes, same error, read for
// read) and as liblzma's `xz -dc` (same bytes; a stream one rejects the
// other rejects too), on valid, corrupt and fuzzed input.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/iotest"

	"github.com/cudaenv/cudaenv/internal/xz"
	upstream "github.com/mikelolasagasti/xz"
	uxz "github.com/ulikunitz/xz"
	"github.com/ulikunitz/xz/lzma"
)

// maxOut bounds what one decode may produce, so that a fuzzed "bomb"
// cannot stall the fuzzer; both decoders are cut at the same byte.
const maxOut = 16 << 20

// pattern is how a decode reads: input in small pieces (one byte at a
// time for short streams, 1 to 61 bytes for long ones) or not, and output
// in reads of the given sizes, cycled (nil: io.Copy).
type pattern struct {
	name     string
	small    bool
	outSizes []int
}

var patterns = []pattern{
	{"bulk", false, nil},
	{"odd-sized reads", false, []int{1, 7, 4093, 65536, 13, 200000}},
	{"input in small pieces", true, []int{1 << 20, 3}},
}

// pieces reads at most 1, 2, ... 61 bytes at a time, round and round.
type pieces struct {
	r io.Reader
	n int
}

func (p *pieces) Read(b []byte) (int, error) {
	p.n = p.n%61 + 1
	return p.r.Read(b[:min(len(b), p.n)])
}

// decode runs one decoder (ours or upstream's) over b with pattern p and
// returns what it produced and the error message that ended it ("" at a
// clean end of stream).
func decode(b []byte, p pattern, theirs bool) ([]byte, string) {
	var in io.Reader = bytes.NewReader(b)
	switch {
	case p.small && len(b) < 32<<10:
		in = iotest.OneByteReader(in)
	case p.small:
		in = &pieces{r: in}
	}
	var r io.Reader
	var err error
	if theirs {
		r, err = upstream.NewReader(in, 0)
	} else {
		r, err = xz.NewReader(in, 0)
	}
	if err != nil {
		return nil, err.Error()
	}
	var out bytes.Buffer
	if p.outSizes == nil {
		_, err = io.Copy(&out, io.LimitReader(r, maxOut))
	} else {
		buf := make([]byte, 1<<20)
		for i := 0; err == nil && out.Len() < maxOut; i++ {
			n := min(p.outSizes[i%len(p.outSizes)], maxOut-out.Len())
			n, err = r.Read(buf[:n])
			out.Write(buf[:n])
		}
		if err == io.EOF {
			err = nil
		}
	}
	if err != nil {
		return out.Bytes(), err.Error()
	}
	return out.Bytes(), ""
}

// sameAsUpstream checks that ours and upstream's decoders agree on b under
// every read pattern, and returns our bulk result.
func sameAsUpstream(t *testing.T, b []byte) ([]byte, string) {
	t.Helper()
	var got []byte
	var gotErr string
	for _, p := range patterns {
		o, oerr := decode(b, p, false)
		u, uerr := decode(b, p, true)
		if oerr != uerr || !bytes.Equal(o, u) {
			t.Fatalf("%s: internal/xz gave %d bytes and error %q, upstream %d bytes and %q (first difference at %d)",
				p.name, len(o), oerr, len(u), uerr, firstDiff(o, u))
		}
		if p.outSizes == nil {
			got, gotErr = o, oerr
		}
	}
	return got, gotErr
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// xzUtils decodes b with `xz -dc`; ok is false when xz is not installed.
func xzUtils(t *testing.T, b []byte) (out []byte, failed, ok bool) {
	t.Helper()
	path, err := exec.LookPath("xz")
	if err != nil {
		return nil, false, false
	}
	cmd := exec.Command(path, "-dc")
	cmd.Stdin = bytes.NewReader(b)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	err = cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("xz -dc: %v", err)
	}
	return stdout.Bytes(), err != nil, true
}

// sameAsXZUtils checks our bulk result (got, gotErr) against `xz -dc`: the
// same bytes when we succeed, a failure when we fail. A stream we refuse
// for its dictionary size or its check type is not compared: liblzma has
// no such limits.
func sameAsXZUtils(t *testing.T, b, got []byte, gotErr string) {
	t.Helper()
	if gotErr == xz.ErrMemlimit.Error() || gotErr == xz.ErrUnsupportedCheck.Error() || len(got) >= maxOut {
		return
	}
	want, failed, ok := xzUtils(t, b)
	if !ok {
		return
	}
	switch {
	case gotErr == "" && failed:
		t.Fatalf("internal/xz decoded %d bytes where xz -dc fails", len(got))
	case gotErr == "" && !bytes.Equal(got, want):
		t.Fatalf("internal/xz gave %d bytes, xz -dc %d (first difference at %d)", len(got), len(want), firstDiff(got, want))
	case gotErr != "" && !failed:
		t.Fatalf("internal/xz fails with %q where xz -dc decodes %d bytes", gotErr, len(want))
	}
}

// samples are the uncompressed inputs: real machine code (this test's own
// binary), text, incompressible data, long runs and short-period
// patterns (overlapping matches), and their mix.
var samples = sync.OnceValue(func() map[string][]byte {
	rng := rand.New(rand.NewPCG(1, 2))
	m := map[string][]byte{"empty": {}, "one byte": {'x'}}
	exe, err := os.Executable()
	if err == nil {
		if b, err := os.ReadFile(exe); err == nil && len(b) > 1<<20 {
			m["machine code"] = b[len(b)/4 : len(b)/4+512<<10]
		}
	}
	var text bytes.Buffer
	words := strings.Fields("the decoder keeps its dictionary between archives so a toolkit of any size costs one dictionary per worker cuda nvcc cublas")
	for text.Len() < 200<<10 {
		text.WriteString(words[rng.IntN(len(words))])
		text.WriteByte(" \n"[rng.IntN(8)/7])
	}
	m["text"] = text.Bytes()
	random := make([]byte, 100<<10)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	m["random"] = random
	var runs bytes.Buffer
	for runs.Len() < 200<<10 {
		period := 1 + rng.IntN(9)
		unit := random[rng.IntN(1000):][:period]
		for range 1 + rng.IntN(500) {
			runs.Write(unit)
		}
		runs.Write(bytes.Repeat([]byte{0}, rng.IntN(3000)))
	}
	m["runs"] = runs.Bytes()
	var mix bytes.Buffer
	for _, k := range []string{"text", "runs", "random", "machine code", "text", "runs"} {
		b := m[k]
		if len(b) > 100<<10 {
			b = b[:100<<10]
		}
		mix.Write(b)
	}
	m["mix"] = mix.Bytes()
	return m
})

// compressed is one stream with how it was made.
type compressed struct {
	name string
	data []byte
}

// streams compresses the samples every way the format allows that
// matters to the decoder: presets, lc/lp/pb, BCJ and delta filters,
// every check type, several blocks, and dictionaries small enough to
// wrap around many times. It uses `xz` when installed, ulikunitz/xz
// always.
var streams = sync.OnceValues(func() ([]compressed, error) {
	var out []compressed
	xzPath, _ := exec.LookPath("xz")
	args := [][]string{
		{"-6"}, {"-0"}, {"-9e"},
		{"--lzma2=preset=6,lc=0,lp=4,pb=0"}, {"--lzma2=preset=6,lc=4,lp=0,pb=4"},
		{"--lzma2=preset=1,dict=4KiB"}, {"--lzma2=preset=6,dict=64KiB,nice=273"},
		{"--x86", "--lzma2=preset=6"}, {"--delta=dist=4", "--lzma2=preset=6"},
		{"-6", "--check=crc32"}, {"-6", "--check=sha256"}, {"-6", "--check=none"},
		{"-6", "--block-size=100KiB"},
	}
	rng := rand.New(rand.NewPCG(3, 4))
	names := make([]string, 0, len(samples()))
	for name := range samples() {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		plain := samples()[name]
		if xzPath != "" {
			for _, a := range args {
				if name == "machine code" && a[0] == "-9e" {
					continue // slow, and -6 covers it
				}
				cmd := exec.Command(xzPath, append([]string{"-c", "-T1"}, a...)...)
				cmd.Stdin = bytes.NewReader(plain)
				b, err := cmd.Output()
				if err != nil {
					return nil, fmt.Errorf("xz %s: %v", strings.Join(a, " "), err)
				}
				out = append(out, compressed{fmt.Sprintf("%s, xz %s", name, strings.Join(a, " ")), b})
			}
		}
		props := lzma.Properties{LC: rng.IntN(5), PB: rng.IntN(5)}
		props.LP = rng.IntN(5 - props.LC)
		var buf bytes.Buffer
		w, err := uxz.WriterConfig{Properties: &props, DictCap: 4096 << rng.IntN(8), BlockSize: 256 << 10, CheckSum: uxz.SHA256}.NewWriter(&buf)
		if err == nil {
			_, err = w.Write(plain)
		}
		if err == nil {
			err = w.Close()
		}
		if err != nil {
			return nil, fmt.Errorf("ulikunitz/xz: %v", err)
		}
		out = append(out, compressed{fmt.Sprintf("%s, ulikunitz/xz %+v", name, props), buf.Bytes()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
})

func mustStreams(t testing.TB) []compressed {
	t.Helper()
	s, err := streams()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestDecodesLikeUpstreamAndXZUtils(t *testing.T) {
	plains := samples()
	for _, s := range mustStreams(t) {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			got, gotErr := sameAsUpstream(t, s.data)
			plain := plains[s.name[:strings.Index(s.name, ",")]]
			if gotErr != "" || !bytes.Equal(got, plain) {
				t.Fatalf("decoded %d bytes with error %q; want the %d bytes compressed", len(got), gotErr, len(plain))
			}
			sameAsXZUtils(t, s.data, got, gotErr)
		})
	}
}

func TestRejectsCorruptInputLikeUpstreamAndXZUtils(t *testing.T) {
	var small []compressed
	for _, s := range mustStreams(t) {
		if len(s.data) < 64<<10 {
			small = append(small, s)
		}
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 300 {
		s := small[rng.IntN(len(small))]
		b := bytes.Clone(s.data)
		what := ""
		switch i % 3 {
		case 0:
			at := rng.IntN(len(b))
			b[at] ^= byte(1 + rng.IntN(255))
			what = fmt.Sprintf("byte %d changed", at)
		case 1:
			b = b[:rng.IntN(len(b))]
			what = fmt.Sprintf("truncated to %d bytes", len(b))
		case 2:
			at := 12 + rng.IntN(len(b)-12)
			b = append(b[:at:at], b[at+1+rng.IntN(min(40, len(b)-at)):]...)
			what = fmt.Sprintf("bytes cut at %d", at)
		}
		t.Run(fmt.Sprintf("%s, %s", s.name, what), func(t *testing.T) {
			t.Parallel()
			got, gotErr := sameAsUpstream(t, b)
			sameAsXZUtils(t, b, got, gotErr)
		})
	}
}

// TestGivenArchives decodes every .xz archive under CUDAENV_XZ_ARCHIVES
// (real NVIDIA archives a maintainer has saved); without it the test reads
// nothing outside the repository.
func TestGivenArchives(t *testing.T) {
	root := os.Getenv("CUDAENV_XZ_ARCHIVES")
	if root == "" {
		t.Skip("set CUDAENV_XZ_ARCHIVES to a folder of .xz archives to decode them too")
	}
	n := 0
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(p, ".xz") || strings.HasSuffix(p, ".txz")) {
			return nil
		}
		n++
		t.Run(p, func(t *testing.T) {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			got, gotErr := sameAsUpstream(t, b)
			sameAsXZUtils(t, b, got, gotErr)
		})
		return nil
	})
	if n == 0 {
		t.Fatalf("no .xz archives under %s", root)
	}
	t.Logf("%d archives under %s", n, root)
}

// FuzzDecode feeds arbitrary bytes to both decoders and `xz -dc`.
// The seeds are upstream's small test files and small streams of every
// kind (made here, so that each fuzz worker starts quickly).
func FuzzDecode(f *testing.F) {
	for _, dir := range []string{"testdata/xz-utils", "testdata/other"} {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if b, err := os.ReadFile(filepath.Join(dir, e.Name())); err == nil && len(b) < 64<<10 {
				f.Add(b)
			}
		}
	}
	xzPath, _ := exec.LookPath("xz")
	for _, name := range []string{"machine code", "text", "runs", "mix"} {
		plain := samples()[name]
		plain = plain[:min(len(plain), 6<<10)]
		for _, a := range [][]string{{"-6"}, {"--lzma2=preset=1,dict=4KiB,lc=0,lp=2,pb=1"}, {"--x86", "--lzma2=preset=6"}, {"--delta=dist=2", "--lzma2=preset=0"}} {
			if xzPath == "" {
				break
			}
			cmd := exec.Command(xzPath, append([]string{"-c", "-T1", "--check=crc32"}, a...)...)
			cmd.Stdin = bytes.NewReader(plain)
			if b, err := cmd.Output(); err == nil {
				f.Add(b)
			}
		}
		var buf bytes.Buffer
		if w, err := uxz.NewWriter(&buf); err == nil {
			w.Write(plain)
			w.Close()
			f.Add(buf.Bytes())
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, gotErr := sameAsUpstream(t, b)
		sameAsXZUtils(t, b, got, gotErr)
	})
}
