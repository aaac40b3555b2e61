// Command gencompat renders compat/data/*.tsv into compat/tables_gen.go. Run it
// through `go generate ./compat`. With -cudnn-manifests it first refreshes
// data/cudnn_cuda.tsv from a directory of NVIDIA cuDNN redistrib manifests.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/cudaenv/cudaenv/compat/internal/gen"
)

func main() {
	data := flag.String("data", "data", "directory holding the TSV files")
	out := flag.String("o", "tables_gen.go", "Go file to write")
	manifests := flag.String("cudnn-manifests", "", "directory of cuDNN redistrib_*.json to refresh cudnn_cuda.tsv from")
	flag.Parse()
	if err := run(*data, *out, *manifests); err != nil {
		fmt.Fprintln(os.Stderr, "gencompat:", err)
		os.Exit(1)
	}
}

func run(data, out, manifests string) error {
	if manifests != "" {
		fromManifests, err := gen.CudnnFromManifests(os.DirFS(manifests), strings.TrimLeft(manifests, "./"))
		if err != nil {
			return err
		}
		comments, rows, err := gen.ReadCudnnTSV(os.DirFS(data))
		if err != nil {
			return err
		}
		merged := gen.MergeCudnn(rows, fromManifests)
		if err := os.WriteFile(data+"/cudnn_cuda.tsv", gen.FormatCudnnTSV(comments, merged), 0o644); err != nil {
			return fmt.Errorf("write cudnn_cuda.tsv: %w", err)
		}
	}
	src, err := gen.Render(os.DirFS(data))
	if err != nil {
		return err
	}
	if err := os.WriteFile(out, src, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	return nil
}
