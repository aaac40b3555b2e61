package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cudaenv/cudaenv/shell"
	"github.com/cudaenv/cudaenv/shims"
)

// Installing, uninstalling and linking refresh the shims.
func init() { afterStoreChange = rehashAfterStoreChange }

func shimCommands(e *env) []*cli.Command {
	return []*cli.Command{
		{
			Name:  "rehash",
			Usage: "refresh the shims: one per executable of any installed or linked toolkit (done after install, uninstall and link)",
			Description: `Shims let programs that never run the shell hook (IDEs, make, CMake,
cron, ssh) use the version selected for their directory. Put the shims
folder first on PATH, e.g. in ~/.profile:
    export PATH="` + e.dirs.Shims() + `:$PATH"
or use: eval "$(cudaenv init --shims bash)"`,
			Action: func(c *cli.Context) error {
				if c.NArg() > 0 {
					return errors.New("rehash takes no arguments")
				}
				rep, err := rehash(e)
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "%d shims in %s\n", len(rep.Added)+rep.Kept, e.dirs.Shims())
				if len(rep.Added) > 0 {
					fmt.Fprintf(e.stdout, "added: %s\n", strings.Join(rep.Added, " "))
				}
				if len(rep.Removed) > 0 {
					fmt.Fprintf(e.stdout, "removed: %s\n", strings.Join(rep.Removed, " "))
				}
				return nil
			},
		},
	}
}

func rehash(e *env) (shims.Report, error) {
	self, err := shimTarget(e)
	if err != nil {
		return shims.Report{}, err
	}
	return shims.Rehash(e.store(), self, e.goos)
}

// shimTarget is the binary the shims run. On Unix they are symlinks to the
// path cudaenv was started as, so that a package manager's symlink keeps
// working across upgrades; on Windows they are hard links or copies of the
// executable itself.
func shimTarget(e *env) (string, error) {
	if e.goos == "windows" {
		p, err := os.Executable()
		if err != nil {
			return "", fmt.Errorf("rehash: cannot find the cudaenv executable: %w", err)
		}
		return p, nil
	}
	return selfPath(e), nil
}

// rehashAfterStoreChange keeps the shims in step with the store; a failure
// is a warning, since the install itself succeeded.
func rehashAfterStoreChange(e *env) {
	if _, err := rehash(e); err != nil {
		fmt.Fprintf(e.stderr, "cudaenv: warning: %s; run: cudaenv rehash\n", err)
	}
}

// addInitShims gives the init command its --shims variant, which prints a
// PATH line for the shims folder instead of the prompt hook.
func addInitShims(e *env, cmds []*cli.Command) {
	for _, c := range cmds {
		if c.Name != "init" {
			continue
		}
		c.Flags = append(c.Flags, &cli.BoolFlag{Name: "shims", Usage: "put the shims folder first on PATH instead of installing the prompt hook"})
		c.Description += `

With --shims, only the shims folder is put first on PATH; commands such as
nvcc then pick their version per directory without the prompt hook:
bash:  eval "$(cudaenv init --shims bash)"
fish:  cudaenv init --shims fish | source
pwsh:  cudaenv init --shims pwsh | Out-String | Invoke-Expression`
		hook := c.Action
		c.Action = func(ctx *cli.Context) error {
			if !ctx.Bool("shims") {
				return hook(ctx)
			}
			if ctx.NArg() != 1 {
				return fmt.Errorf("init --shims needs a shell: %s; e.g. eval \"$(cudaenv init --shims bash)\"", strings.Join(shell.Names(), ", "))
			}
			sh, err := shell.Get(ctx.Args().First())
			if err != nil {
				return err
			}
			fmt.Fprint(e.stdout, shell.ShimsPath(sh, e.dirs.Shims()))
			return nil
		}
	}
}
