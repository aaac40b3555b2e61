package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cudaenv/cudaenv/internal/activate"
	"github.com/cudaenv/cudaenv/internal/envdiff"
	"github.com/cudaenv/cudaenv/internal/hookenv"
	"github.com/cudaenv/cudaenv/internal/query"
	"github.com/cudaenv/cudaenv/internal/resolve"
	"github.com/cudaenv/cudaenv/shell"
)

func shellCommands(e *env) []*cli.Command {
	return []*cli.Command{
		{
			Name:      "init",
			Usage:     "print the shell integration to load from your shell's startup file",
			ArgsUsage: "bash|zsh|fish|pwsh",
			Description: `bash:  eval "$(cudaenv init bash)"                      in ~/.bashrc
zsh:   eval "$(cudaenv init zsh)"                       in ~/.zshrc
fish:  cudaenv init fish | source                       in ~/.config/fish/config.fish
pwsh:  cudaenv init pwsh | Out-String | Invoke-Expression   in $PROFILE`,
			Action: func(c *cli.Context) error {
				if c.NArg() != 1 {
					return fmt.Errorf("init needs a shell: %s; e.g. eval \"$(cudaenv init bash)\"", strings.Join(shell.Names(), ", "))
				}
				sh, err := shell.Get(c.Args().First())
				if err != nil {
					return err
				}
				// The prompt hook runs cudaenv-shim when it is installed
				// beside cudaenv: it answers hook-env too, and starts faster.
				hook, _ := shimTarget(e)
				fmt.Fprint(e.stdout, sh.Init(selfPath(e), hook))
				return nil
			},
		},
		{
			Name:      "use",
			Usage:     "select versions for the current shell (needs the shell integration)",
			ArgsUsage: "[--libraries=off] VERSION [cudnn@VERSION] | system | --unset",
			Description: `Sets CUDAENV_VERSION in this shell, which outranks .cuda-version files
until the shell exits or "cudaenv use --unset" hands selection back to them.
"cudaenv use system" steps aside in this shell. --quiet (-q) leaves out the
line that says what it selected. --libraries=off selects the toolkit for
building only: LD_LIBRARY_PATH is left alone, so a framework installed from
wheels (PyTorch, JAX) keeps loading its own nvidia-* libraries.`,
			// The shell function parses these (shell-use); listed for help.
			Flags: []cli.Flag{
				&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "leave out the line that says what it selected"},
				&cli.BoolFlag{Name: "unset", Usage: "hand selection back to .cuda-version files and the global default"},
				&cli.StringFlag{Name: "libraries", Usage: "`off` selects the toolkit for building only, leaving LD_LIBRARY_PATH to a framework's wheels; on undoes that", DefaultText: "on"},
			},
			SkipFlagParsing: true,
			Action: func(c *cli.Context) error {
				if asksHelp(c.Args().Slice()) {
					return cli.ShowCommandHelp(c, "use")
				}
				specs := strings.Join(c.Args().Slice(), " ")
				if specs == "" || strings.HasPrefix(specs, "-") {
					specs = "VERSION"
				}
				sh := callingShell(e)
				return fmt.Errorf("use changes the current shell, so it needs the shell integration: add %s to %s and open a new shell; or run one command with: cudaenv exec %s -- COMMAND",
					setupLine(sh), setupFile(sh), specs)
			},
		},
		{
			Name:            "hook-env",
			Hidden:          true,
			SkipFlagParsing: true,
			Action: func(c *cli.Context) error {
				return hookEnv(e, c.Args().First())
			},
		},
		{
			Name:            "shell-use",
			Hidden:          true,
			SkipFlagParsing: true,
			Action: func(c *cli.Context) error {
				if args := c.Args().Slice(); len(args) > 1 && asksHelp(args[1:]) {
					// The shell function evaluates stdout: the help goes to
					// stderr, and nothing changes.
					cli.HelpPrinter(e.stderr, cli.CommandHelpTemplate, c.App.Command("use"))
					return nil
				}
				return shellUse(e, c.Args().Slice())
			},
		},
	}
}

func userShell(e *env) string {
	return query.UserShell(e.vars, e.goos)
}

// callingShell is the shell cudaenv was started from: the parent
// process where the system says (Linux's /proc), else $SHELL.
func callingShell(e *env) string {
	if e.goos == "linux" {
		if comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", os.Getppid())); err == nil {
			switch name := strings.TrimPrefix(strings.TrimSpace(string(comm)), "-"); name {
			case "bash", "zsh", "fish", "pwsh":
				return name
			}
		}
	}
	return userShell(e)
}

