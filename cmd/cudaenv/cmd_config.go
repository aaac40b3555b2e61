package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cudaenv/cudaenv/internal/atomicfile"
	"github.com/cudaenv/cudaenv/internal/config"
)

// configCommands is `cudaenv config`: the settings file, read and
// written by key, as mise and uv users expect (config set source pypi).
func configCommands(e *env) []*cli.Command {
	keys := ""
	for _, k := range config.KeyNames() {
		keys += fmt.Sprintf("\n  %-12s %s: %s; %s overrides it", k, config.Help[k], config.Use[k], config.Keys[k])
	}
	return []*cli.Command{{
		Name:      "config",
		Usage:     "read and change the settings file (defaults for --source, mirrors, the system store)",
		ArgsUsage: "[list | get KEY | set KEY VALUE | unset KEY]",
		Description: `The settings file is ` + "`key = value`" + ` lines; its keys:` + keys + `
Each key's environment variable, and the command's flags, override it.`,
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return unknownCommand(c.Command.Subcommands, "cudaenv config", c.Args().First())
			}
			return configList(e)
		},
		Subcommands: []*cli.Command{
			{
				Name:  "list",
				Usage: "print the settings that are set, and which environment variable overrides one",
				Action: func(c *cli.Context) error {
					if c.NArg() > 0 {
						return errors.New("config list takes no arguments; see: cudaenv config --help")
					}
					return configList(e)
				},
			},
			{
				Name:      "get",
				Usage:     "print a setting's value as commands see it (its environment variable, else the file); exit 1 when unset",
				ArgsUsage: "KEY",
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return errors.New("config get needs one key, e.g. cudaenv config get source")
					}
					return configGet(e, c.Args().First())
				},
			},
			{
				Name:      "set",
				Usage:     "set a setting in the file, e.g. cudaenv config set source pypi",
				ArgsUsage: "KEY VALUE",
				Action: func(c *cli.Context) error {
					if c.NArg() != 2 {
						return errors.New("config set needs a key and a value, e.g. cudaenv config set source pypi")
					}
					return configSet(e, c.Args().Get(0), c.Args().Get(1))
				},
			},
			{
				Name:      "unset",
				Usage:     "remove a setting from the file",
				ArgsUsage: "KEY",
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return errors.New("config unset needs one key, e.g. cudaenv config unset source")
					}
					return configUnset(e, c.Args().First())
				},
			},
		},
	}}
}

func (e *env) configPath() string { return filepath.Join(e.dirs.Config, config.FileName) }

// readConfig is the file's bytes; none when it does not exist.
func (e *env) readConfig() ([]byte, error) { return config.Read(e.dirs.Config) }

func configList(e *env) error {
	data, err := e.readConfig()
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	file, err := config.Parse(e.configPath(), data)
	if err != nil {
		return fmt.Errorf("config: %w", withFix(err))
	}
	n := 0
	for _, k := range config.KeyNames() {
		env, inEnv := e.vars[config.Keys[k]], e.vars[config.Keys[k]] != ""
		v, inFile := file[k]
		switch {
		case inEnv && inFile:
			fmt.Fprintf(e.stdout, "%s = %s  # %s=%s overrides it here\n", k, v, config.Keys[k], env)
		case inEnv:
			fmt.Fprintf(e.stdout, "# %s: %s=%s (not in the file)\n", k, config.Keys[k], env)
		case inFile:
			fmt.Fprintf(e.stdout, "%s = %s\n", k, v)
		default:
			continue
		}
		n++
	}
	if n == 0 {
		fmt.Fprintf(e.stderr, "cudaenv: nothing is set in %s; e.g. cudaenv config set source pypi (keys: %s)\n", e.configPath(), strings.Join(config.KeyNames(), ", "))
	}
	return nil
}

func configGet(e *env, key string) error {
	if err := knownKey("get", key); err != nil {
		return err
	}
	v, err := e.setting(key)
	if err != nil {
		return fmt.Errorf("config get: %w", err)
	}
	if v == "" {
		return fmt.Errorf("config get: %s is not set; set it with: cudaenv config set %s VALUE (%s)", key, key, config.Help[key])
	}
	fmt.Fprintln(e.stdout, v)
	return nil
}

func configSet(e *env, key, value string) error {
	if err := knownKey("set", key); err != nil {
		return err
	}
	if err := config.Validate(key, value); err != nil {
		return fmt.Errorf("config set: %w", err)
	}
	data, err := e.readConfig()
	if err != nil {
		return fmt.Errorf("config set: %w", err)
	}
	if _, err := config.Parse(e.configPath(), data); err != nil {
		// Writing beside a line nothing reads would keep a typo hidden.
		return fmt.Errorf("config set: %w", withFix(err))
	}
	if err := e.writeConfig(config.Set(data, key, value)); err != nil {
		return fmt.Errorf("config set: %w", err)
	}
	fmt.Fprintf(e.stdout, "%s = %s in %s\n", key, value, e.configPath())
	if env := e.vars[config.Keys[key]]; env != "" && env != value {
		fmt.Fprintf(e.stderr, "cudaenv: note: %s=%s overrides it in this environment\n", config.Keys[key], env)
	}
	return nil
}

func configUnset(e *env, key string) error {
	if strings.ContainsFunc(key, func(r rune) bool { return r <= ' ' || r == '=' || r == '#' || r == 0x7f }) {
		return knownKey("unset", key)
	}
	data, err := e.readConfig()
	if err != nil {
		return fmt.Errorf("config unset: %w", err)
	}
	out, found := config.Unset(data, key)
	if !found {
		if err := knownKey("unset", key); err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "cudaenv: %s is not set in %s\n", key, e.configPath())
		return nil
	}
	if err := e.writeConfig(out); err != nil {
		return fmt.Errorf("config unset: %w", err)
	}
	fmt.Fprintf(e.stdout, "removed %s from %s\n", key, e.configPath())
	return nil
}

// writeConfig replaces the settings file in one rename, so a reader never
// sees half of it.
func (e *env) writeConfig(data []byte) error {
	if err := os.MkdirAll(e.dirs.Config, 0o755); err != nil {
		return err
	}
	return atomicfile.Write(e.configPath(), data, 0o644)
}

// withFix adds to a line of the settings file that is refused how to be
// rid of it.
func withFix(err error) error {
	var le *config.LineError
	if errors.As(err, &le) {
		return fmt.Errorf("%w; %s", err, le.Fix())
	}
	return err
}

// knownKey refuses a key the settings file does not take, with the one
// meant when it is a typo.
func knownKey(verb, key string) error {
	if _, ok := config.Keys[key]; ok {
		return nil
	}
	if near := nearest(key, config.KeyNames()); near != "" {
		return fmt.Errorf("config %s: unknown setting %q; did you mean %s? known: %s", verb, key, near, strings.Join(config.KeyNames(), ", "))
	}
	return fmt.Errorf("config %s: unknown setting %q; known: %s", verb, key, strings.Join(config.KeyNames(), ", "))
}
