package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cudaenv/cudaenv/internal/activate"
	"github.com/cudaenv/cudaenv/internal/install"
	"github.com/cudaenv/cudaenv/internal/version"
	"github.com/cudaenv/cudaenv/store"
)

func storeCommands(e *env) []*cli.Command {
	return []*cli.Command{
		{
			Name:    "list",
			Aliases: []string{"ls"},
			Usage:   "list installed and linked versions: source, contents, size; * marks the active ones",
			Flags: []cli.Flag{
				&cli.BoolFlag{Name: "json", Usage: "print the list as JSON, for scripts"},
			},
			Action: func(c *cli.Context) error {
				if c.NArg() > 0 {
					return errors.New("list takes no arguments; see: cudaenv list --help")
				}
				return list(e, c.Bool("json"))
			},
		},
		{
			Name:      "prefix",
			Usage:     "print the folder of the selected (or named) version, e.g. $(cudaenv prefix)/include",
			ArgsUsage: "[VERSION | cudnn@VERSION | cudnn]",
			Description: `Prints the toolkit's folder; "cudaenv prefix cudnn" prints the selected
cuDNN's folder.`,
			Action: func(c *cli.Context) error {
				return prefix(e, c.Args().Slice())
			},
		},
		{
			Name:      "uninstall",
			Usage:     "remove an installed version (a linked one loses only its link)",
			ArgsUsage: "VERSION | cudnn@VERSION",
			Flags: []cli.Flag{
				&cli.BoolFlag{Name: "force", Usage: "remove it even if the current directory selects it"},
				&cli.IntFlag{Name: "cuda-major", Usage: "for cuDNN: the CUDA major of the build to remove"},
				&cli.BoolFlag{Name: "system", Usage: "remove it from the system store (CUDAENV_SYSTEM_ROOT); for its admin"},
			},
			Action: func(c *cli.Context) error {
				if c.NArg() != 1 {
					return errors.New("uninstall needs one version, e.g. cudaenv uninstall 12.4.1")
				}
				st, err := e.storeFor(c.Bool("system"))
				if err != nil {
					return err
				}
				return uninstall(e, st, c.Args().First(), c.Bool("force"), c.Int("cuda-major"))
			},
		},
		{
			Name:      "link",
			Usage:     "adopt a toolkit that is already on disk (e.g. /usr/local/cuda-12.4), without copying it",
			ArgsUsage: "PATH",
			Flags: []cli.Flag{
				&cli.IntFlag{Name: "cudnn-for", Usage: "PATH is a cuDNN build for this CUDA major"},
				&cli.StringFlag{Name: "as", Usage: "the release PATH holds, e.g. 13.0.2, where its files do not name it (a pip or conda environment)"},
				&cli.BoolFlag{Name: "system", Usage: "link it into the system store (CUDAENV_SYSTEM_ROOT) for all users; for its admin"},
			},
			Action: func(c *cli.Context) error {
				if c.NArg() != 1 {
					return errors.New("link needs one directory, e.g. cudaenv link /usr/local/cuda-12.4")
				}
				st, err := e.storeFor(c.Bool("system"))
				if err != nil {
					return err
				}
				opts := store.LinkOptions{CudnnFor: c.Int("cudnn-for"), Releases: install.ReleasesShipping}
				if as := c.String("as"); as != "" {
					v, err := version.Parse(as)
					if err != nil || len(v) < 2 || (opts.CudnnFor == 0 && len(v) > 3) {
						return fmt.Errorf("link --as %q: name a release, e.g. --as 13.0.2", as)
					}
					opts.As = v
				}
				ent, err := st.LinkWith(c.Args().First(), opts)
				if err != nil {
					return err
				}
				afterStoreChange(e)
				fmt.Fprintf(e.stdout, "linked %s -> %s\n", ent.Label(), ent.Path)
				return nil
			},
		},
	}
}

// afterStoreChange is called after install, uninstall and link; the shims
// issue hooks the rehash in here.
var afterStoreChange = func(e *env) {}

