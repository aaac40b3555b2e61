package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cudaenv/cudaenv/shell"
	"github.com/cudaenv/cudaenv/shims"
)

// Installing, uninstalling and linking refresh the shims.
func init() { afterStoreChange = rehashAfterStoreChange }

func shimCommands(e *env) []*cli.Command {
	bash, _ := shell.Get("bash")
	return []*cli.Command{
		{
			Name:  "rehash",
			Usage: "refresh the shims: one per command of any installed or linked toolkit (done after install, uninstall and link)",
			Description: `Shims let programs that never run the shell hook (IDEs, make, CMake,
cron, ssh) use the version selected for their directory. Put the shims
folder first on PATH, e.g. in ~/.profile:
    export PATH=` + bash.Quote(e.dirs.Shims()) + `":$PATH"
or use: eval "$(cudaenv init --shims bash)"

Every command NVIDIA ships in a toolkit (nvcc, ptxas, nsys, …) gets a
shim. Any other executable in a toolkit's bin (a linked conda env's
python3, a linked /usr's ls) gets one only when PATH has no command of
that name, so a shim never hides a program you already have. Where
nothing is selected, a shim runs the next command of its name on PATH.`,
			Action: func(c *cli.Context) error {
				if c.NArg() > 0 {
					return errors.New("rehash takes no arguments")
				}
				rep, err := rehash(e)
				if err != nil {
					return err
				}
				if target, fallback := shimTarget(e); fallback {
					fmt.Fprintf(e.stderr, "cudaenv: note: %s is not installed beside %s, so the shims run cudaenv itself, which starts several times slower; install both with: go install ./cmd/...\n", shimBinary(e.goos), target)
				}
				fmt.Fprintf(e.stdout, "%d shims in %s\n", len(rep.Added)+rep.Kept, e.dirs.Shims())
				if len(rep.Added) > 0 {
					fmt.Fprintf(e.stdout, "added: %s\n", strings.Join(rep.Added, " "))
				}
				if len(rep.Removed) > 0 {
					fmt.Fprintf(e.stdout, "removed: %s\n", strings.Join(rep.Removed, " "))
				}
				if n := len(rep.Skipped); n > 0 {
					names := rep.Skipped
					if n > 8 {
						names = append(names[:8:8], "…")
					}
					fmt.Fprintf(e.stdout, "no shim for %d commands that are not CUDA's and are on PATH already: %s\n", n, strings.Join(names, " "))
				}
				return nil
			},
		},
	}
}

func rehash(e *env) (shims.Report, error) {
	target := shimsTarget(e)
	// Shadowing is judged on the user's PATH, as it is without cudaenv.
	return shims.Rehash(e.store(), target, e.goos, shims.UserPath(e.vars, e.goos))
}

// shimBinary is the small program the shims run, installed beside cudaenv.
func shimBinary(goos string) string {
	if goos == "windows" {
		return "cudaenv-shim.exe"
	}
	return "cudaenv-shim"
}

// shimTarget is the binary the shims run: cudaenv-shim from the folder
// cudaenv was started from (on Unix the path as invoked, so that a
// package manager's symlink keeps working across upgrades), else cudaenv
// itself, which answers to shim names too but starts several times
// slower. fallback reports the latter.
func shimTarget(e *env) (target string, fallback bool) {
	self := selfPath(e)
	if e.goos == "windows" {
		// Shims are hard links or copies there, so name the file itself.
		if p, err := os.Executable(); err == nil {
			self = p
		}
	}
	cands := []string{filepath.Join(filepath.Dir(self), shimBinary(e.goos))}
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			cands = append(cands, filepath.Join(filepath.Dir(real), shimBinary(e.goos)))
		}
	}
	for _, c := range cands {
		if isExecutable(c, e.goos) {
			return c, false
		}
	}
	return self, true
}

// fastShimBinary is the shims' fast path (shims/fastshim, in C), which
// make install builds on Linux where a C compiler is present. It runs the
// common shim call itself and hands every other to the cudaenv-shim
// beside its real file.
const fastShimBinary = "cudaenv-fastshim"

// shimsTarget is what the shims point at: cudaenv-fastshim when it is
// installed beside cudaenv-shim (and that cudaenv-shim is beside its real
// file too, and not newer than it), else shimTarget's binary. The prompt hook and the shell
// function keep cudaenv-shim, which answers them.
func shimsTarget(e *env) string {
	target, fallback := shimTarget(e)
	if fallback || e.goos != "linux" {
		return target
	}
	fast := filepath.Join(filepath.Dir(target), fastShimBinary)
	if !isExecutable(fast, e.goos) {
		return target
	}
	real, err := filepath.EvalSymlinks(fast)
	if err != nil {
		return target
	}
	goShim := filepath.Join(filepath.Dir(real), shimBinary(e.goos))
	if !isExecutable(goShim, e.goos) {
		return target
	}
	// make install builds it after cudaenv-shim; one older than its
	// cudaenv-shim was left behind by an upgrade without it (it hands
	// every call on then, at the cost of one more start).
	fi, err1 := os.Stat(real)
	gi, err2 := os.Stat(goShim)
	if err1 != nil || err2 != nil || gi.ModTime().After(fi.ModTime()) {
		return target
	}
	return fast
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
