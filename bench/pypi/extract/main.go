// Command extract unpacks wheels into a fresh tree with pypi.ExtractWheel,
// as an install does, for profiling and for bench/pypi/run.sh:
//
//	extract [-cpuprofile FILE] -dest DIR WHEEL...
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/cudaenv/cudaenv/fetch/pypi"
)

func main() {
	dest := flag.String("dest", "", "the tree to unpack into (made; must not exist)")
	prof := flag.String("cpuprofile", "", "write a CPU profile here")
	flag.Parse()
	if err := run(*dest, *prof, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "extract:", err)
		os.Exit(1)
	}
}

func run(dest, prof string, wheels []string) error {
	if err := os.Mkdir(dest, 0o755); err != nil {
		return err
	}
	if prof != "" {
		f, err := os.Create(prof)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	for _, w := range wheels {
		f, err := os.Open(w)
		if err != nil {
			return err
		}
		fi, err := f.Stat()
		if err == nil {
			err = pypi.ExtractWheel(f, fi.Size(), dest)
		}
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", w, err)
		}
	}
	return nil
}
