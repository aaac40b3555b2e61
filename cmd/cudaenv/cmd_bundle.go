package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cudaenv/cudaenv/internal/atomicfile"
	"github.com/cudaenv/cudaenv/internal/install"
	"github.com/cudaenv/cudaenv/internal/version"
)

func bundleCommands(e *env) []*cli.Command {
	return []*cli.Command{{
		Name:  "bundle",
		Usage: "carry versions to machines with no network: export archives to one file, import it there",
		Subcommands: []*cli.Command{
			{
				Name:      "export",
				Usage:     "write the archives (or wheels) and manifests of versions to one tar file",
				ArgsUsage: "VERSION [cudnn@VERSION]... -o FILE",
				Description: `Packs what install would download, for each --platform (default: this
machine's), from the download cache; what the cache lacks is downloaded
first. Installed trees are never packed, only NVIDIA's original archives.`,
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "the bundle FILE to write", Required: true},
					&cli.StringSliceFlag{Name: "platform", Usage: "NVIDIA platform key, repeatable, e.g. --platform linux-x86_64 --platform linux-sbsa"},
					&cli.StringFlag{Name: "profile", Value: "default", Usage: "minimal, default or full (as for install)"},
					&cli.StringFlag{Name: "components", Usage: "comma-separated component ids instead of a profile"},
					&cli.IntFlag{Name: "cuda-major", Usage: "for a library alone (cuDNN, NCCL, …): the CUDA major of the build"},
					&cli.StringFlag{Name: "source", Usage: "nvidia, pypi or auto (as for install; also CUDAENV_SOURCE)"},
					&cli.StringFlag{Name: "mirror", Usage: "base URL laid out like NVIDIA's (also CUDAENV_MIRROR)"},
					&cli.IntFlag{Name: "jobs", Usage: "parallel downloads"},
					&cli.BoolFlag{Name: "offline", Usage: "use the download cache only"},
					&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print only errors and the final lines"},
				},
				Action: func(c *cli.Context) error { return bundleExport(e, c) },
			},
			{
				Name:      "import",
				Usage:     "install the versions in a bundle, with no network (also: cudaenv install --from FILE)",
				ArgsUsage: "FILE",
				Description: `Checks the whole bundle (every file against its index, every archive
against its bundled manifest) before anything reaches the store; a bundle
that fails a check installs nothing.`,
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "platform", Usage: "install the bundle's versions for this platform (default: this machine's)"},
					&cli.BoolFlag{Name: "system", Usage: "install into the system store (CUDAENV_SYSTEM_ROOT); for its admin"},
					&cli.BoolFlag{Name: "force", Usage: "reinstall versions that are installed"},
					&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print only errors and the final lines"},
				},
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return errors.New("bundle import needs one bundle file, e.g. cudaenv bundle import cuda.tar")
					}
					return bundleImport(e, c, c.Args().First())
				},
			},
		},
	}}
}

func bundleExport(e *env, c *cli.Context) error {
	source, err := e.source(c)
	if err != nil {
		return err
	}
	out := c.String("output")
	h := sha256.New()
	var size int64
	var ex *install.Exported
	err = withInstaller(e, c, c.Bool("quiet"), func(ctx context.Context, in *install.Installer) error {
		// Written beside the target and renamed into place: an
		// interrupted export leaves no half bundle under the name.
		return atomicfile.WriteWith(out, 0o644, func(f *os.File) error {
			counted := &countWriter{w: io.MultiWriter(f, h)}
			bw := bufio.NewWriterSize(counted, 1<<20)
			var err error
			ex, err = in.Export(ctx, install.ExportRequest{
				Args:       c.Args().Slice(),
				Platforms:  c.StringSlice("platform"),
				Source:     source,
				Profile:    c.String("profile"),
				Components: splitList(c.String("components")),
				CUDAMajor:  c.Int("cuda-major"),
			}, bw)
			if err == nil {
				err = bw.Flush()
			}
			if err == nil {
				err = f.Sync()
			}
			size = counted.n
			return err
		})
	})
	if err != nil {
		return err
	}
	var what []string
	for _, ent := range ex.Entries {
		label := "CUDA " + ent.Name
		if t, ok := version.ToolNamed(ent.Kind); ok {
			label = t.Title() + " " + ent.Name
		}
		what = append(what, label+" ("+ent.Platform+")")
	}
	sayf(e.stdout, "wrote %s: %s; %d files, %s", out, strings.Join(what, ", "), ex.Files, humanBytes(size))
	fmt.Fprintf(e.stdout, "sha256 %s (compare it where you import)\n", hex.EncodeToString(h.Sum(nil)))
	return nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// bundleImport is bundle import FILE and install --from FILE.
func bundleImport(e *env, c *cli.Context, file string) error {
	f, err := os.Open(file)
	if err != nil {
		return fmt.Errorf("bundle import: %w", err)
	}
	defer f.Close()
	return withInstaller(e, c, c.Bool("quiet"), func(ctx context.Context, in *install.Installer) error {
		_, err := in.Import(ctx, bufio.NewReaderSize(f, 1<<20), install.ImportRequest{Platform: c.String("platform"), Force: c.Bool("force")})
		return err
	})
}
