// Command gencompat renders compat/data/*.tsv into compat/tables_gen.go. Run it
// through `go generate ./compat`. With -cudnn-manifests it first refreshes
// data/cudnn_cuda.tsv from a directory of NVIDIA cuDNN redistrib manifests.
// With -import it first merges the research tables of that directory
// (../shared/nvidia/compat) into data/; a missing directory (a plain clone)
// is reported in one line and the tables are rendered from data/ alone.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cudaenv/cudaenv/compat/internal/gen"
)

func main() {
	data := flag.String("data", "data", "directory holding the TSV files")
	out := flag.String("o", "tables_gen.go", "Go file to write")
	manifests := flag.String("cudnn-manifests", "", "directory of cuDNN redistrib_*.json to refresh cudnn_cuda.tsv from")
	research := flag.String("import", "", "directory of the research TSVs (torch_variants.tsv, torchvision_torch.tsv) to merge into data/ first")
	label := flag.String("import-label", "../shared/nvidia/compat", "how sources name the -import directory")
	flag.Parse()
	if *research != "" {
		if err := importResearch(*data, *research, *label); err != nil {
			fmt.Fprintln(os.Stderr, "gencompat:", err)
			os.Exit(1)
		}
	}
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

// importResearch merges torch_variants.tsv into data/torch_cuda.tsv and
// torchvision_torch.tsv into data/torch_domains.tsv, and prints what changed on stderr, so a refresh shows the facts it moved.
func importResearch(data, dir, label string) error {
	if _, err := os.Stat(dir); err != nil {
		fmt.Fprintf(os.Stderr, "gencompat: no %s (%v); rendering data/ without importing\n", dir, err)
		return nil
	}
	for _, m := range []struct {
		research, repo string
		merge          func(repo, research []byte, label string) ([]byte, []string, error)
	}{
		{"torch_variants.tsv", "torch_cuda.tsv", gen.ImportTorch},
		{"torchvision_torch.tsv", "torch_domains.tsv", gen.ImportDomains},
	} {
		research, err := os.ReadFile(filepath.Join(dir, m.research))
		if err != nil {
			return fmt.Errorf("import: %w", err)
		}
		path := filepath.Join(data, m.repo)
		repo, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("import: %w", err)
		}
		merged, notes, err := m.merge(repo, research, label+"/"+m.research)
		if err != nil {
			return fmt.Errorf("import: %w", err)
		}
		for _, n := range notes {
			fmt.Fprintln(os.Stderr, "gencompat:", n)
		}
		if bytes.Equal(merged, repo) {
			continue
		}
		if err := os.WriteFile(path, merged, 0o644); err != nil {
			return fmt.Errorf("import: write %s: %w", path, err)
		}
	}
	return nil
}