func setupLine(sh string) string {
	switch sh {
	case "fish":
		return "'cudaenv init fish | source'"
	case "pwsh":
		return "'cudaenv init pwsh | Out-String | Invoke-Expression'"
	}
	return `'eval "$(cudaenv init ` + sh + `)"'`
}

func setupFile(sh string) string {
	switch sh {
	case "zsh":
		return "~/.zshrc"
	case "fish":
		return "~/.config/fish/config.fish"
	case "pwsh":
		return "$PROFILE"
	}
	return "~/.bashrc"
}

// hookEnv prints what the prompt hook evaluates (see hookenv.Run).
func hookEnv(e *env, shellName string) error {
	sh, err := shell.Get(shellName)
	if err != nil {
		return err
	}
	if e.dirsErr != nil {
		hookenv.Refuse(e.hookInput(sh, e.vars), e.dirsErr, "")
		return nil
	}
	hookenv.Run(e.hookInput(sh, e.vars), "")
	return nil
}

func (e *env) hookInput(sh shell.Shell, vars envdiff.Env) hookenv.Input {
	return hookenv.Input{Shell: sh, Dir: e.cwd, Env: vars, Dirs: e.dirs, GOOS: e.goos, Stdout: e.stdout, Stderr: e.stderr}
}

// shellUse is `cudaenv use` behind the shell function: it prints code that
// sets (or unsets) CUDAENV_VERSION and activates the result.
func shellUse(e *env, args []string) error {
	if len(args) == 0 {
		return errors.New("shell-use needs a shell")
	}
	sh, err := shell.Get(args[0])
	if err != nil {
		return err
	}
	var rest, settings []string
	quiet := false
	for _, a := range args[1:] {
		if a == "-q" || a == "--quiet" {
			quiet = true
		} else if w, ok := strings.CutPrefix(a, "--"); ok && resolve.IsOption(w) {
			settings = append(settings, w)
		} else {
			rest = append(rest, a)
		}
	}
	if len(rest) == 0 && len(settings) > 0 {
		return fmt.Errorf("use --%s needs a version, e.g. cudaenv use --%s 12.4", settings[0], settings[0])
	}
	rest = append(rest, settings...)
	if len(rest) == 0 {
		return errors.New("use needs a version, e.g. cudaenv use 12.4 (or cudaenv use --unset to hand selection back to .cuda-version files)")
	}
	vars := make(envdiff.Env, len(e.vars))
	for k, v := range e.vars {
		vars[k] = v
	}
	var code strings.Builder
	said := "this shell follows .cuda-version files again"
	if len(rest) == 1 && rest[0] == "--unset" {
		delete(vars, resolve.EnvVar)
		code.WriteString(sh.Unset(resolve.EnvVar))
	} else {
		for _, a := range rest {
			if strings.HasPrefix(a, "-") {
				return fmt.Errorf("use: unknown flag %q; use takes versions, system or --unset", a)
			}
		}
		text := strings.Join(rest, " ")
		specs, opts, err := resolve.ParseOptions(resolve.EnvVar, []byte(text))
		if err != nil {
			return fmt.Errorf("use: %s", strings.TrimPrefix(err.Error(), resolve.EnvVar+": "))
		}
		// Refuse before changing anything if it cannot be activated.
		r, err := activate.Resolve(e.store(), resolve.Selection{Specs: specs, Options: opts})
		if err != nil {
			return err
		}
		said = usingLine(r)
		vars[resolve.EnvVar] = text
		code.WriteString(sh.Set(resolve.EnvVar, text))
	}
	if !quiet {
		// stderr: the shell function evaluates stdout.
		fmt.Fprintln(e.stderr, said)
	}
	hookenv.Run(e.hookInput(sh, vars), code.String())
	return nil
}

// usingLine says what "cudaenv use" selected, as nvm use does.
func usingLine(r activate.Resolved) string {
	if r.Selection.System() {
		return "using the system CUDA in this shell (cudaenv steps aside)"
	}
	var what []string
	if r.CUDA != nil {
		what = append(what, "CUDA "+r.CUDA.Version.String())
	}
	if r.Cudnn != nil {
		what = append(what, "cuDNN "+r.Cudnn.Version.String())
	}
	line := "using " + strings.Join(what, " and ") + " in this shell"
	if r.Selection.Options.NoLibraries {
		line += ", for building only (" + resolve.LibrariesOff + ": LD_LIBRARY_PATH is left to the framework's own libraries)"
	}
	return line
}
