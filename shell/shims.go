package shell

// ShimsPath renders the line that `cudaenv init --shims` prints: it puts the
// shims folder first on PATH, once, for shells that use shims instead of the
// prompt hook. dir is quoted for the shell like every other value.
func ShimsPath(sh Shell, dir string) string {
	q := sh.Quote(dir)
	switch sh.Name() {
	case "fish":
		return "# cudaenv shims: cudaenv init --shims fish | source, in ~/.config/fish/config.fish\n" +
			"contains -- " + q + " $PATH; or set -gx PATH " + q + " $PATH\n"
	case "pwsh":
		return "# cudaenv shims: cudaenv init --shims pwsh | Out-String | Invoke-Expression, in $PROFILE\n" +
			"if (-not (@($env:PATH -split [IO.Path]::PathSeparator) -contains " + q + ")) {\n" +
			"  $env:PATH = if ($env:PATH) { " + q + " + [IO.Path]::PathSeparator + $env:PATH } else { " + q + " }\n" +
			"}\n"
	}
	return "# cudaenv shims: eval \"$(cudaenv init --shims " + sh.Name() + ")\"\n" +
		"case \":${PATH-}:\" in\n" +
		"  *:" + q + ":*) ;;\n" +
		"  *) export PATH=" + q + "\"${PATH:+:$PATH}\" ;;\n" +
		"esac\n"
}
