// Command pypibench builds the local index bench/pypi/run.sh serves to
// cudaenv, uv and pip: from a store entry that cudaenv installed from PyPI
// (its receipt.json lists each wheel's sha256) and the download cache that
// install filled, it finds each wheel's file name on the real index (the
// one network access, made once) and writes
//
//	DIR/files/<wheel>                     the cached archive
//	DIR/simple/<project>/index.html       PEP 503 page with #sha256=
//	DIR/requirements.txt                  project==version, for uv and pip
//
//	pypibench index -out DIR -cache CACHE RECEIPT...
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"html"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/cudaenv/cudaenv/fetch/pypi"
)

type receipt struct {
	Kind       string `json:"kind"`
	Version    string `json:"version"`
	CUDAMajor  int    `json:"cuda_major"`
	Components []struct {
		ID      string `json:"id"`
		Version string `json:"version"`
		SHA256  string `json:"sha256"`
	} `json:"components"`
}

func main() {
	if len(os.Args) < 2 || os.Args[1] != "index" {
		fmt.Fprintln(os.Stderr, "usage: pypibench index -out DIR -cache CACHE [-major N] RECEIPT...")
		os.Exit(2)
	}
	fs := flag.NewFlagSet("index", flag.ExitOnError)
	out := fs.String("out", "", "index folder to write")
	cache := fs.String("cache", "", "cudaenv's download cache")
	major := fs.Int("major", 0, "CUDA major of cuDNN receipts")
	fs.Parse(os.Args[2:])
	if err := index(*out, *cache, *major, fs.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "pypibench:", err)
		os.Exit(1)
	}
}

func index(out, cache string, major int, receipts []string) error {
	ix, err := pypi.NewIndex("")
	if err != nil {
		return err
	}
	var reqs []string
	for _, path := range receipts {
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var r receipt
		if err := json.Unmarshal(data, &r); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		m := major
		if r.Kind == "cuda" {
			m, _ = strconv.Atoi(strings.SplitN(r.Version, ".", 2)[0])
		}
		for _, c := range r.Components {
			id := c.ID
			if r.Kind == "cudnn" {
				id = "cudnn"
			}
			project, err := pypi.Project(id, m)
			if err != nil {
				return err
			}
			page, err := ix.Project(context.Background(), project)
			if err != nil {
				return err
			}
			i := slices.IndexFunc(page.Files, func(f pypi.File) bool { return f.SHA256 == c.SHA256 })
			if i < 0 {
				return fmt.Errorf("%s: no file with sha256 %s on PyPI", project, c.SHA256)
			}
			name := page.Files[i].Filename
			if err := copyFile(filepath.Join(cache, "archives", c.SHA256), filepath.Join(out, "files", name)); err != nil {
				return err
			}
			dir := filepath.Join(out, "simple", page.Project)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			link := fmt.Sprintf("<!DOCTYPE html><html><body><a href=\"../../files/%s#sha256=%s\">%s</a></body></html>\n",
				html.EscapeString(name), c.SHA256, html.EscapeString(name))
			if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte(link), 0o644); err != nil {
				return err
			}
			// The file's version, which may carry a suffix the receipt's
			// lacks (12.4.127.post1).
			reqs = append(reqs, page.Project+"=="+strings.Split(name, "-")[1])
		}
	}
	slices.Sort(reqs)
	return os.WriteFile(filepath.Join(out, "requirements.txt"), []byte(strings.Join(reqs, "\n")+"\n"), 0o644)
}

func copyFile(from, to string) error {
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}
