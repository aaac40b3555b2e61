package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cudaenv/cudaenv/internal/activate"
	"github.com/cudaenv/cudaenv/internal/envdiff"
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
				fmt.Fprint(e.stdout, sh.Init(selfPath(e)))
				return nil
			},
		},
		{
			Name:      "use",
			Usage:     "select versions for the current shell (needs the shell integration)",
			ArgsUsage: "VERSION [cudnn@VERSION] | system | --unset",
			Description: `Sets CUDAENV_VERSION in this shell, which outranks .cuda-version files
until the shell exits or "cudaenv use --unset" hands selection back to them.
"cudaenv use system" steps aside in this shell.`,
			SkipFlagParsing: true,
			Action: func(c *cli.Context) error {
				return fmt.Errorf("use changes the current shell, so it needs the shell integration: add %s to %s and open a new shell; or run one command with: cudaenv exec %s -- COMMAND",
					setupLine(e), setupFile(e), strings.Join(c.Args().Slice(), " "))
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
				return shellUse(e, c.Args().Slice())
			},
		},
	}
}

func userShell(e *env) string {
	if e.goos == "windows" {
		return "pwsh"
	}
	switch filepath.Base(e.vars["SHELL"]) {
	case "zsh":
		return "zsh"
	case "fish":
		return "fish"
	}
	return "bash"
}

func setupLine(e *env) string {
	switch userShell(e) {
	case "fish":
		return "'cudaenv init fish | source'"
	case "pwsh":
		return "'cudaenv init pwsh | Out-String | Invoke-Expression'"
	}
	return `'eval "$(cudaenv init ` + userShell(e) + `)"'`
}

func setupFile(e *env) string {
	switch userShell(e) {
	case "zsh":
		return "~/.zshrc"
	case "fish":
		return "~/.config/fish/config.fish"
	case "pwsh":
		return "$PROFILE"
	}
	return "~/.bashrc"
}

func shellVars(changes []envdiff.Change) []shell.Var {
	out := make([]shell.Var, len(changes))
	for i, c := range changes {
		out[i] = shell.Var{Name: c.Name, Value: c.Value, Unset: c.Unset}
	}
	return out
}

// hookEnv prints what the prompt hook evaluates: the changes for the
// current directory and a new __cudaenv_check. A selection that cannot be
// activated is reported on stderr once; the shell then steps aside.
func hookEnv(e *env, shellName string) error {
	sh, err := shell.Get(shellName)
	if err != nil {
		return err
	}
	out := activate.Compute(activate.Input{Dir: e.cwd, Env: e.vars, Dirs: e.dirs, GOOS: e.goos})
	if out.Err != nil {
		fmt.Fprintf(e.stderr, "cudaenv: %s\n", out.Err)
	} else {
		warnIfNewlyActive(e, out.Resolved)
	}
	fmt.Fprint(e.stdout, shell.Render(sh, shellVars(out.Changes))+sh.Check(checkFor(e, out.Watch)))
	return nil
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
	rest := args[1:]
	if len(rest) == 0 {
		return errors.New("use needs a version, e.g. cudaenv use 12.4 (or cudaenv use --unset to hand selection back to .cuda-version files)")
	}
	vars := make(envdiff.Env, len(e.vars))
	for k, v := range e.vars {
		vars[k] = v
	}
	var code strings.Builder
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
		specs, err := resolve.Parse(resolve.EnvVar, []byte(text))
		if err != nil {
			return fmt.Errorf("use: %s", strings.TrimPrefix(err.Error(), resolve.EnvVar+": "))
		}
		// Refuse before changing anything if it cannot be activated.
		if _, err := activate.Resolve(e.store(), resolve.Selection{Specs: specs}); err != nil {
			return err
		}
		vars[resolve.EnvVar] = text
		code.WriteString(sh.Set(resolve.EnvVar, text))
	}
	out := activate.Compute(activate.Input{Dir: e.cwd, Env: vars, Dirs: e.dirs, GOOS: e.goos})
	if out.Err != nil {
		fmt.Fprintf(e.stderr, "cudaenv: %s\n", out.Err)
	} else {
		warnIfNewlyActive(e, out.Resolved)
	}
	code.WriteString(shell.Render(sh, shellVars(out.Changes)))
	code.WriteString(sh.Check(checkFor(e, out.Watch)))
	fmt.Fprint(e.stdout, code.String())
	return nil
}

// checkFor turns a watch list into the shell check, writing the mtime
// reference files that test -nt needs.
func checkFor(e *env, w resolve.Watch) shell.Check {
	c := shell.Check{Dir: w.Dir, EnvName: resolve.EnvVar, EnvSet: w.EnvSet, EnvValue: w.EnvValue}
	for _, f := range w.Files {
		sf := shell.File{Path: f.Path, Exists: f.Exists, ModTime: f.ModTime}
		if f.Exists {
			sf.Ref = mtimeRef(e.dirs.Stamps(), f.ModTime)
		}
		c.Files = append(c.Files, sf)
	}
	return c
}

// mtimeRef returns an empty file whose mtime is t, named after t so that
// every shell and every watched file with that mtime can share it. If it
// cannot be made, "" makes the check fail and the hook run each prompt.
func mtimeRef(dir string, t time.Time) string {
	p := filepath.Join(dir, strconv.FormatInt(t.UnixNano(), 10))
	if fi, err := os.Stat(p); err == nil && fi.ModTime().Equal(t) {
		return p
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return ""
	}
	pruneRefs(dir)
	f, err := os.CreateTemp(dir, ".ref-")
	if err != nil {
		return ""
	}
	f.Close()
	if os.Chtimes(f.Name(), t, t) != nil || os.Rename(f.Name(), p) != nil {
		os.Remove(f.Name())
		return ""
	}
	return p
}

// maxRefs bounds the stamps folder. Past it every reference is removed: a
// shell whose reference is gone sees its check fail once (test -nt is true
// against a missing file) and the hook makes a new one.
const maxRefs = 1000

func pruneRefs(dir string) {
	f, err := os.Open(dir)
	if err != nil {
		return
	}
	names, _ := f.Readdirnames(maxRefs + 1)
	f.Close()
	if len(names) <= maxRefs {
		return
	}
	for _, n := range names {
		os.Remove(filepath.Join(dir, n))
	}
}
