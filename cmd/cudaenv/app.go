package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/cudaenv/cudaenv/internal/dirs"
	"github.com/cudaenv/cudaenv/internal/envdiff"
	"github.com/cudaenv/cudaenv/internal/hookenv"
	"github.com/cudaenv/cudaenv/internal/query"
	"github.com/cudaenv/cudaenv/shims"
	"github.com/cudaenv/cudaenv/store"
)

// appVersion is set at build time with -ldflags "-X main.appVersion=…".
var appVersion = "0.1.0-dev"

// env is everything a command may use from the outside world. Commands read
// the environment, the working directory and the streams only from here.
type env struct {
	args   []string
	vars   envdiff.Env
	dirs   dirs.Dirs
	cwd    string
	goos   string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	config map[string]string // the settings file, read on first use
	// dirsErr refuses the folders the environment names (dirs.FromEnv):
	// every command stops on it; the prompt hook says it and steps aside.
	dirsErr error
}

func (e *env) lookup(k string) (string, bool) { v, ok := e.vars[k]; return v, ok }

// store is the user's store, with the system store beside it when one
// is set up; a lock another cudaenv holds is announced on stderr while
// this one waits.
func (e *env) store() *store.Store {
	st := store.New(e.dirs)
	st.Wait = e.stderr
	st.Warn = func(w string) { hookenv.Warn(e.stderr, w) }
	return st
}

// storeFor is the system store, for an admin's --system, else the
// user's.
func (e *env) storeFor(system bool) (*store.Store, error) {
	if !system {
		return e.store(), nil
	}
	// dirs ignores a relative folder (it would name another store in
	// every directory); an admin is told.
	v, err := e.setting("system_root")
	if err != nil {
		return nil, err
	}
	if v != "" && !filepath.IsAbs(v) {
		return nil, fmt.Errorf("--system: the system store %q (CUDAENV_SYSTEM_ROOT or system_root in the settings file) is not an absolute folder; use one such as /opt/cudaenv", v)
	}
	st, err := store.NewSystem(e.dirs)
	if err != nil {
		return nil, fmt.Errorf("--system: %w", err)
	}
	st.Wait = e.stderr
	return st, nil
}

// systemWriteErr adds what to do to an error of an admin's --system
// command that the system store refused: it names the store and who may
// write it.
func systemWriteErr(e *env, err error, system bool) error {
	if err == nil || !system || !(errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS)) {
		return err
	}
	return fmt.Errorf("%w; you cannot write the system store %s: run this as its admin (the owner of that folder), or leave out --system to use your own store", err, e.dirs.System)
}

// query is the environment as the read-only commands take it.
func (e *env) query() *query.In {
	return &query.In{Vars: e.vars, Dirs: e.dirs, Cwd: e.cwd, GOOS: e.goos, Stdout: e.stdout, Stderr: e.stderr}
}

// run is main without the process: it returns the exit code.
func run(args []string, environ []string, stdin io.Reader, stdout, stderr io.Writer) int {
	// Called as nvcc, ptxas, …: a shim. Nothing else runs on that path.
	if isShimCall(args, environ) {
		return runShim(args, environ, stderr)
	}
	e := &env{args: args, vars: envdiff.ParseEnv(environ, runtime.GOOS), goos: runtime.GOOS, stdin: stdin, stdout: stdout, stderr: stderr}
	e.dirs, e.dirsErr = dirs.FromEnv(e.lookup)
	if wd, err := os.Getwd(); err == nil {
		e.cwd = wd
	} else {
		e.cwd = e.vars["PWD"]
	}
	// The prompt hook runs often: answer it before building the CLI.
	if len(args) >= 3 && args[1] == "hook-env" {
		return report(e, hookEnv(e, args[2]))
	}
	// The plain forms of the read-only commands skip building the CLI;
	// cudaenv-shim answers them with the same code (internal/query).
	if cmd, ok := query.Parse(args[min(len(args), 1):]); ok {
		if e.dirsErr != nil {
			return report(e, e.dirsErr)
		}
		return report(e, cmd(e.query()))
	}
	if e.dirsErr != nil {
		return report(e, e.dirsErr)
	}
	app := newApp(e)
	return report(e, app.Run(interspersed(app, args)))
}

