package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cudaenv/cudaenv/internal/activate"
	"github.com/cudaenv/cudaenv/internal/envdiff"
	"github.com/cudaenv/cudaenv/internal/hookenv"
	"github.com/cudaenv/cudaenv/internal/resolve"
	"github.com/cudaenv/cudaenv/internal/version"
	"github.com/cudaenv/cudaenv/shell"
)

func envCommands(e *env) []*cli.Command {
	return []*cli.Command{
		{
			Name:      "env",
			Usage:     "print the environment changes that activate versions (default: the current selection)",
			ArgsUsage: "[VERSION [cudnn@VERSION]]",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "shell", Usage: "bash, zsh, fish, pwsh or json", Value: ""},
			},
			Action: func(c *cli.Context) error {
				name := c.String("shell")
				if name == "" {
					name = userShell(e)
				}
				if name != "json" {
					if _, err := shell.Get(name); err != nil {
						return fmt.Errorf("env --shell: %w", err)
					}
				}
				changes, _, err := changesFor(e, c.Args().Slice())
				if err != nil {
					return err
				}
				if name == "json" {
					return printJSON(e, changes)
				}
				sh, err := shell.Get(name)
				if err != nil {
					return err
				}
				fmt.Fprint(e.stdout, shell.Render(sh, hookenv.Vars(changes)))
				return nil
			},
		},
		{
			Name:            "exec",
			Usage:           "run a command with versions activated (default: the current selection)",
			ArgsUsage:       "[VERSION [cudnn@VERSION]] [--] COMMAND [ARGS...]",
			SkipFlagParsing: true,
			Action: func(c *cli.Context) error {
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
				} else if label := r.Label(); label != "" {
					vars[resolve.EnvVar] = label
				}
				if err := execTarget(e, vars, r, cmd[0]); err != nil {
					return err
				}
				return execWith(e, vars, cmd)
			},
		},
	}
}

// splitExecArgs separates leading version specs from the command. A "--"
// ends the specs explicitly; otherwise the first word that is not a spec
// starts the command.
func splitExecArgs(args []string) (specs, cmd []string) {
	for i, a := range args {
		if a == "--" {
			return args[:i], args[i+1:]
		}
		if _, err := version.ParseSpec(a); err != nil {
			return args[:i], args[i:]
		}
	}
	return args, nil
}

// changesFor computes the changes for explicit specs, or for the current
// selection when there are none.
func changesFor(e *env, specs []string) ([]envdiff.Change, activate.Resolved, error) {
	var r activate.Resolved
	var err error
	if len(specs) > 0 {
		parsed, perr := resolve.Parse("command line", []byte(strings.Join(specs, " ")))
		if perr != nil {
			var se *resolve.SyntaxError
			if errors.As(perr, &se) {
				se.Line = 0
			}
			return nil, r, perr
		}
		r, err = activate.Resolve(e.store(), resolve.Selection{Specs: parsed, Source: resolve.Source{}})
	} else {
		r, err = resolveHere(e)
	}
	if err != nil {
		return nil, r, err
	}
	var want envdiff.Want
	if !r.Selection.System() {
		want = activate.Want(r, e.goos)
	}
	return activate.Changes(e.vars, want, e.goos), r, nil
}

func printJSON(e *env, changes []envdiff.Change) error {
	m := map[string]*string{}
	for _, c := range changes {
		if c.Unset {
			m[c.Name] = nil
		} else {
			v := c.Value
			m[c.Name] = &v
		}
	}
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(m)
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
	return &exitError{code: 127, err: errors.New(msg)}
}
