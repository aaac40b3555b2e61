package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cudaenv/cudaenv/internal/activate"
	"github.com/cudaenv/cudaenv/internal/envdiff"
	"github.com/cudaenv/cudaenv/internal/export"
	"github.com/cudaenv/cudaenv/internal/hookenv"
	"github.com/cudaenv/cudaenv/internal/resolve"
	"github.com/cudaenv/cudaenv/internal/version"
	"github.com/cudaenv/cudaenv/shell"
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
cmake -C that sets CMAKE_CUDA_COMPILER, CUDAToolkit_ROOT and the cuDNN paths.`,
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "format", Usage: "shell, json, github, dotenv or cmake"},
				&cli.StringFlag{Name: "shell", Usage: "for --format shell: bash, zsh, fish or pwsh (json also works, as --format json)"},
				&cli.BoolFlag{Name: "github", Usage: "append the selection to the files named by GITHUB_ENV and GITHUB_PATH (GitHub Actions)"},
			},
			Action: func(c *cli.Context) error {
				format, shellName := c.String("format"), c.String("shell")
				if c.Bool("github") {
					if format != "" && format != "github" {
						return fmt.Errorf("env: --github writes the github format; drop --format %s", format)
					}
					format = "github"
				}
				switch {
				case format == "" && shellName == "json":
					format = "json"
				case format == "":
					format = "shell"
				}
				switch format {
				case "shell":
					if shellName == "" {
						shellName = userShell(e)
					}
					if _, err := shell.Get(shellName); err != nil {
						return fmt.Errorf("env --shell: %w", err)
					}
				case "json", "github", "dotenv", "cmake":
				default:
					return fmt.Errorf("env: unknown format %q; use shell, json, github, dotenv or cmake", format)
				}
				changes, r, err := changesFor(e, c.Args().Slice())
				if err != nil {
					return err
				}
				switch format {
				case "json":
					return printJSON(e, changes)
				case "github":
					return exportGitHub(e, changes, r, c.Bool("github"))
				case "dotenv":
					text, quoted := export.Dotenv(exportVars(e, changes, r, true))
					if len(quoted) > 0 {
						fmt.Fprintf(e.stderr, "cudaenv: note: %s quoted for python-dotenv; docker --env-file would keep the quotes\n", strings.Join(quoted, ", "))
					}
					fmt.Fprint(e.stdout, text)
					return nil
				case "cmake":
					fmt.Fprint(e.stdout, export.CMakeCache(cmakeOf(r, e.goos)))
					return nil
				}
				sh, err := shell.Get(shellName)
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
			ArgsUsage:       "[--each LIST|all [--jobs N]] [VERSION [cudnn@VERSION]] [--] COMMAND [ARGS...]",
			SkipFlagParsing: true,
			Description: `--each 11.8,12.4,13.0 (or --each all) runs the command once per CUDA
version, each with its own environment and CUDAENV_VERSION, one after
another; --jobs N runs N at a time, each run's output kept in a log and
shown, prefixed with its version, when it ends. A {version} in the
arguments becomes each run's version (e.g. -B build-{version}). A table of
exit statuses and times ends it; the exit status is 1 if any run failed.`,
			Action: func(c *cli.Context) error {
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

// exportVars is the variables an activation sets, with their new values,
// for tools that read values rather than run shell code: cudaenv's own
// state stays out, CUDAENV_VERSION goes in (so cudaenv in later steps
// agrees), and PATH only where withPath (GitHub takes it separately).
func exportVars(e *env, changes []envdiff.Change, r activate.Resolved, withPath bool) map[string]string {
	vars := map[string]string{}
	for _, ch := range changes {
		if ch.Unset || ch.Name == envdiff.StateVar || (!withPath && strings.EqualFold(ch.Name, "PATH")) {
			continue
		}
		vars[ch.Name] = ch.Value
	}
	if r.Selection.System() {
		vars[resolve.EnvVar] = "system"
	} else if label := r.Label(); label != "" {
		vars[resolve.EnvVar] = label
	}
	return vars
}

// exportGitHub prints the $GITHUB_ENV lines, or with write appends them
// and the PATH entries to the files GitHub Actions names.
func exportGitHub(e *env, changes []envdiff.Change, r activate.Resolved, write bool) error {
	envText := export.GitHubEnv(exportVars(e, changes, r, false))
	if !write {
		fmt.Fprint(e.stdout, envText)
		return nil
	}
	var pathDirs []string
	if !r.Selection.System() {
		pathDirs = activate.Want(r, e.goos).Prepend["PATH"]
	}
	for _, f := range []struct{ name, text string }{{"GITHUB_ENV", envText}, {"GITHUB_PATH", export.GitHubPath(pathDirs)}} {
		target := e.vars[f.name]
		if target == "" {
			return fmt.Errorf("env --github: %s is not set; this runs inside a GitHub Actions step (elsewhere use --format github)", f.name)
		}
		if err := appendFile(target, f.text); err != nil {
			return fmt.Errorf("env --github: %s: %w", f.name, err)
		}
	}
	fmt.Fprintf(e.stdout, "exported %s to later steps\n", r.Label())
	return nil
}

func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// cmakeOf is what a CMake initial cache points at: nvcc only where the
// toolkit has one, cuDNN's library file as its find modules expect it.
func cmakeOf(r activate.Resolved, goos string) export.CMake {
	var c export.CMake
	if t := r.CUDA; t != nil {
		c.ToolkitRoot = t.Path
		nvcc := filepath.Join(t.Path, "bin", "nvcc")
		if goos == "windows" {
			nvcc += ".exe"
		}
		if fi, err := os.Stat(nvcc); err == nil && !fi.IsDir() {
			c.Compiler = nvcc
		}
	}
	if d := r.Cudnn; d != nil {
		c.CudnnRoot, c.CudnnInclude = d.Path, filepath.Join(d.Path, "include")
		names := []string{"lib/libcudnn.so", fmt.Sprintf("lib/libcudnn.so.%d", d.Version.Major())}
		if goos == "windows" {
			names = []string{"lib/x64/cudnn.lib", "lib/cudnn.lib"}
		}
		for _, n := range names {
			if _, err := os.Stat(filepath.Join(d.Path, n)); err == nil {
				c.CudnnLibrary = filepath.Join(d.Path, filepath.FromSlash(n))
				break
			}
		}
	}
	return c
}
