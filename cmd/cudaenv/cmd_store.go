package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cudaenv/cudaenv/internal/activate"
	"github.com/cudaenv/cudaenv/internal/install"
	"github.com/cudaenv/cudaenv/internal/query"
	"github.com/cudaenv/cudaenv/internal/version"
	"github.com/cudaenv/cudaenv/store"
)

func storeCommands(e *env) []*cli.Command {
	return []*cli.Command{
		verifyCommand(e),
		{
			Name:    "list",
			Aliases: []string{"ls"},
			Usage:   "list installed and linked versions: source, contents, size; * marks the active ones",
			Flags: []cli.Flag{
				&cli.BoolFlag{Name: "json", Usage: "print the list as JSON, for scripts"},
			},
			Action: func(c *cli.Context) error {
				return query.List(e.query(), c.Args().Slice(), c.Bool("json"))
			},
		},
		{
			Name:      "prefix",
			Usage:     "print the folder of the selected (or named) version, e.g. $(cudaenv prefix)/include",
			ArgsUsage: "[VERSION | LIBRARY@VERSION | LIBRARY]",
			Description: `Prints the toolkit's folder; "cudaenv prefix cudnn" (or nccl, cusparselt,
cutensor, cudss, nvshmem) prints the folder of the library selected here,
and "cudaenv prefix nccl@2.30" that of its build for the CUDA selected here.`,
			Action: func(c *cli.Context) error {
				return query.Prefix(e.query(), c.Args().Slice())
			},
		},
		{
			Name:      "uninstall",
			Usage:     "remove an installed version (a linked one loses only its link)",
			ArgsUsage: "VERSION | LIBRARY@VERSION[-cudaMAJOR]",
			Description: `Names as list and install print them: 12.4.1, cudnn@9.5.1.17,
nccl@2.30.7-cuda13 (a library's build for one CUDA major; or
nccl@2.30.7 --cuda-major 13). Libraries: cudnn, nccl, cusparselt,
cutensor, cudss, nvshmem.`,
			Flags: []cli.Flag{
				&cli.BoolFlag{Name: "force", Usage: "remove it even if the current directory selects it"},
				&cli.IntFlag{Name: "cuda-major", Usage: "for a library (cuDNN, NCCL, …): the CUDA major of the build to remove"},
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
				return systemWriteErr(e, uninstall(e, st, c.Args().First(), c.Bool("force"), c.Int("cuda-major")), c.Bool("system"))
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
				st.CleanStaging() // as every command that writes the store does
				ent, err := st.LinkWith(c.Args().First(), opts)
				if err != nil {
					return systemWriteErr(e, err, c.Bool("system"))
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

// plural and humanBytes word counts and sizes as list does.
var (
	plural     = query.Plural
	humanBytes = query.HumanBytes
)

// uninstallTarget reads what uninstall names: a CUDA version, or a
// library's LIBRARY@VERSION, with its CUDA major as install prints it
// (nccl@2.30.7-cuda13) or as list does ("nccl@2.30.7 (cuda13)"), or
// from --cuda-major.
func uninstallTarget(arg string, cudaMajor int) (version.Spec, store.Kind, int, error) {
	bad := fmt.Errorf("uninstall: invalid version %q; name an installed version as cudaenv list shows it, e.g. 12.4.1, cudnn@9.5.1.17 or nccl@2.30.7-cuda13", arg)
	text := arg
	// "nccl@2.30.7 (cuda13)", copied from list.
	if v, paren, ok := strings.Cut(text, " ("); ok && strings.HasSuffix(paren, ")") {
		text = v + "-" + strings.TrimSuffix(paren, ")")
	}
	major := 0
	if name, body, ok := strings.Cut(text, "@"); ok {
		if v, m, ok := strings.Cut(body, "-cuda"); ok {
			n, err := strconv.Atoi(m)
			if err != nil || n <= 0 || strconv.Itoa(n) != m {
				return version.Spec{}, "", 0, bad
			}
			major, text = n, name+"@"+v
		}
	}
	spec, err := version.ParseSpec(text)
	if err != nil || spec.Kind != version.Prefix {
		return version.Spec{}, "", 0, bad
	}
	if major != 0 && cudaMajor != 0 && major != cudaMajor {
		return version.Spec{}, "", 0, fmt.Errorf("uninstall: %s names CUDA %d and --cuda-major %d; give one", arg, major, cudaMajor)
	}
	if major == 0 {
		major = cudaMajor
	}
	return spec, store.KindOf(spec.Tool), major, nil
}

func uninstall(e *env, st *store.Store, arg string, force bool, cudaMajor int) error {
	spec, kind, cudaMajor, err := uninstallTarget(arg, cudaMajor)
	if err != nil {
		return err
	}
	// Finish what interrupted installs and uninstalls left first, so that
	// an uninstall killed after its rename is completed, not "not installed".
	left := st.Leftovers()
	st.CleanStaging()
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
		if done, freed := finishedUninstall(st, kind, spec, cudaMajor, left); done != "" {
			fmt.Fprintf(e.stdout, "uninstalled %s (finished an uninstall that was interrupted; freed %s)\n", done, humanBytes(freed))
			return nil
		}
		var others []string
		for _, ent := range entries {
			if spec.Match(ent.Version) {
				others = append(others, uninstallName(ent))
			}
		}
		if len(others) > 0 {
			return fmt.Errorf("uninstall: %s is not installed; installed: %s", arg, strings.Join(others, ", "))
		}
		return fmt.Errorf("uninstall: %s is not installed; see: cudaenv list", arg)
	case len(matches) > 1:
		var names []string
		for _, m := range matches {
			names = append(names, uninstallName(m))
		}
		return fmt.Errorf("uninstall: %s matches %s; name one, e.g. cudaenv uninstall %s", arg, strings.Join(names, ", "), names[len(names)-1])
	}
	target := matches[0]
	if target.System {
		return st.Remove(target) // refused: it says whose it is
	}
	if !force {
		if r, err := resolveHere(e); err == nil {
			for _, a := range r.Entries() {
				if a.Dir == target.Dir {
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

// finishedUninstall names the entry matching spec whose trash (left by an
// interrupted uninstall) CleanStaging has just deleted, with the bytes
// freed; "" when there was none.
func finishedUninstall(st *store.Store, kind store.Kind, spec version.Spec, cudaMajor int, left []store.Leftover) (string, int64) {
	var name string
	var freed int64
	for _, l := range left {
		if l.Kind != kind || !l.Trash {
			continue
		}
		if _, err := os.Lstat(l.Path); err == nil {
			continue // still there: an install in progress owns it
		}
		if _, ok := st.GetOwn(kind, l.Name); ok {
			continue // a reinstall's old tree, not an uninstall's
		}
		v, major, ok := store.ParseName(kind, l.Name)
		if !ok || !spec.Match(v) || (cudaMajor != 0 && major != cudaMajor) {
			continue
		}
		if name == "" {
			name = l.Name
			if kind.Library() {
				name = fmt.Sprintf("%s@%s (cuda%d)", kind, v, major)
			}
		}
		freed += l.Bytes
	}
	return name, freed
}

// uninstallName is how uninstall takes e exactly: 12.4.1, or
// nccl@2.30.7-cuda13 for a library's build for one CUDA major.
func uninstallName(e store.Entry) string {
	if e.Kind.Library() {
		return fmt.Sprintf("%s@%s-cuda%d", e.Kind, e.Version, e.CUDAMajor)
	}
	return e.Version.String()
}