// report prints an error once, as "cudaenv: …" with control characters
// escaped, and picks the exit code (query.Report).
func report(e *env, err error) int {
	err = noSpaceHint(err)
	addHintFlags(e, err)
	return query.Report(e.stderr, err)
}

func newApp(e *env) *cli.App {
	app := &cli.App{
		Name:            "cudaenv",
		Usage:           "install CUDA toolkits and cuDNN side by side and switch between them",
		Version:         appVersion,
		Writer:          e.stdout,
		ErrWriter:       e.stderr,
		HideHelpCommand: true,
		Suggest:         true,
		ExitErrHandler:  func(*cli.Context, error) {},
		OnUsageError:    usageError("cudaenv"),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return unknownCommand(c.App.Commands, "cudaenv", c.Args().First())
			}
			return cli.ShowAppHelp(c)
		},
		Commands: commands(e),
	}
	// With a command named help, urfave/cli adds no --help flag itself.
	app.Commands = append(app.Commands, helpCommand())
	app.Flags = append(app.Flags, cli.HelpFlag)
	sort.Sort(cli.CommandsByName(app.Commands))
	setUsageErrors(app.Commands, "cudaenv")
	return app
}

// setUsageErrors gives every command a usage-error text (urfave/cli does
// not inherit the app's): one lowercase line naming the help to read.
func setUsageErrors(cmds []*cli.Command, parent string) {
	for _, c := range cmds {
		path := parent + " " + c.Name
		if c.OnUsageError == nil {
			c.OnUsageError = usageError(path)
		}
		// "cudaenv help COMMAND" is the one help command.
		c.HideHelpCommand = true
		setUsageErrors(c.Subcommands, path)
	}
}

func usageError(path string) cli.OnUsageErrorFunc {
	return func(c *cli.Context, err error, _ bool) error {
		msg := lower(err.Error())
		// urfave/cli says `invalid value "abc" for flag -jobs: parse error`.
		if m := reInvalidFlagValue().FindStringSubmatch(msg); m != nil {
			return fmt.Errorf("%s; see: %s --help", flagValueError(c, m[2], m[1]), path)
		}
		// urfave/cli says "flag provided but not defined: -jbos".
		if bad, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
			name := strings.TrimLeft(bad, "-")
			dash := "--"
			if len(name) == 1 {
				dash = "-"
			}
			msg = fmt.Sprintf("unknown flag %q", dash+name)
			if near := nearest(name, flagNames(c)); near != "" {
				return fmt.Errorf("%s; did you mean --%s? see: %s --help", msg, near, path)
			}
		}
		return fmt.Errorf("%s; see: %s --help", msg, path)
	}
}