// listed is one entry as list shows it; list --json prints these.
type listed struct {
	Kind          string  `json:"kind"`
	Version       string  `json:"version"`
	CUDAMajor     int     `json:"cuda_major,omitempty"`
	Label         string  `json:"label"`
	Source        string  `json:"source"`
	Path          string  `json:"path"`
	LinkTarget    string  `json:"link_target,omitempty"`
	Profile       string  `json:"profile,omitempty"`
	Components    int     `json:"components"`
	LibrariesOnly bool    `json:"libraries_only"`
	SizeBytes     *int64  `json:"size_bytes"`               // null for linked trees: not the store's
	Store         string  `json:"store"`                    // user or system
	ShadowsSystem bool    `json:"shadows_system,omitempty"` // a user entry in front of the system store's
	Active        bool    `json:"active"`
	ActiveBy      string  `json:"active_by,omitempty"`
	Broken        *string `json:"broken,omitempty"`
}

func list(e *env, asJSON bool) error {
	st := e.store()
	active, _ := resolveHere(e)
	cudas, err := st.List(store.CUDA)
	if err != nil {
		return err
	}
	cudnns, err := st.List(store.Cudnn)
	if err != nil {
		return err
	}
	var rows []listed
	for _, group := range [][]store.Entry{cudas, cudnns} {
		for _, ent := range group {
			rows = append(rows, describe(ent, active))
		}
	}
	if asJSON {
		if rows == nil {
			rows = []listed{}
		}
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	if len(rows) == 0 {
		fmt.Fprintln(e.stderr, "cudaenv: nothing installed yet; run: cudaenv install 12.4 (or cudaenv link /usr/local/cuda-12.4)")
		return nil
	}
	width := 0
	for _, r := range rows {
		width = max(width, len(r.Label))
	}
	for _, r := range rows {
		mark := " "
		if r.Active {
			mark = "*"
		}
		fmt.Fprintln(e.stdout, strings.TrimRight(fmt.Sprintf("%s %-*s  %s", mark, width, r.Label, r.details()), " "))
	}
	return nil
}

// details is the text after the version: where it came from, what it
// holds, its size, and why it is active.
func (r listed) details() string {
	var parts []string
	switch {
	case r.LinkTarget != "":
		parts = append(parts, "linked -> "+r.LinkTarget)
	case r.LibrariesOnly:
		parts = append(parts, "libraries only ("+r.Source+")")
	default:
		parts = append(parts, r.Source)
	}
	switch {
	case r.Store == "system":
		parts = append(parts, "(system store)")
	case r.ShadowsSystem:
		parts = append(parts, "(yours, in front of the system store's)")
	}
	var what []string
	if r.Profile != "" {
		what = append(what, r.Profile+" profile")
	}
	if r.Components > 0 {
		what = append(what, plural(r.Components, "component"))
	}
	if r.LibrariesOnly && r.LinkTarget != "" {
		what = append(what, "libraries only")
	}
	if len(what) > 0 {
		parts = append(parts, strings.Join(what, ", "))
	}
	if r.SizeBytes != nil {
		parts = append(parts, humanBytes(*r.SizeBytes))
	}
	if r.Broken != nil {
		parts = append(parts, "(broken: "+*r.Broken+")")
	}
	if r.Active {
		parts = append(parts, "(set by "+r.ActiveBy+")")
	}
	return strings.Join(parts, "  ")
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func describe(ent store.Entry, active activate.Resolved) listed {
	r := listed{
		Kind:       string(ent.Kind),
		Version:    ent.Version.String(),
		CUDAMajor:  ent.CUDAMajor,
		Label:      ent.Label(),
		Source:     ent.Receipt.Source,
		Path:       ent.Path,
		Profile:    ent.Receipt.Profile,
		Components: len(ent.Receipt.Components),
		Store:      "user",
	}
	if ent.System {
		r.Store = "system"
	}
	r.ShadowsSystem = ent.Shadows
	if ent.Linked() {
		r.Source, r.LinkTarget = "link", ent.Path
	} else {
		size := treeSize(ent.Dir)
		r.SizeBytes = &size
	}
	if ent.Kind == store.CUDA && ent.Err == nil {
		// The receipt says for what cudaenv installed; a linked tree (or a
		// receipt from before the flag) is looked at.
		r.LibrariesOnly = ent.Receipt.LibrariesOnly || !hasCompiler(ent.Path)
	}
	if ent.Err != nil {
		msg := ent.Err.Error()
		r.Broken = &msg
	}
	if (active.CUDA != nil && active.CUDA.Dir == ent.Dir) || (active.Cudnn != nil && active.Cudnn.Dir == ent.Dir) {
		r.Active, r.ActiveBy = true, active.Selection.Source.String()
	}
	return r
}

// hasCompiler reports whether a toolkit tree has nvcc.
func hasCompiler(root string) bool {
	for _, name := range []string{"nvcc", "nvcc.exe"} {
		if fi, err := os.Stat(filepath.Join(root, "bin", name)); err == nil && fi.Mode().IsRegular() {
			return true
		}
	}
	return false
}

// treeSize is the bytes of the regular files under dir (links not
// followed), as du counts apparent sizes.
func treeSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// prefix prints a version's folder, for $(cudaenv prefix) in scripts:
// the toolkit's, or cuDNN's when only cuDNN is named or "cudnn" is asked.
func prefix(e *env, args []string) error {
	wantCudnn := len(args) == 1 && args[0] == "cudnn"
	if wantCudnn {
		args = nil
	}
	var r activate.Resolved
	var err error
	if len(args) > 0 {
		_, r, err = changesFor(e, args)
	} else {
		r, err = resolveHere(e)
	}
	if err != nil {
		return fmt.Errorf("prefix: %w", err)
	}
	switch {
	case wantCudnn && r.Cudnn == nil:
		return errors.New("prefix: no cuDNN is selected here; name one: cudaenv prefix cudnn@9.5")
	case wantCudnn || (r.CUDA == nil && r.Cudnn != nil):
		fmt.Fprintln(e.stdout, r.Cudnn.Path)
	case r.CUDA != nil:
		fmt.Fprintln(e.stdout, r.CUDA.Path)
	default:
		return errors.New("prefix: the selection is system: cudaenv steps aside, so it has no folder")
	}
	return nil
}

func uninstall(e *env, st *store.Store, arg string, force bool, cudaMajor int) error {
	spec, err := version.ParseSpec(arg)
	if err != nil || spec.Kind != version.Prefix {
		return fmt.Errorf("uninstall: invalid version %q; name an installed version, e.g. 12.4.1 or cudnn@9.5.1.17", arg)
	}
	kind := store.CUDA
	if spec.Tool == version.Cudnn {
		kind = store.Cudnn
	}
	entries, err := st.List(kind)
	if err != nil {
		return err
	}
	var matches []store.Entry
	for _, ent := range entries {
		if spec.Match(ent.Version) && (cudaMajor == 0 || ent.CUDAMajor == cudaMajor) {
			matches = append(matches, ent)
		}
	}
	switch {
	case len(matches) == 0:
		return fmt.Errorf("uninstall: %s is not installed; see: cudaenv list", arg)
	case len(matches) > 1:
		var names []string
		for _, m := range matches {
			names = append(names, m.Label())
		}
		hint := "name one exactly"
		if kind == store.Cudnn {
			hint += " (and pick the build with --cuda-major)"
		}
		return fmt.Errorf("uninstall: %s matches %s; %s", arg, strings.Join(names, ", "), hint)
	}
	target := matches[0]
	if target.System {
		return st.Remove(target) // refused: it says whose it is
	}
	if !force {
		if r, err := resolveHere(e); err == nil {
			for _, a := range []*store.Entry{r.CUDA, r.Cudnn} {
				if a != nil && a.Dir == target.Dir {
					return fmt.Errorf("uninstall: %s is selected here (set by %s); select another version first, or pass --force", target.Label(), r.Selection.Source)
				}
			}
		}
	}
	unlock, err := st.Lock(kind, target.Name)
	if err != nil {
		return err
	}
	defer unlock()
	if err := st.Remove(target); err != nil {
		return err
	}
	afterStoreChange(e)
	what := "uninstalled"
	if target.Linked() {
		what = "unlinked"
	}
	fmt.Fprintf(e.stdout, "%s %s\n", what, target.Label())
	_ = activate.Resolved{}
	return nil
}
