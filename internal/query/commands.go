package query

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cudaenv/cudaenv/internal/activate"
	"github.com/cudaenv/cudaenv/internal/envdiff"
	"github.com/cudaenv/cudaenv/internal/export"
	"github.com/cudaenv/cudaenv/internal/hookenv"
	"github.com/cudaenv/cudaenv/internal/resolve"
	"github.com/cudaenv/cudaenv/internal/termsafe"
	"github.com/cudaenv/cudaenv/shell"
	"github.com/cudaenv/cudaenv/store"
)

// Current prints the selected versions and where the selection comes from.
func Current(in *In) error {
	r, err := ResolveHere(in)
	if err != nil {
		return err
	}
	label := r.Selector()
	if r.Selection.System() {
		label = "system"
	}
	// The source is a path from wherever the user cd'ed to.
	fmt.Fprintf(in.Stdout, "%s (set by %s%s)\n", label, termsafe.Escape(r.Selection.Source.String()), whichStore(r))
	if r.CUDA != nil && r.CUDA.Receipt.Source == "" {
		// The fast resolve reads no receipt: the selected toolkit's, for
		// the builds install --for gave it.
		r = WithReceipts(in, r)
	}
	if r.CUDA != nil {
		if d := r.CUDA.Receipt.DiffersText(); d != "" {
			// Receipts are the store's; escaped all the same.
			fmt.Fprintf(in.Stdout, "  CUDA %s with builds not its own: %s\n", r.CUDA.Version, termsafe.Escape(d))
		}
	}
	return nil
}

// Which prints the full path of a toolkit command (args: its name) for
// the current selection; exit status 127 when the selection lacks it.
func Which(in *In, args []string) error {
	if len(args) != 1 {
		return errors.New("which needs one command name, e.g. cudaenv which nvcc")
	}
	r, err := ResolveHere(in)
	if err != nil {
		return err
	}
	if r.Selection.System() {
		return fmt.Errorf("%s: cudaenv steps aside here (system, set by %s)", args[0], r.Selection.Source)
	}
	p, err := activate.Which(in.Store(), r, args[0], in.GOOS)
	if err != nil {
		return &ExitError{Code: 127, Err: err}
	}
	fmt.Fprintln(in.Stdout, p)
	return nil
}

// Prefix prints a version's folder, for $(cudaenv prefix) in scripts:
// the toolkit's, or cuDNN's when only cuDNN is named or "cudnn" is asked.
func Prefix(in *In, args []string) error {
	wantCudnn := len(args) == 1 && args[0] == "cudnn"
	// Another library asked for by name: prefix nccl.
	wantLib, named := activate.OtherLibraryNamed(strings.Join(args, ""))
	named = named && len(args) == 1
	if wantCudnn || named {
		args = nil
	}
	var r activate.Resolved
	var err error
	onlyLibs := false
	if specs, _, perr := resolve.ParseOptions("command line", []byte(strings.Join(args, " "))); perr == nil && len(specs) > 0 {
		onlyLibs = true
		for _, sp := range specs {
			onlyLibs = onlyLibs && sp.Tool.Library()
		}
	}
	if len(args) > 0 {
		_, r, err = ChangesFor(in, args)
		// Libraries alone (prefix nccl@2.30): the build for the CUDA
		// selected here, if it has one.
		if here, herr := ResolveHere(in); onlyLibs && herr == nil && here.CUDA != nil {
			if _, paired, perr := ChangesFor(in, append([]string{here.CUDA.Version.String()}, args...)); perr == nil {
				r, err = paired, nil
				r.CUDA = nil
			}
		}
	} else {
		r, err = ResolveHere(in)
	}
	if err != nil {
		return fmt.Errorf("prefix: %w", err)
	}
	if lib := r.Entries(); onlyLibs && r.CUDA == nil && r.Cudnn == nil && len(lib) > 0 {
		// The first named library's folder, as for cuDNN.
		fmt.Fprintln(in.Stdout, lib[0].Path)
		return nil
	}
	switch {
	case named && r.Library(wantLib) == nil:
		return fmt.Errorf("prefix: no %s is selected here; select one beside CUDA, e.g. cudaenv local 13 %s@VERSION", wantLib.Title(), wantLib)
	case named:
		fmt.Fprintln(in.Stdout, r.Library(wantLib).Path)
	case wantCudnn && r.Cudnn == nil:
		return errors.New("prefix: no cuDNN is selected here; " + cudnnToName(in, r))
	case wantCudnn || (r.CUDA == nil && r.Cudnn != nil):
		fmt.Fprintln(in.Stdout, r.Cudnn.Path)
	case r.CUDA != nil:
		fmt.Fprintln(in.Stdout, r.CUDA.Path)
	default:
		return errors.New("prefix: the selection is system: cudaenv steps aside, so it has no folder")
	}
	return nil
}

