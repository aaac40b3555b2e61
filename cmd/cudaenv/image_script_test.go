package main

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path"
	"strings"

	ggcr "github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/cudaenv/cudaenv/internal/image"
)

// imageCmds are the testscript verbs that look into images as a
// container engine would, and start a registry.
func imageCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		// registry: start go-containerregistry's registry on this
		// machine and set $REGISTRY to its host:port.
		"registry": func(ts *testscript.TestScript, neg bool, args []string) {
			srv := httptest.NewServer(ggcr.New(ggcr.Logger(log.New(io.Discard, "", 0))))
			ts.Defer(srv.Close)
			ts.Setenv("REGISTRY", strings.TrimPrefix(srv.URL, "http://"))
		},
		// ocienv DIR NAME: the config Env of the image NAME in the OCI
		// layout DIR, as cudaenv env --format json prints the changes it
		// makes here: the variables the image adds to a container's
		// defaults (the NVIDIA Container Toolkit's left out), and the
		// entries it puts in front of the default PATH in front of this
		// script's PATH instead.
		"ocienv": func(ts *testscript.TestScript, neg bool, args []string) {
			if neg || len(args) != 2 {
				ts.Fatalf("usage: ocienv DIR NAME")
			}
			cfg := ociConfig(ts, args[0], args[1])
			out := map[string]*string{}
			for _, kv := range cfg.Config.Env {
				k, v, _ := strings.Cut(kv, "=")
				const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
				if strings.HasPrefix(k, "NVIDIA_") || (k == "PATH" && v == defaultPath) {
					continue
				}
				if k == "PATH" {
					v = strings.TrimSuffix(v, defaultPath) + ts.Getenv("PATH")
				}
				out[k] = &v
			}
			enc := json.NewEncoder(ts.Stdout())
			enc.SetIndent("", "  ")
			ts.Check(enc.Encode(out))
		},
		// ocilayers DIR NAME: one line per layer of the image NAME in
		// the OCI layout DIR: its component (or the entry's own layer,
		// "links" or "generated"), the archive's
		// sha256 it names, the layer's digest; then the image's labels.
		"ocilayers": func(ts *testscript.TestScript, neg bool, args []string) {
			if neg || len(args) != 2 {
				ts.Fatalf("usage: ocilayers DIR NAME")
			}
			img := ociImage(ts, args[0], args[1])
			m, err := img.Manifest()
			ts.Check(err)
			for _, l := range m.Layers {
				comp := l.Annotations[image.KeyComponent]
				if comp == "" {
					comp = l.Annotations[image.KeyOwn]
				}
				fmt.Fprintf(ts.Stdout(), "layer %s %s %s\n", comp, l.Annotations[image.KeyArchiveSHA256], l.Digest)
			}
			cfg, err := img.ConfigFile()
			ts.Check(err)
			for _, k := range []string{image.KeySelection, image.KeyComponents, image.KeyLock, image.KeyPrefix} {
				fmt.Fprintf(ts.Stdout(), "label %s=%s\n", k, cfg.Config.Labels[k])
			}
		},
		// ocifile DIR NAME PATH FILE: write to FILE the file at the
		// absolute PATH in the image NAME of the OCI layout DIR, as a
		// container sees it (its layers applied in order, links in PATH
		// followed).
		"ocifile": func(ts *testscript.TestScript, neg bool, args []string) {
			if neg || len(args) != 4 {
				ts.Fatalf("usage: ocifile DIR NAME PATH FILE")
			}
			body, err := ociFile(ociImage(ts, args[0], args[1]), args[2])
			ts.Check(err)
			ts.Check(os.WriteFile(ts.MkAbs(args[3]), body, 0o644))
		},
		// sha256sum FILE: the file's sha256, as a lock label names it.
		"sha256sum": func(ts *testscript.TestScript, neg bool, args []string) {
			if neg || len(args) != 1 {
				ts.Fatalf("usage: sha256sum FILE")
			}
			data, err := os.ReadFile(ts.MkAbs(args[0]))
			ts.Check(err)
			sum := sha256.Sum256(data)
			fmt.Fprintln(ts.Stdout(), hex.EncodeToString(sum[:]))
		},
	}
}

func ociImage(ts *testscript.TestScript, dir, name string) v1.Image {
	p, err := layout.FromPath(ts.MkAbs(dir))
	ts.Check(err)
	idx, err := p.ImageIndex()
	ts.Check(err)
	im, err := idx.IndexManifest()
	ts.Check(err)
	for _, d := range im.Manifests {
		if d.Annotations[image.AnnotationRefName] == name {
			img, err := idx.Image(d.Digest)
			ts.Check(err)
			return img
		}
	}
	ts.Fatalf("no image named %s in %s", name, dir)
	return nil
}

func ociConfig(ts *testscript.TestScript, dir, name string) *v1.ConfigFile {
	cfg, err := ociImage(ts, dir, name).ConfigFile()
	ts.Check(err)
	return cfg
}

// ociFile is the regular file at the absolute path p in img, its layers
// applied in order and the links on the way followed.
func ociFile(img v1.Image, p string) ([]byte, error) {
	layers, err := img.Layers()
	if err != nil {
		return nil, err
	}
	type entry struct {
		typ  byte
		link string
		body []byte
	}
	files := map[string]entry{}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			return nil, err
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				rc.Close()
				return nil, err
			}
			e := entry{typ: h.Typeflag, link: h.Linkname}
			if h.Typeflag == tar.TypeReg {
				if e.body, err = io.ReadAll(tr); err != nil {
					rc.Close()
					return nil, err
				}
			}
			files["/"+strings.TrimSuffix(h.Name, "/")] = e
		}
		rc.Close()
	}
	parts := strings.Split(strings.TrimPrefix(path.Clean(p), "/"), "/")
	cur := "/"
	for hops := 0; len(parts) > 0; {
		next := path.Join(cur, parts[0])
		parts = parts[1:]
		e, ok := files[next]
		switch {
		case !ok:
			return nil, fmt.Errorf("%s: not in the image", next)
		case e.typ == tar.TypeSymlink:
			if hops++; hops > 40 {
				return nil, fmt.Errorf("%s: too many links", p)
			}
			target := e.link
			if !path.IsAbs(target) {
				target = path.Join(cur, target)
			}
			parts = append(strings.Split(strings.TrimPrefix(target, "/"), "/"), parts...)
			cur = "/"
		case len(parts) == 0 && e.typ == tar.TypeReg:
			return e.body, nil
		default:
			cur = next
		}
	}
	return nil, fmt.Errorf("%s: not a file in the image", p)
}
