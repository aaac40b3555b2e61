package shell

import (
	_ "embed"
	"strconv"
	"strings"
	"unicode/utf8"
)

type pwsh struct{}

//go:embed hook.ps1
var pwshHook string

// quotePwsh single-quotes s. PowerShell also reads the typographic quotes
// U+2018–U+201B as single quotes, so those are doubled too. Bytes that
// are not UTF-8 are copied as they are.
func quotePwsh(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch r {
		case '\'', '\u2018', '\u2019', '\u201a', '\u201b':
			b.WriteString(s[i : i+size])
		}
		b.WriteString(s[i : i+size])
		i += size
	}
	b.WriteByte('\'')
	return b.String()
}

func (pwsh) Name() string          { return "pwsh" }
func (pwsh) Quote(s string) string { return quotePwsh(s) }
func (pwsh) Set(name, value string) string {
	if !ValidName(name) {
		return ""
	}
	return "$env:" + name + " = " + quotePwsh(value) + "\n"
}
func (pwsh) Unset(name string) string {
	if !ValidName(name) {
		return ""
	}
	return "Remove-Item -LiteralPath " + quotePwsh("Env:"+name) + " -ErrorAction SilentlyContinue\n"
}
func (pwsh) Init(exe, hook string) string { return fill(pwshHook, quotePwsh(exe), quotePwsh(hook)) }
func (pwsh) Alert(msg string) string      { return "[Console]::Error.WriteLine(" + quotePwsh(msg) + ")\n" }

// dotnetTicks converts to .NET ticks (100 ns since 0001-01-01 UTC), what
// LastWriteTimeUtc.Ticks reports, so PowerShell compares mtimes exactly.
func dotnetTicks(f File) string {
	return strconv.FormatInt(f.ModTime.UnixNano()/100+621355968000000000, 10)
}

func (pwsh) Check(c Check) string {
	q := quotePwsh
	var b strings.Builder
	b.WriteString("function global:__cudaenv_check {\n")
	if c.Never {
		b.WriteString("  return $false\n}\n")
		return b.String()
	}
	b.WriteString("  if ($PWD.ProviderPath -cne " + q(c.Dir) + ") { return $false }\n")
	if c.EnvSet {
		b.WriteString("  if ($env:" + c.EnvName + " -cne " + q(c.EnvValue) + ") { return $false }\n")
	} else {
		b.WriteString("  if ($null -ne $env:" + c.EnvName + ") { return $false }\n")
	}
	for _, f := range c.Files {
		p := q(f.Path)
		if !f.Exists {
			b.WriteString("  if (Test-Path -LiteralPath " + p + ") { return $false }\n")
			continue
		}
		b.WriteString("  $i = Get-Item -LiteralPath " + p + " -Force -ErrorAction SilentlyContinue\n")
		b.WriteString("  if ($null -eq $i -or $i.LastWriteTimeUtc.Ticks -ne " + dotnetTicks(f) + ") { return $false }\n")
	}
	b.WriteString("  return $true\n}\n")
	return b.String()
}
