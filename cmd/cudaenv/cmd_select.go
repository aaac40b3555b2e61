package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cudaenv/cudaenv/internal/activate"
	"github.com/cudaenv/cudaenv/internal/atomicfile"
	"github.com/cudaenv/cudaenv/internal/hookenv"
	"github.com/cudaenv/cudaenv/internal/query"
	"github.com/cudaenv/cudaenv/internal/resolve"
	"github.com/cudaenv/cudaenv/internal/version"
)

func selectionCommands(e *env) []*cli.Command {
	return []*cli.Command{
		{
			Name:  "current",
			Usage: "print the selected versions and where the selection comes from",
			Action: func(c *cli.Context) error {
				return query.Current(e.query())
			},
		},
		{
			Name:      "which",
			Usage:     "print the full path of a toolkit command for the current selection",
			ArgsUsage: "COMMAND",
			Action: func(c *cli.Context) error {
				return query.Which(e.query(), c.Args().Slice())
			},
		},
		{
			Name:      "local",
			Usage:     "pin versions for this directory and below (writes .cuda-version)",
			ArgsUsage: "VERSION [cudnn@VERSION]",
			Flags: []cli.Flag{&cli.BoolFlag{Name: "unset", Usage: "remove the .cuda-version file here"},
				&cli.StringFlag{Name: "libraries", Usage: "off: select the toolkit for building only and leave LD_LIBRARY_PATH to a framework's wheels (writes libraries=off)"}},
			Action: func(c *cli.Context) error {
				return writeSelection(e, c, filepath.Join(e.cwd, resolve.FileName), "local")
			},
		},
		{
			Name:      "global",
			Usage:     "set the default versions used where nothing else selects one",
			ArgsUsage: "VERSION [cudnn@VERSION]",
			Flags: []cli.Flag{&cli.BoolFlag{Name: "unset", Usage: "remove the global default"},
				&cli.StringFlag{Name: "libraries", Usage: "off: select the toolkit for building only and leave LD_LIBRARY_PATH to a framework's wheels (writes libraries=off)"}},
			Action: func(c *cli.Context) error {
				return writeSelection(e, c, e.dirs.GlobalFile(), "global")
			},
		},
	}
}

// errNothingSelected explains the precedence and how to select a version.
var errNothingSelected = query.ErrNothingSelected

// resolveHere resolves the selection for the working directory, with a
// warning for each version file skipped on the way.
func resolveHere(e *env) (activate.Resolved, error) {
	return query.ResolveHere(e.query())
}

// writeSelection implements local and global: print, set or unset a file.
func writeSelection(e *env, c *cli.Context, path, verb string) error {
	if c.Bool("unset") {
		if c.NArg() > 0 {
			return fmt.Errorf("%s --unset takes no versions", verb)
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s --unset: %w", verb, err)
		}
		return nil
	}
	if c.NArg() == 0 && !c.IsSet("libraries") {
		specs, opts, err := resolve.ReadFileOptions(path)
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("no %s version set (%s does not exist); set one with: cudaenv %s 12.4", verb, path, verb)
		}
		if err != nil {
			return err
		}
		fmt.Fprintln(e.stdout, joinSpecs(specs, opts))
		return nil
	}
	words := c.Args().Slice()
	setting := slices.ContainsFunc(words, resolve.IsOption)
	if v := c.String("libraries"); c.IsSet("libraries") {
		words, setting = append(words, resolve.LibrariesKey+"="+v), true
	}
	// --libraries alone changes the setting of the versions there; new
	// versions alone keep the setting there.
	if c.NArg() == 0 {
		oldSpecs, _, err := resolve.ReadFileOptions(path)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		for _, sp := range oldSpecs {
			words = append(words, sp.String())
		}
	} else if !setting {
		if _, oldOpts, err := resolve.ReadFileOptions(path); err == nil {
			words = append(words, oldOpts.Words()...)
		}
	}
	text := strings.Join(words, " ")
	specs, opts, err := resolve.ParseOptions("", []byte(text))
	if err != nil {
		var se *resolve.SyntaxError
		if errors.As(err, &se) {
			se.File = verb
			se.Line = 0
		}
		return err
	}
	if len(specs) == 0 {
		return fmt.Errorf("%s needs a version, e.g. cudaenv %s 12.4", verb, verb)
	}
	if _, err := activate.Resolve(e.store(), resolve.Selection{Specs: specs}); err != nil {
		addHintFlags(e, err)
		hookenv.Warn(e.stderr, err.Error())
	}
	// Comments in an existing file are the user's: only the specs change.
	if err := atomicfile.Write(path, resolve.Rewrite(readPinForEdit(path), joinSpecs(specs, opts)), 0o644); err != nil {
		return fmt.Errorf("%s: %w", verb, err)
	}
	return nil
}

// readPinForEdit is the current text of a pin file that is a regular
// file of sane size, else nothing (then it is simply replaced).
func readPinForEdit(path string) []byte {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > 64<<10 {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return data
}

func joinSpecs(specs []version.Spec, opts resolve.Options) string {
	words := make([]string, len(specs))
	for i, s := range specs {
		words[i] = s.String()
	}
	return strings.Join(append(words, opts.Words()...), " ")
}
