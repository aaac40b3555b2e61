package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cudaenv/cudaenv/internal/activate"
	"github.com/cudaenv/cudaenv/internal/envdiff"
	"github.com/cudaenv/cudaenv/internal/query"
	"github.com/cudaenv/cudaenv/internal/resolve"
	"github.com/cudaenv/cudaenv/internal/version"
)

func envCommands(e *env) []*cli.Command {
	return []*cli.Command{
		{
			Name:      "env",
			Usage:     "print the environment that activates versions, for a shell, CI, docker or CMake (default: the current selection)",
			ArgsUsage: "[VERSION [cudnn@VERSION]]",
			Description: `--format shell (the default) prints code for --shell (bash, zsh, fish, pwsh;
default: yours); json the changes as JSON; github lines for $GITHUB_ENV (PATH
goes through $GITHUB_PATH: use --github, which appends to both files); dotenv
KEY=value lines for docker --env-file and python-dotenv; cmake a script for
cmake -C that sets CMAKE_CUDA_COMPILER, CUDAToolkit_ROOT, the cuDNN paths,
the other libraries' variables (NCCL_ROOT, CUSPARSELT_ROOT, …) and
CMAKE_PREFIX_PATH with their roots.`,
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "format", Usage: "shell, json, github, dotenv or cmake"},
				&cli.StringFlag{Name: "shell", Usage: "for --format shell: bash, zsh, fish or pwsh (json also works, as --format json)"},
				&cli.BoolFlag{Name: "github", Usage: "append the selection to the files named by GITHUB_ENV and GITHUB_PATH (GitHub Actions)"},
			},
			Action: func(c *cli.Context) error {
				return query.Env(e.query(), query.EnvOptions{Format: c.String("format"), Shell: c.String("shell"), GitHub: c.Bool("github"), Specs: c.Args().Slice()})
			},
		},
		{
			Name:            "exec",
			Usage:           "run a command with versions activated (default: the current selection)",
			ArgsUsage:       "[--each LIST|all [--jobs N]] [--libraries=off] [VERSION [cudnn@VERSION]] [--] COMMAND [ARGS...]",
			SkipFlagParsing: true,
			Description: `--each 11.8,12.4,13.0 (or --each all) runs the command once per CUDA
version, each with its own environment and CUDAENV_VERSION, one after
another; --jobs N runs N at a time, each run's output kept in a log and
shown, prefixed with its version, when it ends. A {version} in the
arguments becomes each run's version (e.g. -B build-{version}). A table of
exit statuses and times ends it; the exit status is 1 if any run failed.
--libraries=off (or the word libraries=off among the versions) selects the
toolkit for building only: PATH, CUDA_HOME, CUDACXX and the CMake hints are
set, LD_LIBRARY_PATH is left alone, so a framework from wheels loads its own
nvidia-* libraries.`,
			Action: func(c *cli.Context) error {
				if asksHelp(c.Args().Slice()) {
					return cli.ShowCommandHelp(c, "exec")
				}
				if args := c.Args().Slice(); len(args) > 0 && (args[0] == "--each" || strings.HasPrefix(args[0], "--each=")) {
					return execEach(e, args)
				}
				specs, cmd := splitExecArgs(c.Args().Slice())
				if len(cmd) == 0 {
					return errors.New("exec needs a command, e.g. cudaenv exec 12.4 -- nvcc --version")
				}
				changes, r, err := changesFor(e, specs)
				if err != nil {
					return err
				}
				vars := envdiff.Result(e.vars, changes)
				// As pyenv exec does, the selection travels with the
				// command: cudaenv current, doctor and a hook in a nested
				// shell then agree with exec, wherever the command cds.
				if r.Selection.System() {
					vars[resolve.EnvVar] = "system"
				} else if r.Label() != "" {
					vars[resolve.EnvVar] = r.Selector()
				}
				if err := execTarget(e, vars, r, cmd[0]); err != nil {
					return err
				}
				return execWith(e, vars, cmd)
			},
		},
	}
}

// splitExecArgs separates leading version specs and settings (a
// libraries=off word, or the --libraries=off flag) from the command. A
// "--" ends the specs explicitly; otherwise the first word that is
// neither starts the command.
func splitExecArgs(args []string) (specs, cmd []string) {
	for i, a := range args {
		if a == "--" {
			return specs, args[i+1:]
		}
		if w, ok := strings.CutPrefix(a, "--"); ok && resolve.IsOption(w) {
			a = w
		} else if _, err := version.ParseSpec(a); err != nil && !resolve.IsOption(a) {
			return specs, args[i:]
		}
		specs = append(specs, a)
	}
	return specs, nil
}

// changesFor computes the changes for explicit specs, or for the current
// selection when there are none.
func changesFor(e *env, specs []string) ([]envdiff.Change, activate.Resolved, error) {
	return query.ChangesFor(e.query(), specs)
}

// execTarget fails the way a shim does when the command is nowhere on
// the new PATH: naming the installed versions that have it.
func execTarget(e *env, vars envdiff.Env, r activate.Resolved, name string) error {
	if strings.ContainsAny(name, `/\`) {
		return nil
	}
	if _, err := lookPath(name, vars["PATH"], e.goos); err == nil {
		return nil
	}
	msg := fmt.Sprintf("exec: %s: command not found", name)
	if len(activate.Having(e.store(), name, e.goos)) > 0 {
		if _, err := activate.Which(e.store(), r, name, e.goos); err != nil {
			msg = "exec: " + err.Error()
		}
	}
	return &query.ExitError{Code: 127, Err: errors.New(msg)}
}
