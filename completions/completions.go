// Package completions holds cudaenv's tab-completion scripts for bash, zsh,
// fish and PowerShell. The scripts are thin: each passes the words typed so
// far to the hidden `cudaenv __complete` command, which answers with one
// candidate per line, and hands the candidates to the shell.
//
// The protocol: `cudaenv __complete :WORD...`, every word after "cudaenv"
// up to and including the one under the cursor, each prefixed with ":" so
// that empty words and words like "--" survive every shell (Windows
// PowerShell drops empty arguments to native commands). The answer is
// lines of VALUE or VALUE<TAB>DESCRIPTION, already filtered by the word
// under the cursor, or a single directive line: ":dirs", ":files" or
// ":commands" asks the shell to complete directories, files or command
// names itself.
package completions

import (
	"embed"
	"fmt"
	"sort"
	"strings"
)

//go:embed cudaenv.bash cudaenv.zsh cudaenv.fish cudaenv.ps1
var files embed.FS

var byShell = map[string]string{
	"bash": "cudaenv.bash",
	"zsh":  "cudaenv.zsh",
	"fish": "cudaenv.fish",
	"pwsh": "cudaenv.ps1",
}

// Names lists the shells with a completion script, sorted.
func Names() []string {
	out := make([]string, 0, len(byShell))
	for n := range byShell {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Get returns the completion script for a shell; "powershell" is accepted
// for pwsh.
func Get(shell string) (string, error) {
	if shell == "powershell" {
		shell = "pwsh"
	}
	name, ok := byShell[shell]
	if !ok {
		return "", fmt.Errorf("no completion script for %q; use one of: %s", shell, strings.Join(Names(), ", "))
	}
	data, err := files.ReadFile(name)
	if err != nil {
		return "", err
	}
	return string(data), nil
}

// Directives a __complete answer may consist of.
const (
	Dirs     = ":dirs"
	Files    = ":files"
	Commands = ":commands"
)