var reInvalidFlagValue = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^invalid value "(.*)" for flag -([a-z0-9-]+): `)
})

// flagValueError says what a flag takes when its value does not parse:
// "--jobs takes a whole number, e.g. --jobs 4; "abc" is not one".
func flagValueError(c *cli.Context, name, value string) string {
	dash := "--"
	if len(name) == 1 {
		dash = "-"
	}
	flag := dash + name
	var f cli.Flag
	flags := c.App.Flags
	if c.Command != nil && c.Command.Name != "" {
		flags = c.Command.Flags
	}
	for _, x := range flags {
		if slices.Contains(x.Names(), name) {
			f = x
		}
	}
	switch f.(type) {
	case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag, *cli.Uint64Flag:
		example := map[string]string{"jobs": "4", "cuda-major": "13", "cudnn-for": "12"}[name]
		if example == "" {
			example = "2"
		}
		return fmt.Sprintf("%s takes a whole number, e.g. %s %s; %q is not one", flag, flag, example, value)
	case *cli.DurationFlag:
		return fmt.Sprintf("%s takes a duration, e.g. %s 30s; %q is not one", flag, flag, value)
	}
	return fmt.Sprintf("%s: %q is not a value it takes", flag, value)
}

// flagNames is every flag name the context's command (or the app) takes.
func flagNames(c *cli.Context) []string {
	flags := c.App.Flags
	if c.Command != nil && c.Command.Name != "" {
		flags = c.Command.Flags
	}
	var names []string
	for _, f := range flags {
		names = append(names, f.Names()...)
	}
	return names
}

// unknownCommand is the error for a command word nobody knows, with the
// nearest known command as git and mise suggest it.
func unknownCommand(cmds []*cli.Command, path, word string) error {
	var names []string
	for _, c := range cmds {
		if !c.Hidden {
			names = append(names, c.Names()...)
		}
	}
	if near := nearest(word, names); near != "" {
		return fmt.Errorf("unknown command %q; did you mean %s? see: %s --help", word, near, path)
	}
	return fmt.Errorf("unknown command %q; see: %s --help", word, path)
}

// nearest is the candidate closest to word by edit distance (swaps count
// once), if it is close enough to be a typo: at most a third of the word.
// Of candidates as close, the one sharing the most letters in order wins
// (--sorce is --source, not --force).
func nearest(word string, candidates []string) string {
	best, bestDist := "", len(word)/3+1
	if bestDist > 3 {
		bestDist = 3
	}
	low := strings.ToLower(word)
	for _, c := range candidates {
		d := editDistance(low, c)
		if d == bestDist && best != "" && commonLetters(low, c) > commonLetters(low, best) {
			best = c
			continue
		}
		if d < bestDist || (d == bestDist && best == "" && d <= 2) {
			if d == 0 {
				return c
			}
			best, bestDist = c, d
		}
	}
	if best != "" && bestDist > len(word)/2 {
		return ""
	}
	return best
}

// commonLetters is the length of the longest common subsequence of a and b.
func commonLetters(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev, cur := make([]int, len(rb)+1), make([]int, len(rb)+1)
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			if ra[i-1] == rb[j-1] {
				cur[j] = prev[j-1] + 1
			} else {
				cur[j] = max(prev[j], cur[j-1])
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// editDistance is the optimal-string-alignment distance: insertions,
// deletions, substitutions and swaps of neighbours each cost one.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// helpCommand is "cudaenv help [COMMAND [SUBCOMMAND]]": the same text as
// "cudaenv COMMAND SUBCOMMAND --help".
func helpCommand() *cli.Command {
	return &cli.Command{
		Name:      "help",
		Usage:     "show the commands, or one command's help",
		ArgsUsage: "[COMMAND [SUBCOMMAND]]",
		Action: func(c *cli.Context) error {
			args := c.Args().Slice()
			if len(args) == 0 {
				return cli.ShowAppHelp(c)
			}
			cmds, path := c.App.Commands, "cudaenv"
			for _, a := range args {
				var found *cli.Command
				for _, k := range cmds {
					if k.HasName(a) && !k.Hidden {
						found = k
					}
				}
				if found == nil {
					return unknownCommand(cmds, path, a)
				}
				cmds, path = found.Subcommands, path+" "+found.Name
			}
			return c.App.Run(append(append([]string{"cudaenv"}, args...), "--help"))
		},
	}
}

// asksHelp reports whether the arguments of a command that takes them
// unparsed (use, exec) start with -h or --help, which it still answers.
func asksHelp(args []string) bool {
	return len(args) > 0 && (args[0] == "-h" || args[0] == "--help")
}

func lower(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// selfPath is the absolute path of this binary as it was invoked, so the
// hooks call back the same program (symlinks kept, for shims and tests).
func selfPath(e *env) string {
	arg0 := e.args[0]
	if !strings.ContainsRune(arg0, filepath.Separator) && !strings.ContainsRune(arg0, '/') {
		if p, err := lookPath(arg0, e.vars["PATH"], e.goos); err == nil {
			arg0 = p
		} else if p, err := os.Executable(); err == nil {
			return p
		}
	}
	if abs, err := filepath.Abs(arg0); err == nil {
		return abs
	}
	return arg0
}

// lookPath finds name on a PATH given as a value, not the process's own.
func lookPath(name, path, goos string) (string, error) {
	if p := shims.FindOnPath(name, path, goos, nil, nil); p != "" {
		return p, nil
	}
	return "", exec.ErrNotFound
}

func isExecutable(p, goos string) bool {
	fi, err := os.Stat(p)
	if err != nil || fi.IsDir() {
		return false
	}
	return goos == "windows" || fi.Mode()&0o111 != 0
}

func commands(e *env) []*cli.Command {
	var cmds []*cli.Command
	cmds = append(cmds, selectionCommands(e)...)
	cmds = append(cmds, shellCommands(e)...)
	cmds = append(cmds, storeCommands(e)...)
	cmds = append(cmds, envCommands(e)...)
	cmds = append(cmds, installCommands(e)...)
	cmds = append(cmds, doctorCommands(e)...)
	cmds = append(cmds, inspectCommands(e)...)
	cmds = append(cmds, shimCommands(e)...)
	cmds = append(cmds, completionCommands(e)...)
	cmds = append(cmds, moduleCommands(e)...)
	cmds = append(cmds, bundleCommands(e)...)
	cmds = append(cmds, imageCommands(e)...)
	cmds = append(cmds, configCommands(e)...)
	addInitShims(e, cmds)
	return cmds
}

// interspersed moves a command's flags before its arguments, so that
// "cudaenv uninstall 12.4.1 --force" works as users type it; urfave/cli
// stops reading flags at the first argument.
func interspersed(app *cli.App, args []string) []string {
	if len(args) < 3 {
		return args
	}
	prefix := []string{args[0]}
	rest := args[1:]
	cmds := app.Commands
	var cmd *cli.Command
	for len(rest) > 0 {
		var next *cli.Command
		for _, c := range cmds {
			if c.HasName(rest[0]) {
				next = c
			}
		}
		if next == nil {
			break
		}
		cmd = next
		prefix = append(prefix, rest[0])
		rest = rest[1:]
		cmds = cmd.Subcommands
	}
	if cmd == nil || cmd.SkipFlagParsing {
		return args
	}
	takesValue := map[string]bool{}
	for _, f := range cmd.Flags {
		_, isBool := f.(*cli.BoolFlag)
		for _, n := range f.Names() {
			takesValue[n] = !isBool
		}
	}
	var flags, positional []string
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" {
			positional = append(positional, rest[i:]...)
			break
		}
		if len(a) > 1 && a[0] == '-' {
			flags = append(flags, a)
			name := strings.TrimLeft(a, "-")
			if !strings.Contains(name, "=") && takesValue[name] && i+1 < len(rest) {
				i++
				flags = append(flags, rest[i])
			}
			continue
		}
		positional = append(positional, a)
	}
	out := append(prefix, flags...)
	return append(out, positional...)
}

// Flag help shows one default, and none where the zero value is no
// default at all (urfave/cli prints "(default: false)", "(default: 0)").
var plainFlagStringer = cli.FlagStringer

func init() { cli.FlagStringer = flagWithoutZeroDefault }

func flagWithoutZeroDefault(f cli.Flag) string {
	s := plainFlagStringer(f)
	for _, zero := range []string{" (default: false)", " (default: 0)", ` (default: "")`} {
		s = strings.TrimSuffix(s, zero)
	}
	return s
}
