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

// wildcardFish escapes the characters string match's globs give a
// meaning to, so s matches only itself.
func wildcardFish(s string) string {
	return strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`).Replace(s)
}

func (fish) Check(c Check) string {
	q := quoteFish
	var b strings.Builder
	b.WriteString("function __cudaenv_check\n")
	if c.Never {
		b.WriteString("    return 1\nend\n")
		return b.String()
	}
	switch {
	case c.AnyDir:
	case c.Within != "" && strings.HasPrefix(c.Within, "/"):
		// A cd inside the project: walk up to Within in builtins; any
		// version file on the way means the selection may differ.
		pre := q(wildcardFish(withinPrefix(c.Within)))
		b.WriteString("    if test \"$PWD\" != " + q(c.Dir) + "\n")
		b.WriteString("        string match -q -- " + pre + "'?*' \"$PWD\"; or return 1\n")
		b.WriteString("        set -l __cudaenv_d $PWD\n")
		b.WriteString("        while string match -q -- " + pre + "'?*' \"$__cudaenv_d\"\n")
		b.WriteString("            if test -e \"$__cudaenv_d/" + versionFiles[0] + "\"; or test -e \"$__cudaenv_d/" + versionFiles[1] + "\"\n")
		b.WriteString("                return 1\n")
		b.WriteString("            end\n")
		b.WriteString("            set __cudaenv_d (string replace -r -- '/[^/]*$' '' \"$__cudaenv_d\")\n")
		b.WriteString("        end\n")
		b.WriteString("    end\n")
	default:
		b.WriteString("    test \"$PWD\" = " + q(c.Dir) + "; or return 1\n")
	}
	varIs := func(name string, set bool, value string) {
		if set {
			b.WriteString("    set -q " + name + "; and test \"$" + name + "\" = " + q(value) + "; or return 1\n")
		} else {
			b.WriteString("    not set -q " + name + "; or return 1\n")
		}
	}
	varIs(c.EnvName, c.EnvSet, c.EnvValue)
	if ValidName(c.StateName) {
		varIs(c.StateName, c.StateSet, c.State)
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
