package cudabin

import (
	"archive/zip"
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cudaenv/cudaenv/internal/inflate"
)

// BenchmarkInspectLibrary is one nvcc-built shared object: its fat
// binary, its loader facts and its runtime's symbols.
func BenchmarkInspectLibrary(b *testing.B) {
	defer cpuPerOp(b)()
	for b.Loop() {
		if _, err := Inspect(context.Background(), []string{"testdata/libkernel.so"}, Options{DefaultDirs: []string{}, GPU: "8.6"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInspectWheel reads the wheel CUDAENV_INSPECT_WHEEL names (a
// torch wheel); BenchmarkInflateWheelBaseline inflates the same ELF
// members to nothing, the least a reader of deflated members must do.
func BenchmarkInspectWheel(b *testing.B) {
	whl := benchEnv(b, "CUDAENV_INSPECT_WHEEL")
	defer cpuPerOp(b)()
	for b.Loop() {
		if _, err := Inspect(context.Background(), []string{whl}, Options{GPU: "8.6"}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkInflateWheelBaseline(b *testing.B) {
	whl := benchEnv(b, "CUDAENV_INSPECT_WHEEL")
	defer cpuPerOp(b)()
	for b.Loop() {
		zr, err := zip.OpenReader(whl)
		if err != nil {
			b.Fatal(err)
		}
		zr.RegisterDecompressor(zip.Deflate, func(r io.Reader) io.ReadCloser { return inflate.NewReader(r) })
		next := make(chan *zip.File)
		done := make(chan struct{})
		for range 2 { // as many workers as inspect's
			go func() {
				for f := range next {
					rc, _ := f.Open()
					io.Copy(io.Discard, rc)
					rc.Close()
				}
				done <- struct{}{}
			}()
		}
		for _, f := range zr.File {
			if n := filepath.Base(f.Name); strings.HasSuffix(n, ".so") || strings.Contains(n, ".so.") || strings.Contains(f.Name, "/bin/") {
				next <- f
			}
		}
		close(next)
		<-done
		<-done
		zr.Close()
	}
}

// BenchmarkInspectVenv walks the folder CUDAENV_INSPECT_VENV names (a venv
// with torch); BenchmarkReadVenvBaseline reads the same ELF candidates
// whole, as a tool that reads each file would.
func BenchmarkInspectVenv(b *testing.B) {
	venv := benchEnv(b, "CUDAENV_INSPECT_VENV")
	defer cpuPerOp(b)()
	for b.Loop() {
		if _, err := Inspect(context.Background(), []string{venv}, Options{GPU: "8.6"}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadVenvBaseline(b *testing.B) {
	venv := benchEnv(b, "CUDAENV_INSPECT_VENV")
	defer cpuPerOp(b)()
	for b.Loop() {
		filepath.WalkDir(venv, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return nil
			}
			info, _ := d.Info()
			if info == nil || !candidate(d.Name(), info.Mode()) {
				return nil
			}
			f, err := os.Open(p)
			if err == nil {
				io.Copy(io.Discard, f)
				f.Close()
			}
			return nil
		})
	}
}

// cpuPerOp reports the CPU time per operation beside the wall time.
func cpuPerOp(b *testing.B) func() {
	start := cpuTime()
	return func() {
		b.ReportMetric(float64((cpuTime()-start).Milliseconds())/float64(b.N), "cpu-ms/op")
	}
}

func benchEnv(b *testing.B, name string) string {
	v := os.Getenv(name)
	if v == "" {
		b.Skip(name + " names no file")
	}
	return v
}
