// Command gencatalog renders fetch/pypi/catalog_gen.go from the CUDA redist
// manifests in fetch/pypi/catalog/manifests and the cuDNN ones in its cudnn
// folder (byte-for-byte copies of ../shared/nvidia/manifests). Run it with
// go generate ./fetch/pypi; with -sync it first copies the manifests that
// folder has and the catalog lacks, so a refreshed ../shared refreshes the
// table of component versions.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/cudaenv/cudaenv/fetch/pypi/internal/catalog"
)

var manifestFile = regexp.MustCompile(`^redistrib_\d+(\.\d+){2,3}\.json$`)

func main() {
	in := flag.String("in", "catalog/manifests", "folder of redistrib_<version>.json manifests")
	out := flag.String("out", "catalog_gen.go", "Go file to write")
	pkg := flag.String("pkg", "pypi", "package name of the generated file")
	sync := flag.String("sync", "", "folder with cuda/ and cudnn/ manifests to copy into -in first (skipped when absent)")
	flag.Parse()
	if *sync != "" {
		if err := syncManifests(*sync, *in); err != nil {
			fmt.Fprintln(os.Stderr, "gencatalog:", err)
			os.Exit(1)
		}
	}
	src, err := catalog.Render(os.DirFS(*in), *pkg, *in)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gencatalog:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "gencatalog:", err)
		os.Exit(1)
	}
}

// syncManifests copies from/cuda/*.json into to and from/cudnn/*.json into
// to/cudnn, byte for byte (a manifest's sha256 is recorded), leaving files
// that are already there alone.
func syncManifests(from, to string) error {
	if _, err := os.Stat(from); err != nil {
		fmt.Fprintf(os.Stderr, "gencatalog: %s not found; using the manifests in %s as they are\n", from, to)
		return nil
	}
	for _, pair := range [][2]string{{"cuda", ""}, {"cudnn", "cudnn"}} {
		src, dst := filepath.Join(from, pair[0]), filepath.Join(to, pair[1])
		entries, err := os.ReadDir(src)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if e.IsDir() || !manifestFile.MatchString(e.Name()) {
				continue
			}
			target := filepath.Join(dst, e.Name())
			if _, err := os.Stat(target); err == nil {
				continue
			}
			data, err := os.ReadFile(filepath.Join(src, e.Name()))
			if err != nil {
				return err
			}
			if err := os.WriteFile(target, data, 0o644); err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "gencatalog: added %s\n", target)
		}
	}
	return nil
}
