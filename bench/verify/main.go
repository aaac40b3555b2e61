// Command verifybench makes a store for bench/verify/run.sh: VERSIONS
// CUDA toolkits of about FILES files each (headers and libraries spread
// over folders as a default-profile toolkit's are), installed through the
// store, so each has its receipt and its file list.
//
//	verifybench -root DIR [-versions 10] [-files 1500] [-nolist]
//
// With -nolist the receipts name no file list, as a cudaenv from before
// file lists wrote them: list then checks only each toolkit's key files.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cudaenv/cudaenv/internal/dirs"
	"github.com/cudaenv/cudaenv/store"
)

func main() {
	root := flag.String("root", "", "the store folder to fill")
	versions := flag.Int("versions", 10, "toolkits to install")
	files := flag.Int("files", 1500, "files in each")
	nolist := flag.Bool("nolist", false, "write receipts without a file list")
	flag.Parse()
	if *root == "" {
		fmt.Fprintln(os.Stderr, "usage: verifybench -root DIR [-versions 10] [-files 1500] [-nolist]")
		os.Exit(2)
	}
	st := store.New(dirs.Dirs{Root: *root})
	for v := range *versions {
		name := fmt.Sprintf("12.%d.1", v)
		_, err := st.Install(store.CUDA, name, func(stage string) (store.Receipt, error) {
			return store.Receipt{Source: "nvidia", Profile: "default", Components: []store.Component{{ID: "cuda_nvcc", Version: "12.0.1"}, {ID: "cuda_cudart", Version: "12.0.1"}}}, fill(stage, *files)
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if *nolist {
			p := filepath.Join(*root, "cuda", name, store.ReceiptName)
			var r map[string]any
			b, _ := os.ReadFile(p)
			json.Unmarshal(b, &r)
			delete(r, "file_list")
			delete(r, "files")
			b, _ = json.Marshal(r)
			os.WriteFile(p, b, 0o644)
			os.Remove(filepath.Join(*root, "cuda", name, ".cudaenv-files"))
		}
	}
}

// fill writes n files: bin/nvcc, include/cuda_runtime.h and the rest in
// folders of 30 (include/cccl/…, lib/…), a few hundred bytes each.
func fill(dir string, n int) error {
	write := func(rel string, size int, mode os.FileMode) error {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		b := make([]byte, size)
		for i := range b {
			b[i] = byte('a' + i%26)
		}
		return os.WriteFile(p, b, mode)
	}
	if err := write("bin/nvcc", 4096, 0o755); err != nil {
		return err
	}
	if err := write("include/cuda_runtime.h", 2048, 0o644); err != nil {
		return err
	}
	for i := 2; i < n; i++ {
		top := "include/cccl"
		if i%5 == 0 {
			top = "lib"
		}
		if err := write(fmt.Sprintf("%s/d%02d/f%04d.h", top, i/30, i), 200+i%700, 0o644); err != nil {
			return err
		}
	}
	return nil
}
