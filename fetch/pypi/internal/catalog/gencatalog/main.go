// Command gencatalog renders fetch/pypi/catalog_gen.go from the CUDA redist
// manifests in fetch/pypi/catalog/manifests and the cuDNN ones in its cudnn
// folder (byte-for-byte copies of ../shared/nvidia/manifests). Run it with
// go generate ./fetch/pypi.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/cudaenv/cudaenv/fetch/pypi/internal/catalog"
)

func main() {
	in := flag.String("in", "catalog/manifests", "folder of redistrib_<version>.json manifests")
	out := flag.String("out", "catalog_gen.go", "Go file to write")
	pkg := flag.String("pkg", "pypi", "package name of the generated file")
	flag.Parse()
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
