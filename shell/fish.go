package shell

import (
	_ "embed"
	"strings"
)

type fish struct{}

//go:embed hook.fish
var fishHook string

// quoteFish single-quotes s; inside, fish only treats \\ and \' specially.
func quoteFish(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./-+:@,=") == "" {
		return s
	}
	s = strings.ReplaceAll(s, `\`, `\\`)
	s = strings.ReplaceAll(s, `'`, `\'`)
	return "'" + s + "'"
}

func (fish) Name() string          { return "fish" }
func (fish) Quote(s string) string { return quoteFish(s) }

// Set exports the variable. PATH-like lists are set as one string; fish
// splits PATH, CDPATH and MANPATH on colons itself.
func (fish) Set(name, value string) string {
	if !ValidName(name) {
		return ""
	}
	return "set -gx " + name + " " + quoteFish(value) + "\n"
}
func (fish) Unset(name string) string {
	if !ValidName(name) {
		return ""
	}
	return "set -e " + name + "\n"
}
func (fish) Init(exe, hook string) string { return fill(fishHook, quoteFish(exe), quoteFish(hook)) }
func (fish) Alert(msg string) string      { return "printf '%s\\n' " + quoteFish(msg) + " >&2\n" }

func (fish) Check(c Check) string {
	q := quoteFish
	var b strings.Builder
	b.WriteString("function __cudaenv_check\n")
	if c.Never {
		b.WriteString("    return 1\nend\n")
		return b.String()
	}
	b.WriteString("    test \"$PWD\" = " + q(c.Dir) + "; or return 1\n")
	if c.EnvSet {
		b.WriteString("    set -q " + c.EnvName + "; and test \"$" + c.EnvName + "\" = " + q(c.EnvValue) + "; or return 1\n")
	} else {
		b.WriteString("    not set -q " + c.EnvName + "; or return 1\n")
	}
	for _, f := range c.Files {
		p := q(f.Path)
		switch {
		case !f.Exists:
			b.WriteString("    not test -e " + p + "; or return 1\n")
		case f.Ref == "":
			b.WriteString("    return 1\n")
		default:
			r := q(f.Ref)
			b.WriteString("    test -e " + p + "; and not test " + p + " -nt " + r + "; and not test " + r + " -nt " + p + "; or return 1\n")
		}
	}
	b.WriteString("end\n")
	return b.String()
}
