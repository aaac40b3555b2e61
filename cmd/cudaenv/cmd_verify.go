package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cudaenv/cudaenv/internal/install"
	"github.com/cudaenv/cudaenv/internal/query"
	"github.com/cudaenv/cudaenv/internal/version"
	"github.com/cudaenv/cudaenv/store"
)

func verifyCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "verify",
		Usage:     "check that installed versions' files are as installed (every file, by its fingerprint; --full reads them)",
		ArgsUsage: "[VERSION | cudnn@VERSION …]   (none: every installed version)",
		Description: `Every install lists its files with their mode, size, sha256 and a stat
fingerprint. verify compares each file with it: a write, chmod, delete or
replacement shows, in a few milliseconds for thousands of files. A file
whose inode was only touched (a hard link made elsewhere) is read and
checked. --full reads every file. --repair reinstalls what is damaged,
from the download cache where it can, else from where it came.
It exits 1 when something is damaged (and not repaired).`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "full", Usage: "read every file and check its sha256, whatever its fingerprint says"},
			&cli.BoolFlag{Name: "repair", Usage: "reinstall the damaged versions (from the download cache, else the index or mirror)"},
			&cli.IntFlag{Name: "cuda-major", Usage: "for cuDNN and the other libraries: the CUDA major of the build"},
			&cli.BoolFlag{Name: "offline", Usage: "with --repair: from the download cache only"},
			&cli.StringFlag{Name: "mirror", Usage: "with --repair: base URL laid out like NVIDIA's (also CUDAENV_MIRROR)"},
			&cli.BoolFlag{Name: "system", Usage: "check (and with --repair, reinstall into) the system store; repairing is for its admin"},
		},
		Action: func(c *cli.Context) error { return verifyCmd(e, c) },
	}
}

func verifyCmd(e *env, c *cli.Context) error {
	st, err := e.storeFor(c.Bool("system"))
	if err != nil {
		return err
	}
	entries, err := verifyTargets(st, c.Args().Slice(), c.Int("cuda-major"))
	if err != nil {
		return err
	}
	var damaged []store.Entry
	for _, ent := range entries {
		if !verifyOne(e, ent, c.Bool("full")) {
			damaged = append(damaged, ent)
		}
	}
	if len(damaged) == 0 {
		return nil
	}
	if !c.Bool("repair") {
		var names []string
		for _, d := range damaged {
			names = append(names, verifyArg(d))
		}
		what := "1 version is"
		if len(damaged) > 1 {
			what = fmt.Sprintf("%d versions are", len(damaged))
		}
		return &query.ExitError{Code: 1, Err: fmt.Errorf("verify: %s damaged; repair: cudaenv verify --repair %s", what, strings.Join(names, " "))}
	}
	var still []string
	for _, d := range damaged {
		if d.System && !c.Bool("system") {
			sayf(e.stderr, "cudaenv: %s is in the system store %s, which only its admin changes: ask them to run cudaenv verify --system --repair %s, or install your own copy, which comes first: cudaenv install %s --force", verifyLabel(d), e.dirs.System, verifyArg(d), verifyArg(d))
			still = append(still, verifyArg(d))
			continue
		}
		if err := repairEntry(e, c, d); err != nil {
			return err
		}
		again, ok := st.Get(d.Kind, d.Name)
		if !ok || !verifyOne(e, again, false) {
			still = append(still, verifyArg(d))
		}
	}
	if len(still) > 0 {
		return &query.ExitError{Code: 1, Err: fmt.Errorf("verify: %s still damaged", strings.Join(still, ", "))}
	}
	return nil
}

