package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cudaenv/cudaenv/internal/hookenv"
	"github.com/cudaenv/cudaenv/internal/image"
	"github.com/cudaenv/cudaenv/internal/install"
)

func imageCommands(e *env) []*cli.Command {
	return []*cli.Command{{
		Name:      "image",
		Usage:     "build a container image of versions (one layer per NVIDIA archive or wheel) without a container engine: an OCI layout, a docker-archive, or a push",
		ArgsUsage: "[VERSION] [cudnn@VERSION nccl@VERSION …] [libraries=off] (--output oci:DIR | --output docker-archive:FILE | --push REF)",
		Description: `With no versions, the image holds what .cuda-version selects here (exactly
what .cuda-version.lock lists, when there is one; --locked refuses a lock that
no longer matches). A version that is installed is imaged as installed. The
files go under --prefix (default /opt/cudaenv), laid out as in the store, and
the config's Env is what cudaenv env prints for them. Each component (NVIDIA
archive or wheel) is one layer, the same bytes on any machine: a registry
keeps each once, and a second image sends only the layers it lacks.

--base REF puts the layers on an image (a registry reference, or oci:DIR) and
keeps its config; without one the image holds the toolkit only (for COPY
--from or FROM). --push uses the credentials docker login and podman login
keep; plain HTTP only to a registry on this machine. Several --platform make
an image index. NVIDIA's terms restrict redistribution: push to your own
registry.`,
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "output", Aliases: []string{"o"}, Usage: "where to write the image: oci:DIR (an OCI image layout, created or added to) or docker-archive:FILE (docker load -i FILE); repeatable"},
			&cli.StringFlag{Name: "push", Usage: "push the image to a registry, e.g. ghcr.io/org/cuda:12.4"},
			&cli.StringFlag{Name: "base", Usage: "the image to put the layers on: a registry reference (ubuntu:24.04) or oci:DIR[:NAME]; its layers and config are kept"},
			&cli.StringFlag{Name: "tag", Usage: "the image's name in a docker-archive (its tag names it in an OCI layout); default cudaenv/cuda:VERSION"},
			&cli.StringFlag{Name: "prefix", Usage: "the folder the files go under in the image", Value: image.DefaultPrefix},
			&cli.BoolFlag{Name: "locked", Usage: "build exactly what .cuda-version.lock lists, and fail if it no longer matches .cuda-version (CI)"},
			&cli.StringFlag{Name: "profile", Usage: "minimal, extensions, default or full (as for install; default: an installed version's components, else default)"},
			&cli.StringFlag{Name: "components", Usage: "comma-separated component ids instead of a profile"},
			&cli.StringSliceFlag{Name: "platform", Usage: "NVIDIA platform key or container platform, repeatable or comma-separated: linux-x86_64 (linux/amd64), linux-sbsa (linux/arm64); default this machine's"},
			&cli.IntFlag{Name: "cuda-major", Usage: "for a library alone (cuDNN, NCCL, …): the CUDA major of the build"},
			&cli.StringFlag{Name: "source", Usage: "nvidia, pypi or auto (as for install; also CUDAENV_SOURCE)"},
			&cli.StringFlag{Name: "mirror", Usage: "base URL laid out like NVIDIA's (also CUDAENV_MIRROR)"},
			&cli.IntFlag{Name: "jobs", Usage: "parallel downloads and layers (default: CPU cores)"},
			&cli.BoolFlag{Name: "offline", Usage: "use the download cache only"},
			&cli.BoolFlag{Name: "refresh", Usage: "refresh the cached release index first"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print only errors and the final lines"},
		},
		Action: func(c *cli.Context) error { return imageCmd(e, c) },
	}}
}

func imageCmd(e *env, c *cli.Context) error {
	source, err := e.source(c)
	if err != nil {
		return err
	}
	profile := ""
	if c.IsSet("profile") {
		profile = c.String("profile")
	}
	var platforms []string
	for _, p := range c.StringSlice("platform") {
		for _, k := range splitList(p) {
			platforms = append(platforms, image.PlatformKey(k))
		}
	}
	quiet := c.Bool("quiet")
	return withInstaller(e, c, quiet, func(ctx context.Context, in *install.Installer) error {
		req := image.Request{
			Select: install.ImageRequest{
				Args:        c.Args().Slice(),
				Here:        install.Here{Dir: e.cwd, Lookup: e.lookup, GlobalFile: e.dirs.GlobalFile(), Warn: func(w string) { hookenv.Warn(e.stderr, w) }},
				Source:      source,
				SourceTyped: c.IsSet("source"),
				Profile:     profile,
				Components:  splitList(c.String("components")),
				CUDAMajor:   c.Int("cuda-major"),
				Platforms:   platforms,
				Locked:      c.Bool("locked"),
			},
			Prefix:  c.String("prefix"),
			Base:    c.String("base"),
			Outputs: c.StringSlice("output"),
			Push:    c.String("push"),
			Tag:     c.String("tag"),
			Registry: &image.Registry{
				Auth:      &image.Keychain{Files: image.AuthFiles(e.lookup), Env: e.vars.Pairs()},
				UserAgent: "cudaenv/" + appVersion,
			},
			Jobs:     c.Int("jobs"),
			Reporter: &installReport{e: e, quiet: quiet, profile: "default", command: "image"},
		}
		res, err := image.Make(ctx, in, req)
		if err != nil {
			return err
		}
		printImage(e, res, quiet)
		return nil
	})
}

func printImage(e *env, res *image.Result, quiet bool) {
	for _, img := range res.Images {
		var size int64
		for _, l := range img.Layers {
			size += l.Size
		}
		on := ""
		if img.BaseLayers > 0 {
			on = fmt.Sprintf(" on %s of the base", plural(img.BaseLayers, "layer"))
		}
		sayf(e.stdout, "%s: image %s: %s, %s%s", img.Platform, img.Digest, plural(len(img.Layers), "layer"), humanBytes(size), on)
		if quiet {
			continue
		}
		for _, l := range img.Layers {
			what := l.Component + " " + l.Version
			if l.Component == "" {
				what = "links"
			}
			sayf(e.stdout, "  %-28s %-36s %s  %s", l.Entry, what, shortDigest(l.Digest.String()), humanBytes(l.Size))
		}
	}
	if res.Index {
		sayf(e.stdout, "index %s: %s", res.Digest, plural(len(res.Images), "platform"))
	}
	for _, w := range res.Written {
		switch {
		case strings.HasPrefix(w.Where, "oci:"):
			sayf(e.stdout, "wrote %s (named %s): %s", w.Where, w.Ref, res.Digest)
		case strings.HasPrefix(w.Where, "docker-archive:"):
			sayf(e.stdout, "wrote %s (%s); load it with: docker load -i %s", w.Where, w.Ref, strings.TrimPrefix(w.Where, "docker-archive:"))
		default:
			mounted := ""
			if w.Mounted > 0 {
				mounted = fmt.Sprintf(", mounted %d from the base's repository", w.Mounted)
			}
			sayf(e.stdout, "pushed %s: sent %s (%s); the registry had %d%s", w.Ref, plural(w.Uploaded, "blob"), humanBytes(w.UploadedBytes), w.Had, mounted)
		}
	}
}

func shortDigest(d string) string {
	if len(d) > len("sha256:")+12 {
		return d[:len("sha256:")+12]
	}
	return d
}
