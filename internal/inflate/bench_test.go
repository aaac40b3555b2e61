package inflate

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"io"
	"os"
	"path/filepath"
	"testing"
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
	for range b.N {
		for _, s := range streams {
			r := open(bytes.NewReader(s))
			if _, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{r}, buf); err != nil {
				b.Fatal(err)
			}
			r.Close()
		}
	}
}
