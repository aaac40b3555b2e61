package main

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cudaenv/cudaenv/compat"
	"github.com/cudaenv/cudaenv/completions"
	"github.com/cudaenv/cudaenv/internal/config"
	"github.com/cudaenv/cudaenv/internal/install"
	"github.com/cudaenv/cudaenv/internal/version"
	"github.com/cudaenv/cudaenv/shell"
	"github.com/cudaenv/cudaenv/shims"
	"github.com/cudaenv/cudaenv/store"
)

func completionCommands(e *env) []*cli.Command {
	return []*cli.Command{
		{
			Name:      "completion",
			Usage:     "print the tab-completion script for a shell",
			ArgsUsage: "bash|zsh|fish|pwsh",
			Description: `bash:  eval "$(cudaenv completion bash)"                       in ~/.bashrc
zsh:   eval "$(cudaenv completion zsh)"                        in ~/.zshrc, after compinit
fish:  cudaenv completion fish | source                        in ~/.config/fish/config.fish
pwsh:  cudaenv completion pwsh | Out-String | Invoke-Expression   in $PROFILE`,
			Action: func(c *cli.Context) error {
				if c.NArg() != 1 {
					return fmt.Errorf("completion needs a shell: %s; e.g. eval \"$(cudaenv completion bash)\"", strings.Join(completions.Names(), ", "))
				}
				script, err := completions.Get(c.Args().First())
				if err != nil {
					return err
				}
				fmt.Fprint(e.stdout, script)
				return nil
			},
		},
		{
			// The completion scripts' back end; see package completions for
			// the protocol. It never touches the network.
			Name:            "__complete",
			Hidden:          true,
			SkipFlagParsing: true,
			Action: func(c *cli.Context) error {
				words := c.Args().Slice()
				for i, w := range words {
					if !strings.HasPrefix(w, ":") {
						return errors.New("__complete: every word must start with ':'")
					}
					words[i] = w[1:]
				}
				if len(words) == 0 {
					words = []string{""}
				}
				for _, l := range complete(e, c.App.Commands, words) {
					fmt.Fprintln(e.stdout, l)
				}
				return nil
			},
		},
	}
}

// candidate is one completion: a value and what it is.
type candidate struct{ value, desc string }

// complete answers one __complete call. words are the words after
// "cudaenv"; the last one is the word under the cursor.
func complete(e *env, cmds []*cli.Command, words []string) []string {
	cur := words[len(words)-1]
	cands, directive := candidates(e, cmds, words[:len(words)-1], cur)
	if directive != "" {
		return []string{directive}
	}
	var out []string
	seen := map[string]bool{}
	for _, c := range cands {
		if !strings.HasPrefix(c.value, cur) || seen[c.value] || strings.ContainsAny(c.value, "\t\n") {
			continue
		}
		seen[c.value] = true
		if d := strings.Map(noControl, c.desc); d != "" {
			out = append(out, c.value+"\t"+d)
		} else {
			out = append(out, c.value)
		}
	}
	return out
}

func noControl(r rune) rune {
	if r < ' ' || r == 0x7f {
		return ' '
	}
	return r
}

