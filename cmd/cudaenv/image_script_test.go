package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
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
		// the OCI layout DIR: its component (or "links"), the archive's
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
					comp = "links"
				}
				fmt.Fprintf(ts.Stdout(), "layer %s %s %s\n", comp, l.Annotations[image.KeyArchiveSHA256], l.Digest)
			}
			cfg, err := img.ConfigFile()
			ts.Check(err)
			for _, k := range []string{image.KeySelection, image.KeyComponents, image.KeyLock, image.KeyPrefix} {
				fmt.Fprintf(ts.Stdout(), "label %s=%s\n", k, cfg.Config.Labels[k])
			}
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
