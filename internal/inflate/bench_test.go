package inflate

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// benchStreams are the deflated entries of the wheels in
// CUDAENV_PYPI_WHEELS, else of the samples.
func benchStreams(b *testing.B) (streams [][]byte, size int64) {
	dir := os.Getenv("CUDAENV_PYPI_WHEELS")
	if dir == "" {
		for _, s := range samples(b) {
			out, _ := io.ReadAll(flate.NewReader(bytes.NewReader(s)))
			streams = append(streams, s)
			size += int64(len(out))
		}
		return streams, size
	}
	wheels, _ := filepath.Glob(filepath.Join(dir, "*.whl"))
	for _, w := range wheels {
		zr, err := zip.OpenReader(w)
		if err != nil {
			b.Fatal(err)
		}
		for _, f := range zr.File {
			if f.Method != zip.Deflate {
				continue
			}
			r, _ := f.OpenRaw()
			data, _ := io.ReadAll(r)
			streams = append(streams, data)
			size += int64(f.UncompressedSize64)
		}
		zr.Close()
	}
	return streams, size
}

// BenchmarkInflate and BenchmarkCompressFlate decode the same streams
// into io.Discard through a 256 KiB buffer, as extraction does.
func BenchmarkInflate(b *testing.B) {
	benchDecode(b, func(r io.Reader) io.ReadCloser { return NewReader(r) })
}

func BenchmarkCompressFlate(b *testing.B) {
	benchDecode(b, flate.NewReader)
}

func benchDecode(b *testing.B, open func(io.Reader) io.ReadCloser) {
	streams, size := benchStreams(b)
	buf := make([]byte, 256<<10)
	b.SetBytes(size)
	b.ResetTimer()
	cpu := cpuTime()
	for range b.N {
		for _, s := range streams {
			r := open(bytes.NewReader(s))
			if _, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{r}, buf); err != nil {
				b.Fatal(err)
			}
			r.Close()
		}
	}
	reportCPU(b, cpu, size)
}

// bigEntry is the start of the largest deflated entry of the wheels in
// CUDAENV_PYPI_WHEELS (cuDNN's engines library, in the sample set):
// enough of its compressed bytes for its first bigOut bytes of output.
const bigOut = 128 << 20

func bigEntry(b *testing.B) []byte {
	dir := os.Getenv("CUDAENV_PYPI_WHEELS")
	if dir == "" {
		b.Skip("set CUDAENV_PYPI_WHEELS to a folder of real wheels")
	}
	wheels, _ := filepath.Glob(filepath.Join(dir, "*.whl"))
	var best *zip.File
	for _, w := range wheels {
		zr, err := zip.OpenReader(w)
		if err != nil {
			b.Fatal(err)
		}
		defer zr.Close()
		for _, f := range zr.File {
			if f.Method == zip.Deflate && (best == nil || f.UncompressedSize64 > best.UncompressedSize64) {
				best = f
			}
		}
	}
	if best == nil {
		b.Skip("no deflated entries")
	}
	r, _ := best.OpenRaw()
	data, err := io.ReadAll(io.LimitReader(r, bigOut+bigOut/8))
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// smallStreams are the deflated entries under 256 KiB of the wheels in
// CUDAENV_PYPI_WHEELS: headers and scripts, where building the tables of
// each block counts.
func smallStreams(b *testing.B) (streams [][]byte, size int64) {
	dir := os.Getenv("CUDAENV_PYPI_WHEELS")
	if dir == "" {
		b.Skip("set CUDAENV_PYPI_WHEELS to a folder of real wheels")
	}
	wheels, _ := filepath.Glob(filepath.Join(dir, "*.whl"))
	for _, w := range wheels {
		zr, err := zip.OpenReader(w)
		if err != nil {
			b.Fatal(err)
		}
		for _, f := range zr.File {
			if f.Method != zip.Deflate || f.UncompressedSize64 >= 256<<10 {
				continue
			}
			r, _ := f.OpenRaw()
			data, _ := io.ReadAll(r)
			streams = append(streams, data)
			size += int64(f.UncompressedSize64)
		}
		zr.Close()
	}
	return streams, size
}

// The big entry's first bigOut bytes and the small entries, each decoded
// by this package and by compress/flate in the same run.
func BenchmarkInflateBigEntry(b *testing.B) {
	benchBig(b, func(r io.Reader) io.ReadCloser { return NewReader(r) })
}

func BenchmarkCompressFlateBigEntry(b *testing.B) { benchBig(b, flate.NewReader) }

func BenchmarkInflateSmallEntries(b *testing.B) {
	benchSmall(b, func(r io.Reader) io.ReadCloser { return NewReader(r) })
}

func BenchmarkCompressFlateSmallEntries(b *testing.B) { benchSmall(b, flate.NewReader) }

func benchBig(b *testing.B, open func(io.Reader) io.ReadCloser) {
	data := bigEntry(b)
	buf := make([]byte, 256<<10)
	b.SetBytes(bigOut)
	b.ResetTimer()
	cpu := cpuTime()
	for range b.N {
		r := open(bytes.NewReader(data))
		if n, err := io.CopyBuffer(io.Discard, io.LimitReader(r, bigOut), buf); err != nil || n != bigOut {
			b.Fatal(n, err)
		}
		r.Close()
	}
	reportCPU(b, cpu, bigOut)
}

// reportCPU adds the CPU time per output byte since cpu, which other jobs
// on the machine disturb less than the wall clock.
func reportCPU(b *testing.B, cpu time.Duration, size int64) {
	if c := cpuTime(); c > 0 {
		b.ReportMetric(float64(c-cpu)/float64(b.N)/float64(size), "cpu-ns/B")
	}
}

func benchSmall(b *testing.B, open func(io.Reader) io.ReadCloser) {
	streams, size := smallStreams(b)
	buf := make([]byte, 256<<10)
	b.SetBytes(size)
	b.ResetTimer()
	cpu := cpuTime()
	for range b.N {
		for _, s := range streams {
			r := open(bytes.NewReader(s))
			if _, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{r}, buf); err != nil {
				b.Fatal(err)
			}
			r.Close()
		}
	}
	reportCPU(b, cpu, size)
}