// cudnnToName says which cuDNN prefix could name: the newest installed
// build for the CUDA major selected here, never one for another major or
// a version that is not installed.
func cudnnToName(in *In, r activate.Resolved) string {
	major := 0
	if r.CUDA != nil {
		major = r.CUDA.Version.Major()
	}
	list, _ := in.Store().List(store.Cudnn) // oldest first
	var best *store.Entry
	for i, ent := range list {
		if ent.Err == nil && (major == 0 || ent.CUDAMajor == major) {
			best = &list[i]
		}
	}
	switch {
	case best != nil:
		return fmt.Sprintf("name one: cudaenv prefix cudnn@%s", best.Version)
	case major > 0:
		return fmt.Sprintf("no cuDNN for CUDA %d is installed; see: cudaenv ls-remote cudnn, and cudaenv install cudnn@VERSION --cuda-major %d", major, major)
	}
	return "no cuDNN is installed; see: cudaenv ls-remote cudnn"
}

// EnvOptions are the env command's flags and arguments.
type EnvOptions struct {
	Format string   // shell (""), json, github, dotenv or cmake
	Shell  string   // for the shell format; "" is the user's
	GitHub bool     // append to the files GitHub Actions names
	Specs  []string // versions to activate; none: the current selection
}

// Env prints the environment that activates versions, in a format.
func Env(in *In, o EnvOptions) error {
	format, shellName := o.Format, o.Shell
	if o.GitHub {
		if format != "" && format != "github" {
			return fmt.Errorf("env: --github writes the github format; drop --format %s", format)
		}
		format = "github"
	}
	switch {
	case format == "" && shellName == "json":
		format = "json"
	case format == "":
		format = "shell"
	}
	switch format {
	case "shell":
		if shellName == "" {
			shellName = UserShell(in.Vars, in.GOOS)
		}
		if _, err := shell.Get(shellName); err != nil {
			return fmt.Errorf("env --shell: %w", err)
		}
	case "json", "github", "dotenv", "cmake":
	default:
		return fmt.Errorf("env: unknown format %q; use shell, json, github, dotenv or cmake", format)
	}
	changes, r, err := ChangesFor(in, o.Specs)
	if err != nil {
		return err
	}
	switch format {
	case "json":
		return printJSON(in, changes)
	case "github":
		return exportGitHub(in, changes, r, o.GitHub)
	case "dotenv":
		vars, pathDirs := dotenvVars(changes, r, in.GOOS)
		text, quoted, err := export.Dotenv(vars)
		if err != nil {
			return fmt.Errorf("env --format dotenv: %w; no dotenv reader would read it back as it is: rename that folder (or take it out of the variable), or use --format json or shell", err)
		}
		if len(pathDirs) > 0 {
			dirs := strings.Join(pathDirs, string(os.PathListSeparator))
			fmt.Fprintf(in.Stderr, "cudaenv: note: PATH is left out (docker --env-file would replace the container's with this machine's); prepend %s to PATH where the file is used, e.g. ENV PATH=%s:$PATH in a Dockerfile\n", dirs, dirs)
		}
		if len(quoted) > 0 {
			fmt.Fprintf(in.Stderr, "cudaenv: note: %s quoted for python-dotenv; docker --env-file would keep the quotes\n", strings.Join(quoted, ", "))
		}
		fmt.Fprint(in.Stdout, text)
		return nil
	case "cmake":
		fmt.Fprint(in.Stdout, export.CMakeCache(cmakeOf(r, in.GOOS)))
		return nil
	}
	sh, err := shell.Get(shellName)
	if err != nil {
		return err
	}
	fmt.Fprint(in.Stdout, shell.Render(sh, hookenv.Vars(changes)))
	return nil
}

// UserShell is the shell env renders for by default: the login shell
// ($SHELL) if cudaenv supports it, else bash (pwsh on Windows).
func UserShell(vars envdiff.Env, goos string) string {
	if goos == "windows" {
		return "pwsh"
	}
	switch filepath.Base(vars["SHELL"]) {
	case "zsh":
		return "zsh"
	case "fish":
		return "fish"
	}
	return "bash"
}