// verifyTargets are the entries args name (every entry for none).
func verifyTargets(st *store.Store, args []string, cudaMajor int) ([]store.Entry, error) {
	var all []store.Entry
	for _, k := range store.Kinds() {
		es, err := st.List(k)
		if err != nil {
			return nil, err
		}
		all = append(all, es...)
	}
	if len(args) == 0 {
		if len(all) == 0 {
			return nil, errors.New("verify: nothing is installed; see: cudaenv list")
		}
		return all, nil
	}
	var out []store.Entry
	for _, a := range args {
		spec, err := version.ParseSpec(a)
		if err != nil || spec.Kind != version.Prefix {
			return nil, fmt.Errorf("verify: invalid version %q; name an installed version, e.g. 12.4.1 or cudnn@9.5.1.17", a)
		}
		kind := store.CUDA
		if spec.Tool.Library() {
			kind = store.KindOf(spec.Tool)
		}
		n := 0
		for _, ent := range all {
			if ent.Kind == kind && spec.Match(ent.Version) && (cudaMajor == 0 || !kind.Library() || ent.CUDAMajor == cudaMajor) {
				out = append(out, ent)
				n++
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("verify: %s is not installed; see: cudaenv list", a)
		}
	}
	return out, nil
}

// verifyOne checks one entry and says what it found; false when it is
// damaged.
func verifyOne(e *env, ent store.Entry, full bool) bool {
	label := verifyLabel(ent)
	if ent.Linked() {
		sayf(e.stdout, "%s: linked to %s, whose files are not cudaenv's: not checked", label, ent.Path)
		return true
	}
	v, err := ent.Verify(full)
	if err != nil {
		sayf(e.stdout, "%s: cannot be checked: %v", label, err)
		return false
	}
	if v.NoList {
		if v.Damage != nil {
			sayf(e.stdout, "%s: damaged: %v (installed by an older cudaenv, without a list of its files)", label, v.Damage)
			return false
		}
		sayf(e.stdout, "%s: installed by an older cudaenv, without a list of its files: its key files are there; reinstall it to have every file checked: cudaenv install %s --force", label, verifyArg(ent))
		return true
	}
	if v.Result == nil {
		sayf(e.stdout, "%s: damaged: %v", label, v.Damage)
		return false
	}
	how := "by fingerprint"
	if full {
		how = "read in full"
	}
	if v.Damage == nil {
		sayf(e.stdout, "%s: %s whole (%s)", label, plural(ent.Receipt.Files, "file"), how)
		return true
	}
	var damaged []string
	for _, p := range v.Problems {
		if p.Damage() {
			damaged = append(damaged, p.String())
		}
	}
	sayf(e.stdout, "%s: %d of %s changed (%s):", label, len(damaged), plural(ent.Receipt.Files, "file"), how)
	for _, d := range damaged {
		sayf(e.stdout, "  %s", d)
	}
	if len(v.Others) > 0 {
		sayf(e.stdout, "  the same files are in %s: changed there too", strings.Join(v.Others, ", "))
	}
	return false
}

// repairEntry reinstalls a damaged entry with what its receipt names: its
// source, platform and profile or components, and (Repair) the builds it
// has.
func repairEntry(e *env, c *cli.Context, ent store.Entry) error {
	r := ent.Receipt
	req := install.Request{
		Args:        []string{verifyArg(ent)},
		Source:      r.Source,
		SourceTyped: r.Source != "",
		Platform:    r.Platform,
		Profile:     r.Profile,
		CUDAMajor:   ent.CUDAMajor,
		Force:       true,
		Repair:      true,
	}
	if r.Profile == "" {
		for _, comp := range r.Components {
			req.Components = append(req.Components, comp.ID)
		}
	}
	if req.Source != "nvidia" && req.Source != "pypi" {
		req.Source, req.SourceTyped = "", false
	}
	return withInstaller(e, c, false, func(ctx context.Context, in *install.Installer) error {
		_, err := in.Install(ctx, req)
		return err
	})
}

// verifyLabel names an entry as verify's lines do: CUDA 12.4.1, cuDNN 9.5.1.17 (cuda12).
func verifyLabel(ent store.Entry) string {
	if ent.Kind.Library() {
		return version.Tool(ent.Kind).Title() + " " + ent.Version.String() + " (cuda" + strconv.Itoa(ent.CUDAMajor) + ")"
	}
	return "CUDA " + ent.Version.String()
}

// verifyArg is how a command line names an entry: 12.4.1, cudnn@9.5.1.17.
func verifyArg(ent store.Entry) string {
	if ent.Kind.Library() {
		return string(ent.Kind) + "@" + ent.Version.String()
	}
	return ent.Version.String()
}
