package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/cudaenv/cudaenv/internal/modulefile"
)

func moduleCommands(e *env) []*cli.Command {
	return []*cli.Command{{
		Name:      "modulefile",
		Usage:     "write Lmod or Environment Modules modulefiles for installed versions",
		ArgsUsage: "VERSION... | cudnn@VERSION... | --all",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Value: "lua", Usage: "lua (Lmod) or tcl (Environment Modules)"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write cuda/VERSION and cudnn/VERSION files under this folder (default: print one modulefile)"},
			&cli.BoolFlag{Name: "all", Usage: "every installed version, the system store's included; with -o, also remove stale modulefiles cudaenv wrote there"},
			&cli.BoolFlag{Name: "system", Usage: "only the system store's versions (CUDAENV_SYSTEM_ROOT): what a cluster's module tree should offer"},
		},
		Action: func(c *cli.Context) error {
			f, err := modulefile.ParseFormat(c.String("format"))
			if err != nil {
				return fmt.Errorf("modulefile: %w", err)
			}
			all := c.Bool("all")
			if all == (c.NArg() > 0) {
				return errors.New("modulefile needs versions or --all, not both, e.g. cudaenv modulefile 12.4 -o /opt/modules")
			}
			st, err := e.storeFor(c.Bool("system"))
			if err != nil {
				return fmt.Errorf("modulefile %w", err)
			}
			mods, err := modulefile.ForStore(st, c.Args().Slice(), all)
			if err != nil {
				return fmt.Errorf("modulefile: %w", err)
			}
			out := c.String("output")
			if out == "" {
				if len(mods) != 1 {
					return fmt.Errorf("modulefile: %d modules selected; name one, or write them all with -o DIR", len(mods))
				}
				_, err := e.stdout.Write(modulefile.Render(mods[0], f))
				return err
			}
			if err := modulefile.WriteTree(out, mods, f, all, func(line string) { fmt.Fprintln(e.stdout, line) }); err != nil {
				return fmt.Errorf("modulefile: %w", err)
			}
			return nil
		},
	}}
}