// printJSON prints the changes as one object, name to value (null to
// unset), for scripts: cudaenv's own state, which only its shell hook
// reads, stays out (it would be JSON inside a JSON string).
func printJSON(in *In, changes []envdiff.Change) error {
	m := map[string]*string{}
	for _, c := range changes {
		if c.Name == envdiff.StateVar {
			continue
		}
		if c.Unset {
			m[c.Name] = nil
		} else {
			v := c.Value
			m[c.Name] = &v
		}
	}
	enc := json.NewEncoder(in.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(m)
}

// exportVars is the variables an activation sets, with their new values,
// for tools that read values rather than run shell code: cudaenv's own
// state stays out, CUDAENV_VERSION goes in (so cudaenv in later steps
// agrees), and PATH only where withPath (GitHub takes it separately).
func exportVars(changes []envdiff.Change, r activate.Resolved, withPath bool) map[string]string {
	vars := map[string]string{}
	for _, ch := range changes {
		if ch.Unset || ch.Name == envdiff.StateVar || (!withPath && strings.EqualFold(ch.Name, "PATH")) {
			continue
		}
		vars[ch.Name] = ch.Value
	}
	if r.Selection.System() {
		vars[resolve.EnvVar] = "system"
	} else if r.Label() != "" {
		vars[resolve.EnvVar] = r.Selector()
	}
	return vars
}

// dotenvVars is what a dotenv file holds: exportVars without PATH, and
// each other list (LD_LIBRARY_PATH) with cudaenv's entries only, since a
// container has none of this machine's; pathDirs are the folders to put
// first on PATH.
func dotenvVars(changes []envdiff.Change, r activate.Resolved, goos string) (vars map[string]string, pathDirs []string) {
	vars = exportVars(changes, r, false)
	if r.Selection.System() {
		return vars, nil
	}
	for name, dirs := range activate.Want(r, goos).Prepend {
		if strings.EqualFold(name, "PATH") {
			pathDirs = dirs
		} else if _, ok := vars[name]; ok {
			vars[name] = strings.Join(dirs, string(os.PathListSeparator))
		}
	}
	return vars, pathDirs
}

// exportGitHub prints the $GITHUB_ENV lines, or with write appends them
// and the PATH entries to the files GitHub Actions names.
func exportGitHub(in *In, changes []envdiff.Change, r activate.Resolved, write bool) error {
	envText := export.GitHubEnv(exportVars(changes, r, false))
	if !write {
		fmt.Fprint(in.Stdout, envText)
		return nil
	}
	var pathDirs []string
	if !r.Selection.System() {
		pathDirs = activate.Want(r, in.GOOS).Prepend["PATH"]
	}
	pathText, err := export.GitHubPath(pathDirs)
	if err != nil {
		return fmt.Errorf("env --github: %w; rename the folder", err)
	}
	for _, f := range []struct{ name, text string }{{"GITHUB_ENV", envText}, {"GITHUB_PATH", pathText}} {
		target := in.Vars[f.name]
		if target == "" {
			return fmt.Errorf("env --github: %s is not set; this runs inside a GitHub Actions step (elsewhere use --format github)", f.name)
		}
		if err := appendFile(target, f.text); err != nil {
			return fmt.Errorf("env --github: %s: %w", f.name, err)
		}
	}
	fmt.Fprintf(in.Stdout, "exported %s to later steps\n", r.Label())
	return nil
}

func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// cmakeOf is what a CMake initial cache points at: nvcc only where the
// toolkit has one, cuDNN's library file as its find modules expect it.
func cmakeOf(r activate.Resolved, goos string) export.CMake {
	var c export.CMake
	if t := r.CUDA; t != nil {
		c.ToolkitRoot = t.Path
		nvcc := filepath.Join(t.Path, "bin", "nvcc")
		if goos == "windows" {
			nvcc += ".exe"
		}
		if fi, err := os.Stat(nvcc); err == nil && !fi.IsDir() {
			c.Compiler = nvcc
		}
	}
	if d := r.Cudnn; d != nil {
		c.CudnnRoot, c.CudnnInclude = d.Path, filepath.Join(d.Path, "include")
		names := []string{"lib/libcudnn.so", fmt.Sprintf("lib/libcudnn.so.%d", d.Version.Major())}
		if goos == "windows" {
			names = []string{"lib/x64/cudnn.lib", "lib/cudnn.lib"}
		}
		for _, n := range names {
			if _, err := os.Stat(filepath.Join(d.Path, n)); err == nil {
				c.CudnnLibrary = filepath.Join(d.Path, filepath.FromSlash(n))
				break
			}
		}
	}
	for _, t := range activate.OtherLibraries() {
		if e := r.Libs[t]; e != nil {
			if c.Libraries == nil {
				c.Libraries = map[string]string{}
			}
			for n, v := range activate.LibraryVars(t, e.Path) {
				c.Libraries[n] = v
			}
			c.PrefixPath = append(c.PrefixPath, e.Path)
		}
	}
	return c
}

// whichStore says which active entries come from the system store, and
// which of the user's own hide one there: "; 12.4.1 from the system
// store /opt/cudaenv". Nothing when no system store is involved.
func whichStore(r activate.Resolved) string {
	var from, shadows []string
	var root string
	for _, ent := range r.Entries() {
		label := ent.Version.String()
		if ent.Kind.Library() {
			label = string(ent.Kind) + "@" + label
		}
		switch {
		case ent.System:
			from = append(from, label)
			root = filepath.Dir(filepath.Dir(ent.Dir))
		case ent.Shadows:
			shadows = append(shadows, label)
		}
	}
	var out string
	if len(from) > 0 {
		out += "; " + strings.Join(from, " ") + " from the system store " + root
	}
	if len(shadows) > 0 {
		out += "; your own " + strings.Join(shadows, " ") + " in front of the system store's"
	}
	return out
}
