package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cudaenv/cudaenv/internal/install"
	"github.com/cudaenv/cudaenv/internal/lockfile"
)

// lockCommand is `cudaenv lock`: write .cuda-version.lock beside the
// nearest .cuda-version.
func lockCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "lock",
		Usage:     "pin what .cuda-version selects: write .cuda-version.lock beside it (exact releases, every archive's size and sha256)",
		ArgsUsage: " ",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "platform", Usage: "also lock these NVIDIA platforms, e.g. linux-sbsa,windows-x86_64 (always: this machine's and those already in the lock)"},
			&cli.BoolFlag{Name: "upgrade", Usage: "move to the newest releases the specs match, and accept files that changed on the server"},
			&cli.StringFlag{Name: "profile", Usage: "minimal, default or full (default: the lock's, else what the installed version has, else default)"},
			&cli.StringFlag{Name: "components", Usage: "comma-separated component ids instead of a profile"},
			&cli.StringFlag{Name: "source", Usage: "nvidia, pypi or auto (default: the lock's; for a new lock, the one the installed version came from, else CUDAENV_SOURCE, else nvidia)"},
			&cli.IntFlag{Name: "cuda-major", Usage: "for a library alone (cuDNN, NCCL, …): the CUDA major to lock the build for"},
			&cli.StringFlag{Name: "mirror", Usage: "base URL laid out like https://developer.download.nvidia.com/compute (also CUDAENV_MIRROR)"},
			&cli.BoolFlag{Name: "offline", Usage: "use the cached release index and manifests only"},
			&cli.BoolFlag{Name: "refresh", Usage: "refresh the cached release index first"},
		},
		Action: func(c *cli.Context) error { return lockCmd(e, c) },
	}
}

func lockCmd(e *env, c *cli.Context) error {
	if c.NArg() > 0 {
		return errors.New("lock takes no versions; it locks what .cuda-version selects (change that with cudaenv local)")
	}
	def, err := e.setting("source")
	if err != nil {
		return err
	}
	var plats []string
	for _, p := range c.StringSlice("platform") {
		if p = strings.TrimSpace(p); p != "" {
			plats = append(plats, p)
		}
	}
	var res install.LockResult
	err = withInstaller(e, c, false, func(ctx context.Context, in *install.Installer) error {
		var err error
		res, err = in.Lock(ctx, install.LockRequest{
			Here:          install.Here{Dir: e.cwd},
			Platforms:     plats,
			Source:        c.String("source"),
			DefaultSource: def,
			Profile:       c.String("profile"),
			Components:    splitList(c.String("components")),
			CUDAMajor:     c.Int("cuda-major"),
			Upgrade:       c.Bool("upgrade"),
		})
		return err
	})
	if err != nil {
		return err
	}
	verb := "wrote"
	if !res.Written {
		verb = "up to date:"
	}
	sayf(e.stdout, "%s %s: %s", verb, res.Path, lockSummary(res.Lock))
	return nil
}

// lockSummary is one line: "CUDA 12.4.1 (nvidia), cuDNN 9.5.1.17 for
// CUDA 12 (nvidia); linux-sbsa, linux-x86_64".
func lockSummary(lk *lockfile.Lock) string {
	var parts []string
	for _, p := range lk.Products() {
		if p.Tool().Library() {
			parts = append(parts, fmt.Sprintf("%s %s for CUDA %d (%s)", p.Tool().Title(), libraryBuild(p), p.CUDAMajor, p.Source))
			continue
		}
		parts = append(parts, fmt.Sprintf("CUDA %s (%s)", p.Release, p.Source))
	}
	return strings.Join(parts, ", ") + "; " + strings.Join(lk.Platforms(), ", ")
}

// libraryBuild is a library's version as install, list and use name it:
// the build its files carry (cuDNN 9.5.1.17), where NVIDIA's release
// label is shorter (9.5.1).
func libraryBuild(p *lockfile.Product) string {
	build := ""
	for _, files := range p.Platforms {
		for _, f := range files {
			if build != "" && f.Version != build {
				return p.Release // more than one: the release names them all
			}
			build = f.Version
		}
	}
	if build == "" || !strings.HasPrefix(build, p.Release+".") {
		return p.Release
	}
	return build
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, id := range strings.Split(s, ",") {
		if id = strings.TrimSpace(id); id != "" {
			out = append(out, id)
		}
	}
	return out
}