func candidates(e *env, cmds []*cli.Command, prev []string, cur string) ([]candidate, string) {
	// Find the (sub)command: the first words that are not flags.
	var cmd *cli.Command
	var args []string
	for i, w := range prev {
		if strings.HasPrefix(w, "-") && cmd == nil {
			continue // a global flag
		}
		if cmd == nil || (len(cmd.Subcommands) > 0 && len(args) == 0 && !strings.HasPrefix(w, "-")) {
			next := findCommand(cmds, w)
			if cmd != nil {
				next = findCommand(cmd.Subcommands, w)
			}
			if next == nil {
				if cmd == nil {
					return nil, "" // an unknown command
				}
				args = prev[i:]
				break
			}
			cmd = next
			continue
		}
		args = prev[i:]
		break
	}
	if cmd == nil {
		if strings.HasPrefix(cur, "-") {
			return []candidate{{"--help", "show help"}, {"--version", "print the version"}}, ""
		}
		return commandCandidates(cmds), ""
	}
	if len(cmd.Subcommands) > 0 && len(args) == 0 && !strings.HasPrefix(cur, "-") {
		return commandCandidates(cmd.Subcommands), ""
	}

	// A flag's value?
	if n := len(args); n > 0 && !cmd.SkipFlagParsing && !afterDashDash(args) {
		if f := findFlag(cmd, args[n-1]); f != nil && takesValue(f) && !strings.Contains(args[n-1], "=") {
			return flagValues(e, cmd.Name, f.Names()[0])
		}
	}
	if strings.HasPrefix(cur, "-") && !cmd.SkipFlagParsing && !afterDashDash(args) {
		return flagCandidates(cmd), ""
	}
	positional := positionals(cmd, args)

	switch cmd.Name {
	case "use":
		return append(selectionCandidates(e), candidate{"--unset", "hand selection back to .cuda-version files"},
			candidate{"--libraries=off", "select for building only; LD_LIBRARY_PATH is left to a framework's wheels"}), ""
	case "local", "global", "env":
		return selectionCandidates(e), ""
	case "exec":
		// VERSION... [--] COMMAND ARGS...
		if _, command := splitExecArgs(args); len(command) > 0 {
			return nil, completions.Files
		}
		if afterDashDash(args) {
			return nil, completions.Commands
		}
		return append(selectionCandidates(e), candidate{"--", "end of versions; the command follows"}), ""
	case "uninstall":
		if len(positional) == 0 {
			return installedCandidates(e, true), ""
		}
	case "prefix":
		// prefix [VERSION…] or prefix LIBRARY: a selected library's folder.
		out := selectionCandidates(e)
		for _, k := range store.Kinds() {
			if list, _ := e.store().List(k); k.Library() && len(list) > 0 {
				out = append(out, candidate{string(k), "the selected " + version.Tool(k).Title() + "'s folder"})
			}
		}
		return out, ""
	case "get", "set", "unset": // config
		switch {
		case len(positional) == 0:
			var out []candidate
			for _, k := range config.KeyNames() {
				out = append(out, candidate{k, config.Use[k]})
			}
			return out, ""
		case cmd.Name == "set" && len(positional) == 1 && positional[0] == "source":
			return flagValues(e, cmd.Name, "source")
		case cmd.Name == "set" && len(positional) == 1 && positional[0] == "system_root":
			return nil, completions.Dirs
		}
	case "verify":
		return installedCandidates(e, false), ""
	case "which":
		if len(positional) == 0 {
			return toolCandidates(e), ""
		}
	case "install", "export", "image": // bundle export
		return remoteCandidates(e), ""
	case "inspect": // inspect PATH...
		return nil, completions.Files
	case "import": // bundle import FILE
		if len(positional) == 0 {
			return nil, completions.Files
		}
	case "init":
		if len(positional) == 0 {
			return shellCandidates(shell.Names()), ""
		}
	case "completion":
		if len(positional) == 0 {
			return shellCandidates(completions.Names()), ""
		}
	case "link":
		if len(positional) == 0 {
			return nil, completions.Dirs
		}
	}
	return nil, ""
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

func commandCandidates(cmds []*cli.Command) []candidate {
	var out []candidate
	for _, c := range cmds {
		if c.Hidden {
			continue
		}
		out = append(out, candidate{c.Name, c.Usage})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].value < out[j].value })
	return out
}

func findFlag(cmd *cli.Command, word string) cli.Flag {
	name := strings.TrimLeft(word, "-")
	if name == "" || name == word {
		return nil
	}
	name, _, _ = strings.Cut(name, "=")
	for _, f := range cmd.Flags {
		for _, n := range f.Names() {
			if n == name {
				return f
			}
		}
	}
	return nil
}

func takesValue(f cli.Flag) bool {
	_, isBool := f.(*cli.BoolFlag)
	return !isBool
}

func flagCandidates(cmd *cli.Command) []candidate {
	var out []candidate
	for _, f := range cmd.Flags {
		usage := ""
		if u, ok := f.(interface{ GetUsage() string }); ok {
			usage = u.GetUsage()
		}
		for _, n := range f.Names() {
			if len(n) == 1 {
				out = append(out, candidate{"-" + n, usage})
			} else {
				out = append(out, candidate{"--" + n, usage})
			}
		}
	}
	return append(out, candidate{"--help", "show help"})
}

// positionals drops flags (and the values of flags that take one) from
// a command's words.
func positionals(cmd *cli.Command, args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		if strings.HasPrefix(a, "-") && len(a) > 1 && !cmd.SkipFlagParsing {
			if f := findFlag(cmd, a); f != nil && takesValue(f) && !strings.Contains(a, "=") {
				i++
			}
			continue
		}
		out = append(out, a)
	}
	return out
}

func afterDashDash(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return true
		}
	}
	return false
}

