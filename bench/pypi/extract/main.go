// Command extract unpacks wheels into a fresh tree with pypi.ExtractWheel,
// as an install does, for profiling and for bench/pypi/run.sh:
//
//	extract [-cpuprofile FILE] [-cache DIR] -dest DIR WHEEL...
//
// With -cache, wheels go through the cache of unpacked wheels in DIR (a
// download cache folder): unpacked into it and linked into DEST, or, for
// a wheel it already holds, linked from it (pypi.WheelCache).
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"

	"github.com/cudaenv/cudaenv/fetch/pypi"
)

func main() {
	dest := flag.String("dest", "", "the tree to unpack into (made; must not exist)")
	prof := flag.String("cpuprofile", "", "write a CPU profile here")
	cache := flag.String("cache", "", "a download cache folder whose cache of unpacked wheels to use")
	flag.Parse()
	if err := run(*dest, *prof, *cache, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "extract:", err)
		os.Exit(1)
	}
}

func run(dest, prof, cache string, wheels []string) error {
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
		if err == nil && cache == "" {
			err = pypi.ExtractWheel(f, fi.Size(), dest)
		} else if err == nil {
			err = viaCache(pypi.NewWheelCache(cache, func(l string) { fmt.Fprintln(os.Stderr, l) }), f, fi.Size(), dest)
		}
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", w, err)
		}
	}
	return nil
}

func viaCache(c pypi.WheelCache, f *os.File, size int64, dest string) error {
	wn, err := pypi.ParseWheelName(filepath.Base(f.Name()))
	if err != nil {
		return err
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return err
	}
	sha := hex.EncodeToString(h.Sum(nil))
	ctx := context.Background()
	if ok, err := c.Reuse(ctx, sha, dest, wn.Project, wn.Version); ok || err != nil {
		return err
	}
	return c.Unpack(ctx, f, size, sha, dest, wn.Project, wn.Version)
}
