package shell

import (
	_ "embed"
	"strings"
)

// quotePOSIX single-quotes s; a single quote becomes '\”. Inside single
// quotes bash and zsh take every other byte literally, newlines included.
func quotePOSIX(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./-+:@%,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// checkPOSIX renders __cudaenv_check for bash and zsh with [[ ]] tests only.
func checkPOSIX(c Check) string {
	q := quotePOSIX
	var b strings.Builder
	b.WriteString("__cudaenv_check() {\n")
	if c.Never {
		b.WriteString("  return 1\n}\n")
		return b.String()
	}
	switch {
	case c.AnyDir:
	case c.Within != "" && strings.HasPrefix(c.Within, "/"):
		// A cd inside the project: walk up to Within in builtins; any
		// version file on the way means the selection may differ.
		pre := q(withinPrefix(c.Within))
		b.WriteString("  if [[ $PWD != " + q(c.Dir) + " ]]; then\n")
		b.WriteString("    [[ $PWD == " + pre + "?* ]] || return 1\n")
		b.WriteString("    local __cudaenv_d=$PWD\n")
		b.WriteString("    while [[ $__cudaenv_d == " + pre + "?* ]]; do\n")
		b.WriteString("      [[ -e $__cudaenv_d/" + versionFiles[0] + " || -e $__cudaenv_d/" + versionFiles[1] + " ]] && return 1\n")
		b.WriteString("      __cudaenv_d=${__cudaenv_d%/*}\n")
		b.WriteString("    done\n")
		b.WriteString("  fi\n")
	default:
		b.WriteString("  [[ $PWD == " + q(c.Dir) + " ]] || return 1\n")
	}
	varIs := func(name string, set bool, value string) {
		if set {
			b.WriteString("  [[ ${" + name + "+x} == x && $" + name + " == " + q(value) + " ]] || return 1\n")
		} else {
			b.WriteString("  [[ -z ${" + name + "+x} ]] || return 1\n")
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
			b.WriteString("  [[ ! -e " + p + " ]] || return 1\n")
		case f.Ref == "":
			b.WriteString("  return 1\n")
		default:
			r := q(f.Ref)
			b.WriteString("  [[ -e " + p + " && ! " + p + " -nt " + r + " && ! " + r + " -nt " + p + " ]] || return 1\n")
		}
	}
	b.WriteString("}\n")
	return b.String()
}

func setPOSIX(name, value string) string {
	if !ValidName(name) {
		return ""
	}
	return "export " + name + "=" + quotePOSIX(value) + "\n"
}

func unsetPOSIX(name string) string {
	if !ValidName(name) {
		return ""
	}
	return "unset " + name + "\n"
}

type bash struct{}

//go:embed hook.bash
var bashHook string

func (bash) Name() string                  { return "bash" }
func (bash) Quote(s string) string         { return quotePOSIX(s) }
func (bash) Set(name, value string) string { return setPOSIX(name, value) }
func (bash) Unset(name string) string      { return unsetPOSIX(name) }
func (bash) Check(c Check) string          { return checkPOSIX(c) }
func (bash) Init(exe, hook string) string  { return fill(bashHook, quotePOSIX(exe), quotePOSIX(hook)) }
func (bash) Alert(msg string) string       { return "printf '%s\\n' " + quotePOSIX(msg) + " >&2\n" }

type zsh struct{}

//go:embed hook.zsh
var zshHook string

func (zsh) Name() string                  { return "zsh" }
func (zsh) Quote(s string) string         { return quotePOSIX(s) }
func (zsh) Set(name, value string) string { return setPOSIX(name, value) }
func (zsh) Unset(name string) string      { return unsetPOSIX(name) }
func (zsh) Check(c Check) string          { return checkPOSIX(c) }
func (zsh) Init(exe, hook string) string  { return fill(zshHook, quotePOSIX(exe), quotePOSIX(hook)) }
func (zsh) Alert(msg string) string       { return "printf '%s\\n' " + quotePOSIX(msg) + " >&2\n" }

// fill puts the already quoted executables into a hook template: exe
// runs the cudaenv function's commands, hook answers the prompt hook.
func fill(tmpl, quotedExe, quotedHook string) string {
	return strings.NewReplacer("@CUDAENV@", quotedExe, "@HOOK@", quotedHook).Replace(tmpl)
}