func flagValues(e *env, command, name string) ([]candidate, string) {
	switch name {
	case "format":
		if command == "modulefile" {
			return []candidate{{"lua", "Lmod"}, {"tcl", "Environment Modules"}}, ""
		}
		return []candidate{
			{"shell", "code for --shell (default: yours)"},
			{"json", "the changes as JSON"},
			{"github", "lines for $GITHUB_ENV"},
			{"dotenv", "KEY=value lines for docker --env-file"},
			{"cmake", "a script for cmake -C"},
		}, ""
	case "python": // install --for, compat: the CPython whose wheels are read
		var out []candidate
		for _, v := range []string{"3.10", "3.11", install.DefaultPython, "3.13", "3.14"} {
			desc := ""
			if v == install.DefaultPython {
				desc = "the default"
			}
			out = append(out, candidate{v, desc})
		}
		return out, ""
	case "prefix": // image --prefix: a folder inside the image
		return nil, ""
	case "shell":
		return append(shellCandidates(shell.Names()), candidate{"json", "JSON object: name to value, null to unset"}), ""
	case "profile":
		return []candidate{
			{"minimal", "nvcc, cudart, cccl: compile and run"},
			{"extensions", "minimal plus the libraries and headers PyTorch extensions build against"},
			{"default", "the toolkit without drivers, GUI profilers and docs"},
			{"full", "everything NVIDIA ships for the platform"},
		}, ""
	case "cuda-major", "cudnn-for":
		var out []candidate
		list, _ := e.store().List(store.CUDA)
		for _, ent := range list {
			out = append(out, candidate{strconv.Itoa(ent.Version.Major()), "CUDA " + ent.Version.String() + " is installed"})
		}
		return out, ""
	case "platform":
		return []candidate{{"linux-x86_64", ""}, {"linux-sbsa", "Arm servers (Grace)"}, {"linux-aarch64", "Jetson before CUDA 13"}, {"windows-x86_64", ""}}, ""
	case "source":
		return []candidate{{"nvidia", "NVIDIA's redist server"}, {"pypi", "NVIDIA's wheels on the PyPI index"}, {"auto", "NVIDIA's, else PyPI"}}, ""
	case "gpu": // inspect --gpu
		var out []candidate
		for _, a := range compat.Archs() {
			out = append(out, candidate{a.SM(), a.Name})
		}
		return out, ""
	case "driver", "push", "tag", "jobs", "components":
		return nil, "" // a value no file names
	}
	return nil, completions.Files
}

func shellCandidates(names []string) []candidate {
	out := make([]candidate, len(names))
	for i, n := range names {
		out[i] = candidate{n, ""}
	}
	return out
}

// selectionCandidates are what use, local, global, env and exec take:
// installed versions, latest and system.
func selectionCandidates(e *env) []candidate {
	out := installedCandidates(e, false)
	return append(out,
		candidate{"latest", "the newest installed version"},
		candidate{"system", "cudaenv steps aside"})
}

// installedCandidates lists installed and linked versions, newest first.
// exact (for uninstall) names a library's build as uninstall takes it
// where the same version is built for more than one CUDA major:
// nccl@2.30.7-cuda13.
func installedCandidates(e *env, exact bool) []candidate {
	st := e.store()
	var out []candidate
	for _, k := range store.Kinds() {
		list, _ := st.List(k)
		for i := len(list) - 1; i >= 0; i-- {
			ent := list[i]
			desc := "installed"
			if ent.Linked() {
				desc = "linked to " + ent.Path
			}
			if ent.Err != nil {
				desc = "broken"
			}
			value := ent.Version.String()
			if k.Library() {
				value = string(k) + "@" + value
				desc = version.Tool(k).Title() + " for CUDA " + strconv.Itoa(ent.CUDAMajor) + ", " + desc
				if exact && builds(list, ent.Version) > 1 {
					value = uninstallName(ent)
				}
			}
			out = append(out, candidate{value, desc})
		}
	}
	return out
}

// builds counts the entries of version v in list (one per CUDA major).
func builds(list []store.Entry, v version.Version) int {
	n := 0
	for _, ent := range list {
		if version.Compare(ent.Version, v) == 0 {
			n++
		}
	}
	return n
}

// toolCandidates are the toolkit commands, as the shims know them.
func toolCandidates(e *env) []candidate {
	// The toolkit commands, as the shims see them: not python3 or ls
	// from a linked conda env.
	st := e.store()
	all, _ := shims.Names(st, e.goos)
	names, _ := shims.Wanted(all, st, shims.UserPath(e.vars, e.goos), e.goos)
	out := make([]candidate, len(names))
	for i, n := range names {
		out[i] = candidate{n, ""}
	}
	return out
}

// remoteCandidates are the releases in the cached release indexes, newest
// first; completion never downloads them.
func remoteCandidates(e *env) []candidate {
	var out []candidate
	for _, v := range install.CachedReleases(e.dirs.Cache, version.CUDA) {
		out = append(out, candidate{v.String(), "CUDA release"})
	}
	for _, t := range version.Libraries {
		for _, v := range install.CachedReleases(e.dirs.Cache, t) {
			out = append(out, candidate{string(t) + "@" + v.String(), t.Title() + " release"})
		}
	}
	return out
}
