package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/cudaenv/cudaenv/internal/config"
	"github.com/cudaenv/cudaenv/internal/envpins"
	"github.com/cudaenv/cudaenv/internal/hookenv"
	"github.com/cudaenv/cudaenv/internal/install"
	"github.com/cudaenv/cudaenv/internal/query"
	"github.com/cudaenv/cudaenv/internal/termsafe"
	"github.com/cudaenv/cudaenv/internal/version"
	"github.com/cudaenv/cudaenv/store"
)

func installCommands(e *env) []*cli.Command {
	return []*cli.Command{
		{
			Name:      "install",
			Usage:     "download and install CUDA toolkits and cuDNN from NVIDIA's redistributables or its PyPI wheels (--source)",
			ArgsUsage: "[VERSION] [cudnn@VERSION]   (none: what this directory selects)",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "profile", Usage: "minimal (nvcc, cudart, cccl: compile and run), extensions (minimal plus cuBLAS, cuSPARSE, cuSOLVER, cuRAND, cuFFT, NVTX, NVRTC: what PyTorch extensions build against; --for's default), default (the toolkit without drivers, GUI profilers and docs) or full; an installed version gains components only when this or --components is given", DefaultText: "default"},
				&cli.StringFlag{Name: "components", Usage: "comma-separated component ids instead of a profile, e.g. cuda_nvcc,cuda_cudart,libcublas"},
				&cli.StringFlag{Name: "platform", Usage: "NVIDIA platform key (default: this machine's), e.g. linux-aarch64 for Jetson before CUDA 13"},
				&cli.IntFlag{Name: "cuda-major", Usage: "for cuDNN alone: the CUDA major to install the build for"},
				&cli.StringFlag{Name: "mirror", Usage: "base URL laid out like https://developer.download.nvidia.com/compute (also CUDAENV_MIRROR)"},
				&cli.IntFlag{Name: "jobs", Usage: "parallel downloads (default: max(4, CPU cores))"},
				&cli.BoolFlag{Name: "offline", Usage: "install from the download cache only"},
				&cli.BoolFlag{Name: "force", Usage: "reinstall even if installed"},
				&cli.BoolFlag{Name: "refresh", Usage: "refresh the cached release index first"},
				&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print only errors and the final line"},
				&cli.StringFlag{Name: "source", Usage: "nvidia (the redist server or --mirror), pypi (NVIDIA's wheels on CUDAENV_PYPI_INDEX) or auto (nvidia, falling back to pypi); also CUDAENV_SOURCE"},
				&cli.GenericFlag{Name: "for", Value: &repeated{}, Usage: "install what a requirement loads of NVIDIA's (PEP 508, resolved on the package index as pip and uv resolve it; cudaenv's tables offline): one toolkit with the builds it pins, its cuDNN and libraries; repeat it for several that must agree, e.g. --for torch==2.15.0 --for 'jax[cuda13]==0.9.0', --for vllm, --for 'nvidia-cublas-cu12==12.4.5.8'; or a PATH: a venv or conda prefix, a uv.lock, a pylock.toml or a requirements.txt, for the very NVIDIA wheels it holds, e.g. --for .venv"},
				&cli.StringFlag{Name: "python", Usage: "with --for: the CPython version whose wheel is read (default " + install.DefaultPython + ")"},
				&cli.BoolFlag{Name: "dry-run", Usage: "print what would be installed, with exact versions and where they come from; install nothing"},
				&cli.BoolFlag{Name: "json", Usage: "with --dry-run: print the plan as JSON ({\"products\":[{\"product\",\"version\",\"source\",\"components\":[{\"id\",\"project\",\"version\"}]}]}; offline, a version whose files cannot be listed has \"unlisted\": why), for scripts"},
				&cli.BoolFlag{Name: "locked", Usage: "install exactly what .cuda-version.lock lists, and fail if it no longer matches .cuda-version (CI)"},
				&cli.BoolFlag{Name: "system", Usage: "install into the system store (CUDAENV_SYSTEM_ROOT), readable by all users; for its admin"},
				&cli.StringFlag{Name: "from", Usage: "install the versions in a bundle FILE (see: cudaenv bundle export), with no network"},
			},
			Action: func(c *cli.Context) error { return installCmd(e, c) },
		},
		lockCommand(e),
		{
			Name:      "ls-remote",
			Usage:     "list releases available for download, newest last; * marks installed ones",
			ArgsUsage: "[cuda|cudnn] [PREFIX]",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "mirror", Usage: "base URL laid out like NVIDIA's (also CUDAENV_MIRROR)"},
				&cli.BoolFlag{Name: "refresh", Usage: "ignore the cached index (kept for a day)"},
				&cli.BoolFlag{Name: "offline", Usage: "use the cached index only (with --source pypi: cudaenv's built-in table)"},
				&cli.StringFlag{Name: "source", Usage: "nvidia, pypi (the releases CUDAENV_PYPI_INDEX has wheels of) or auto; also CUDAENV_SOURCE"},
			},
			Action: func(c *cli.Context) error { return lsRemote(e, c) },
		},
		{
			Name:  "cache",
			Usage: "manage the download cache",
			Subcommands: []*cli.Command{
				{
					Name:  "prune",
					Usage: "remove cudaenv's cached downloads, manifests and indexes, and say how much that freed",
					Action: func(c *cli.Context) error {
						if c.NArg() > 0 {
							return errors.New("cache prune takes no arguments; it empties the whole download cache")
						}
						freed, err := install.PruneCache(e.dirs.Cache)
						if err != nil {
							return fmt.Errorf("cache prune: %w", err)
						}
						fmt.Fprintf(e.stdout, "freed %s in %s\n", humanBytes(freed), e.dirs.Cache)
						return nil
					},
				},
				{
					Name:  "dir",
					Usage: "print the download cache's folder",
					Action: func(c *cli.Context) error {
						if c.NArg() > 0 {
							return errors.New("cache dir takes no arguments")
						}
						fmt.Fprintln(e.stdout, e.dirs.Cache)
						return nil
					},
				},
				{
					Name:  "size",
					Usage: "print how much the cached downloads take",
					Action: func(c *cli.Context) error {
						if c.NArg() > 0 {
							return errors.New("cache size takes no arguments")
						}
						fmt.Fprintf(e.stdout, "%s\t%s\n", humanBytes(install.CacheUsage(e.dirs.Cache)), e.dirs.Cache)
						return nil
					},
				},
			},
		},
	}
}

// installer is the install package set up with this command's flags and
// the settings (CUDAENV_MIRROR, CUDAENV_PYPI_INDEX, …).
func (e *env) installer(c *cli.Context, quiet bool) (*install.Installer, error) {
	return e.installerReport(c, quiet, nil)
}

// installerReport is installer with its report set up by edit (nil: as
// it is): install --dry-run --json gathers the plans, install --for
// prints one activation line.
func (e *env) installerReport(c *cli.Context, quiet bool, edit func(*installReport)) (*install.Installer, error) {
	mirror := c.String("mirror")
	if mirror == "" {
		var err error
		if mirror, err = e.setting("mirror"); err != nil {
			return nil, err
		}
	}
	// Read whatever the source: a lock may name pypi for a product.
	index, err := e.setting("pypi_index")
	if err != nil {
		return nil, err
	}
	st, err := e.storeFor(c.Bool("system"))
	if err != nil {
		return nil, err
	}
	report := &installReport{e: e, quiet: quiet, profile: profileOr(c.String("profile"), "default"), command: c.Command.Name}
	if edit != nil {
		edit(report)
	}
	return install.New(install.Options{
		Store:     st,
		CacheDir:  e.dirs.Cache,
		Mirror:    mirror,
		PyPIIndex: index,
		UserAgent: "cudaenv/" + appVersion,
		Offline:   c.Bool("offline"),
		Refresh:   c.Bool("refresh"),
		Jobs:      c.Int("jobs"),
		GOOS:      e.goos,
		GOARCH:    runtime.GOARCH,
		Driver:    func(ctx context.Context) string { return e.host(true).Driver(ctx).Version },
		Reporter:  report,
		Changed:   func() { afterStoreChange(e) },
		Notice:    func(line string) { fmt.Fprintf(e.stderr, "cudaenv: %s\n", termsafe.Escape(line)) },

		SettingsFile: filepath.Join(e.dirs.Config, config.FileName),
	})
}

func installCmd(e *env, c *cli.Context) error {
	if c.String("from") != "" {
		if c.NArg() > 0 {
			return errors.New("install --from installs what the bundle holds; drop the version arguments")
		}
		if c.IsSet("for") || c.Bool("dry-run") {
			return errors.New("install --from installs what the bundle holds, as it is; drop --for and --dry-run (cudaenv bundle import FILE checks it all first)")
		}
		return bundleImport(e, c, c.String("from"))
	}
	source, err := e.source(c)
	if err != nil {
		return err
	}
	profile := ""
	if c.IsSet("profile") {
		profile = c.String("profile") // a lock has its own; only a typed one can disagree
	}
	var plan *jsonPlan
	if c.Bool("json") {
		if !c.Bool("dry-run") {
			return errors.New("install --json prints a plan; use it with --dry-run (nothing is installed then)")
		}
		plan = &jsonPlan{}
	}
	var forReqs []string
	if v, ok := c.Generic("for").(*repeated); ok {
		forReqs = *v
	}
	oneUse := len(forReqs) > 0 && !c.Bool("dry-run")
	var report *installReport
	edit := func(r *installReport) {
		r.plan, r.oneUse = plan, oneUse
		r.oneDryUse = len(forReqs) > 0 && c.Bool("dry-run")
		report = r
	}
	return withInstallerReport(e, c, c.Bool("quiet"), edit, func(ctx context.Context, in *install.Installer) error {
		results, err := in.Install(ctx, install.Request{
			Args:   c.Args().Slice(),
			For:    forReqs,
			Python: c.String("python"),
			DryRun: c.Bool("dry-run"),
			Here:   install.Here{Dir: e.cwd, Lookup: e.lookup, GlobalFile: e.dirs.GlobalFile(), Warn: func(w string) { hookenv.Warn(e.stderr, w) }},
			Source: source,
			// Typed: it also overrides the source an installed version came from.
			SourceTyped: c.IsSet("source"),
			Profile:     profile,
			Components:  splitList(c.String("components")),
			Platform:    c.String("platform"),
			CUDAMajor:   c.Int("cuda-major"),
			Force:       c.Bool("force"),
			Locked:      c.Bool("locked"),
		})
		if err == nil && plan != nil {
			return plan.write(e.stdout)
		}
		if err == nil && oneUse {
			activateAll(e, results, forPaths(forReqs))
		}
		if err == nil && report != nil && report.oneDryUse {
			// The one line a real run would print.
			activateLine(e, "select it with", report.dryUses, forPaths(forReqs))
		}
		return componentTypo(err, splitList(c.String("components")))
	})
}

// componentTypo adds to an install's error that names a --components
// entry cudaenv knows no component of the one meant, as commands and
// flags have it: --components cuda_nvccc → did you mean cuda_nvcc?
func componentTypo(err error, names []string) error {
	if err == nil {
		return nil
	}
	known := install.ComponentIDs()
	for _, n := range names {
		if slices.Contains(known, n) || !strings.Contains(err.Error(), n) {
			continue
		}
		if near := nearest(n, known); near != "" {
			return fmt.Errorf("%w; did you mean %s?", err, near)
		}
	}
	return err
}

// withInstaller runs one command that installs, locks or bundles: with
// the installer its flags describe, and a context that the first Ctrl-C
// cancels. An interrupted run exits 130; a write the system store refuses
// says whose store it is (systemWriteErr).
func withInstaller(e *env, c *cli.Context, quiet bool, run func(context.Context, *install.Installer) error) error {
	return withInstallerReport(e, c, quiet, nil, run)
}

// withInstallerReport is withInstaller with the report set up by edit
// (nil: as it is; see installerReport).
func withInstallerReport(e *env, c *cli.Context, quiet bool, edit func(*installReport), run func(context.Context, *install.Installer) error) error {
	in, err := e.installerReport(c, quiet, edit)
	if err != nil {
		return err
	}
	ctx, stop := interruptContext(e)
	defer stop()
	err = run(ctx, in)
	if err != nil && ctx.Err() != nil {
		return &query.ExitError{Code: 130, Err: err}
	}
	return systemWriteErr(e, err, c.Bool("system"))
}

// interruptContext is cancelled by the first Ctrl-C (or SIGTERM): the
// install stops within moments and leaves nothing behind. A second one
// exits at once, as an impatient user expects; the next command cleans up.
func interruptContext(e *env) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		first := true
		for range sig {
			if first {
				first = false
				cancel()
				continue
			}
			fmt.Fprint(e.stderr, "\r\x1b[K")
			fmt.Fprintln(e.stderr, "cudaenv: interrupted twice; stopped at once (the next cudaenv command cleans up)")
			os.Exit(130)
		}
	}()
	return ctx, func() { signal.Stop(sig); cancel() }
}

// installReport prints what an install decides and does.
type installReport struct {
	e       *env
	quiet   bool
	profile string // what a bare install asks for, named in the hint to add more
	command string // install, ls-remote, lock, …: what the fallback line says happens
	// oneUse: one line activates everything the command installed
	// (activateAll, after --for), not one per version.
	oneUse bool
	// oneDryUse: a dry run of --for gathers what would select each version
	// (dryUses) for one line at its end, as the real run prints it.
	oneDryUse bool
	dryUses   []activation
	// plan, for install --dry-run --json, gathers the plans instead of
	// printing them.
	plan *jsonPlan
}

func (r *installReport) Event(ev install.Event) {
	e := r.e
	switch ev := ev.(type) {
	case install.FallbackToPyPI:
		instead := "installing from PyPI instead"
		switch r.command {
		case "ls-remote":
			instead = "listing the releases on PyPI instead"
		case "lock":
			instead = "locking from PyPI instead"
		case "image":
			instead = "building from PyPI instead"
		}
		sayf(e.stderr, "cudaenv: NVIDIA's server cannot be reached (%v); %s\n", ev.Err, instead)
	case install.SkippedWheel:
		line := fmt.Sprintf("cudaenv: skipping %s: %v", ev.Component, ev.Reason)
		if len(ev.Components) > 1 {
			line = fmt.Sprintf("cudaenv: skipping %s: the index has no wheel of them for %s (%s: %v)", strings.Join(ev.Components, ", "), ev.Label, ev.Component, ev.Reason)
		}
		if ev.Older != "" {
			line += "; " + ev.Older
		}
		sayf(e.stderr, "%s\n", line)
	case install.UnlistedRelease:
		sayf(e.stderr, "cudaenv: note: CUDA %s is %s\n", ev.Release, ev.Note)
	case install.FrameworkPinned:
		vias := map[string]string{"metadata": "its .metadata file", "range": "range requests on its zip directory", "wheel": "the whole (small) wheel", "cache": "the cache"}
		for _, rd := range ev.Reads {
			if !ev.Direct {
				sayf(e.stderr, "%s: read the pins of %s (from %s)\n", rd.For, rd.Wheel, vias[rd.Via])
			}
		}
		if ev.Extra != "" {
			sayf(e.stderr, "%s: its CUDA wheels come with the extra [%s]; reading them with it\n", ev.For, ev.Extra)
		}
		pins := "wheel pins"
		switch {
		case ev.Holds:
			pins = "holds"
		case ev.Direct:
			pins = "asks for"
		case len(ev.Reads) > 1:
			pins = "wheels pin"
		}
		sayf(e.stderr, "%s %s %s → CUDA %s\n", ev.For, pins, ev.CUDAFrom, ev.CUDA)
		if ev.Unlisted != "" {
			sayf(e.stderr, "cudaenv: note: %s\n", ev.Unlisted)
		}
		if len(ev.Differs) > 0 {
			sayf(e.stderr, "  CUDA %s with the builds they pin, not its own: %s\n", ev.CUDA, strings.Join(ev.Differs, ", "))
		}
		if ev.NotFromSource != "" {
			sayf(e.stderr, "cudaenv: note: %s\n", ev.NotFromSource)
		}
		if ev.Cudnn != "" {
			line := fmt.Sprintf("%s %s %s → cuDNN %s", ev.For, pins, ev.CudnnFrom, ev.Cudnn)
			if ev.CudnnInstall != "" && ev.CudnnInstall != ev.Cudnn {
				line += fmt.Sprintf(" (installing cuDNN %s, the nearest release the source has)", ev.CudnnInstall)
			}
			sayf(e.stderr, "%s\n", line)
		}
		for _, l := range ev.Products {
			sayf(e.stderr, "%s %s %s\n", ev.For, pins, l)
		}
		if len(ev.Others) > 0 {
			sayf(e.stderr, "cudaenv: note: they also take %s, which cudaenv does not install\n", strings.Join(ev.Others, ", "))
		}
		for _, n := range ev.Notes {
			sayf(e.stderr, "cudaenv: note: %s\n", n)
		}
		if ev.TableDisagrees != "" {
			sayf(e.stderr, "cudaenv: note: %s\n", ev.TableDisagrees)
		}
		if ev.NoCompiler {
			sayf(e.stderr, "cudaenv: note: NVIDIA's CUDA %s wheels carry no nvcc: from PyPI this is the libraries and headers extensions build against, without a compiler; build them with an nvcc you have, or install from NVIDIA (--source nvidia)\n", ev.CUDA)
		}
	case install.FrameworkFallback:
		sayf(e.stderr, "cudaenv: could not read %s's wheel (%v); using cudaenv's built-in tables\n", ev.For, ev.Err)
	case install.ForEnvironment:
		what := envpins.Label(ev.Kind, ev.Path)
		if len(ev.Frameworks) > 0 {
			what += " (" + strings.Join(ev.Frameworks, ", ") + ")"
		}
		sayf(e.stderr, "%s holds %s for Python %s: %s\n", what, plural(len(ev.Pins), "NVIDIA wheel"), ev.Python, strings.Join(ev.Pins, ", "))
		for _, p := range ev.Passed {
			sayf(e.stderr, "cudaenv: note: passed over %s\n", p)
		}
	case install.FrameworkFromTables:
		sayf(e.stderr, "%s from cudaenv's tables: PyPI serves its %s build, whose wheel pins %s\n", ev.For, ev.Variant, strings.Join(ev.Products(), ", "))
		sayf(e.stderr, "  CUDA %s: %s\n", ev.CUDA, ev.Note)
		for _, l := range ev.LeftOut {
			sayf(e.stderr, "cudaenv: note: left out %s\n", l)
		}
	case install.WouldInstall:
		if r.plan != nil {
			r.plan.add(ev)
			break
		}
		use := func() {
			switch {
			case ev.Use == "":
			case r.oneDryUse:
				r.dryUses = append(r.dryUses, activation{use: ev.Use, library: ev.Product != "" && ev.Product != string(version.CUDA)})
			default:
				sayf(e.stdout, "select it with: cudaenv use %s\n", ev.Use)
			}
		}
		if ev.Unlisted != "" {
			sayf(e.stdout, "would install %s (its files are not listed: %s)\n", ev.Label, ev.Unlisted)
			use()
			break
		}
		// What a real run would do, in the words it would use.
		files := true
		switch have := ev.Have; {
		case !ev.Installed:
			sayf(e.stdout, "would install %s (%s, %s) from %s\n", ev.Label, plural(ev.Files, "file"), humanBytes(ev.Bytes), ev.Source)
		case ev.Reinstall:
			sayf(e.stdout, "would reinstall %s (%s, %s) from %s\n", ev.Label, plural(ev.Files, "file"), humanBytes(ev.Bytes), ev.Source)
		case have.Linked():
			sayf(e.stdout, "%s is already linked to %s: nothing to install\n", ev.Label, have.Path)
			files = false
		case ev.Adds:
			sayf(e.stdout, "would add %s to %s (installed: %s) from %s\n", plural(len(ev.Missing), "component"), ev.Label, installedWhat(have), ev.Source)
		default:
			files = false
			where := ""
			if have.System {
				where = " in the system store"
			}
			sayf(e.stdout, "%s is already installed%s%s: nothing to install\n", ev.Label, where, inParens(installedWhat(have)))
			if len(ev.Missing) > 0 && !have.System {
				sayf(e.stdout, "  profile %s would add %s, %s: cudaenv install %s --profile %s\n",
					r.profile, plural(len(ev.Missing), "component"), humanBytes(ev.MissingBytes), have.Version, r.profile)
			}
		}
		for _, f := range ev.Entries {
			if !files {
				continue
			}
			line := fmt.Sprintf("  %s %s  %s", f.Component, f.Version, humanBytes(f.Size))
			switch {
			case f.NotOwn && f.Own != "":
				line += fmt.Sprintf("  (not %s's own %s)", ev.Version, f.Own)
			case f.NotOwn:
				line += fmt.Sprintf("  (not in %s)", ev.Version)
			}
			sayf(e.stdout, "%s\n", line)
		}
		use()
	case install.TorchTargets:
		sayf(e.stderr, "%s was built with CUDA %s and cuDNN %s; installing CUDA %s and cuDNN %s\n", ev.For, ev.CUDA, ev.BundledCudnn, ev.CUDA, ev.Cudnn)
		// The wheels bring their own libraries, which one selected
		// older than them on LD_LIBRARY_PATH would displace.
		sayf(e.stderr, "torch loads the CUDA libraries of its nvidia-* wheels; to build extensions for it without putting CUDA %s's in front of them: cudaenv local %s --libraries=off\n", ev.CUDA, ev.CUDA)
	case install.Adding:
		if !r.quiet && len(ev.Missing) > 0 {
			sayf(e.stderr, "adding %s to %s\n", strings.Join(ev.Missing, ", "), ev.Label)
		}
		if !r.quiet && len(ev.Changed) > 0 {
			sayf(e.stderr, "taking the pinned builds into %s: %s\n", ev.Label, strings.Join(ev.Changed, ", "))
		}
	case install.Needs:
		if ev.CUDA == "" && r.command == "image" {
			sayf(e.stderr, "cudaenv: note: %s needs %s from the CUDA %d it is used with (%s), and the image holds none; put one in with them: %s\n",
				ev.Library, strings.Join(ev.Components, ", "), ev.CUDAMajor, ev.Why, ev.Command)
			break
		}
		if ev.CUDA == "" {
			sayf(e.stderr, "cudaenv: note: %s needs %s from the CUDA %d it is used with (%s), and none is selected here; install one with them: %s\n",
				ev.Library, strings.Join(ev.Components, ", "), ev.CUDAMajor, ev.Why, ev.Command)
			break
		}
		sayf(e.stderr, "%s needs %s in CUDA %s (%s)\n", ev.Library, strings.Join(ev.Components, ", "), ev.CUDA, ev.Why)
	case install.LockUpdated:
		if ev.DryRun {
			sayf(e.stderr, "would update %s: %s\n", ev.Path, ev.Reason)
			break
		}
		sayf(e.stderr, "updated %s: %s\n", ev.Path, ev.Reason)
	case install.NotAsLocked:
		sayf(e.stderr, "cudaenv: %s is installed from other archives than %s lists (%s); cudaenv install --force reinstalls it from the lock\n", ev.Label, ev.Lock, strings.Join(ev.Components, ", "))
	case install.Result:
		switch ev.Outcome {
		case install.AlreadyLinked:
			sayf(e.stdout, "%s is already linked to %s\n", ev.Label, ev.Entry.Path)
		case install.AlreadyInstalled:
			if ev.Entry.System {
				sayf(e.stdout, "%s is already installed in the system store: %s (cudaenv install --force puts your own copy in front of it)\n", ev.Label, ev.Entry.Dir)
				break
			}
			if len(ev.Missing) == 0 {
				sayf(e.stdout, "%s is already installed (cudaenv install --force reinstalls it)\n", ev.Label)
				break
			}
			sayf(e.stdout, "%s is installed%s; cudaenv install %s --profile %s adds %s, %s\n",
				ev.Label, inParens(installedWhat(ev.Entry)), ev.Entry.Version, r.profile, plural(len(ev.Missing), "component"), humanBytes(ev.MissingBytes))
		default:
			sayf(e.stdout, "installed %s (%s) in %.1fs: %s\n", ev.Label, plural(ev.Components, "component"), ev.Elapsed.Seconds(), ev.Entry.Dir)
			if ev.Entry.Receipt.LibrariesOnly {
				sayf(e.stdout, "%s is libraries only (no nvcc): it runs prebuilt programs and wheels, and host code links against its libraries\n", ev.Label)
			}
			if !r.oneUse {
				sayf(e.stdout, "activate it with: cudaenv use %s\n", ev.Use)
			}
		}
	}
}

func (r *installReport) Progress(label string) install.Progress {
	return newProgress(r.e, label, r.quiet)
}

func lsRemote(e *env, c *cli.Context) error {
	source, err := e.source(c)
	if err != nil {
		return err
	}
	in, err := e.installer(c, false)
	if err != nil {
		return err
	}
	args := c.Args().Slice()
	tool := version.CUDA
	if len(args) > 0 {
		if t, ok := version.ToolNamed(args[0]); ok {
			tool = t
			args = args[1:]
		}
	}
	if len(args) > 1 {
		return errors.New("ls-remote takes at most a product and a prefix, e.g. cudaenv ls-remote cudnn 9")
	}
	var prefix version.Version
	if len(args) == 1 {
		v, err := version.Parse(args[0])
		if err != nil {
			return fmt.Errorf("ls-remote: %q is neither a product (cuda, cudnn, nccl, cusparselt, cutensor, cudss, nvshmem) nor a version prefix; e.g. cudaenv ls-remote cudnn 9", args[0])
		}
		prefix = v
	}
	releases, err := in.Releases(context.Background(), tool, prefix, source)
	if err != nil {
		return err
	}
	if len(releases) == 0 && prefix != nil {
		return noRemoteRelease(in, tool, prefix, source)
	}
	width := 0
	for _, r := range releases {
		width = max(width, len(r.Release))
	}
	for _, r := range releases {
		mark := " "
		if r.Installed {
			mark = "*"
		}
		line := fmt.Sprintf("%s %-*s", mark, width, r.Release)
		if r.Note != "" {
			line += "  (" + r.Note + ")"
		}
		fmt.Fprintln(e.stdout, strings.TrimRight(line, " "))
	}
	return nil
}

// noRemoteRelease is ls-remote's error for a prefix nothing matches
// (ls-remote cuda 99): what the source does have, the newest first of
// the same major where there are any.
func noRemoteRelease(in *install.Installer, tool version.Tool, prefix version.Version, source string) error {
	all, err := in.Releases(context.Background(), tool, nil, source)
	if err != nil || len(all) == 0 {
		return fmt.Errorf("ls-remote: no %s release %s; see: cudaenv ls-remote %s", tool.Title(), prefix, tool)
	}
	var near []string
	for _, r := range all {
		if v, err := version.Parse(r.Release); err == nil && v.Major() == prefix.Major() {
			near = append(near, r.Release)
		}
	}
	what := fmt.Sprintf("newest %s %d releases", tool.Title(), prefix.Major())
	if len(near) == 0 {
		for _, r := range all {
			near = append(near, r.Release)
		}
		what = "newest"
	}
	near = near[max(0, len(near)-3):]
	slices.Reverse(near)
	return fmt.Errorf("ls-remote: no %s release %s; the %s: %s (see: cudaenv ls-remote %s)", tool.Title(), prefix, what, strings.Join(near, ", "), tool)
}

// progress shows a bar on a terminal and plain lines elsewhere. The bar
// has two phases: downloading, over the bytes that still have to come
// (with a rate and an ETA), then unpacking, once every byte is in while
// components are still being unpacked, over the components (with neither:
// the time an archive takes to unpack is not its download size). Bytes
// already present (cached archives, resumed parts, downloads done while
// another version's bar was shown) are never counted as downloaded, so no
// rate is made up from them.
type progress struct {
	w      io.Writer
	label  string
	quiet  bool
	isTerm bool

	mu        sync.Mutex
	bar       *progressbar.ProgressBar
	unpacking bool   // the bar is in its second phase
	current   string // the component being unpacked, "" for none
	done      int
	total     int
	bytes     int64 // to obtain, as Start said
	present   int64 // of those, already present: not downloaded
	got       int64 // downloaded
}

func newProgress(e *env, label string, quiet bool) *progress {
	p := &progress{w: e.stderr, label: label, quiet: quiet}
	if f, ok := e.stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.isTerm = true
	}
	return p
}

func (p *progress) Start(total int64, components int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total, p.bytes = components, total
	if p.quiet {
		return
	}
	if p.isTerm {
		p.bar = progressbar.NewOptions64(max(total, 1),
			progressbar.OptionSetWriter(p.w),
			progressbar.OptionShowBytes(true),
			progressbar.OptionSetDescription(p.describe()),
			progressbar.OptionThrottle(100*time.Millisecond),
		)
		return
	}
	fmt.Fprintf(p.w, "%s: %s, %s\n", p.label, plural(components, "component"), humanBytes(total))
}

// describe is the bar's text: "CUDA 12.4.1 [3/14]", and what is being
// unpacked.
func (p *progress) describe() string {
	d := fmt.Sprintf("%s [%d/%d]", p.label, p.done, p.total)
	if p.current != "" {
		d += " unpacking " + p.current
	}
	return d
}

func (p *progress) Add(n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.got += n
	if p.bar == nil || p.unpacking {
		return
	}
	p.bar.Add64(n)
	p.maybeUnpackPhase()
}

// Cached takes bytes that need no download (cache hits, resumed parts,
// what was downloaded while the bar was not shown) out of the download
// phase, so the rate it shows is the network's.
func (p *progress) Cached(n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.present += n
	if p.bar == nil || p.unpacking {
		return
	}
	if left := p.bytes - p.present; left > 0 {
		p.bar.ChangeMax64(left)
	}
	p.maybeUnpackPhase()
}

// maybeUnpackPhase starts the second phase once every byte is in and
// components are left to unpack.
func (p *progress) maybeUnpackPhase() {
	if p.unpacking || p.got < p.bytes-p.present || p.done >= p.total {
		return
	}
	p.countBar()
}

// countBar replaces the download bar by one over the components, with
// no rate and no ETA.
func (p *progress) countBar() {
	p.unpacking = true
	p.bar.Exit()
	fmt.Fprint(p.w, "\r\x1b[K")
	p.bar = progressbar.NewOptions(max(p.total, 1),
		progressbar.OptionSetWriter(p.w),
		progressbar.OptionSetDescription(p.describe()),
		progressbar.OptionSetPredictTime(false),
		progressbar.OptionSetElapsedTime(false),
		progressbar.OptionThrottle(100*time.Millisecond),
	)
	p.bar.Set(p.done)
}

// Unpacking names the component being unpacked, so the bar says what is
// happening once the downloads are done.
func (p *progress) Unpacking(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.current = id
	if p.bar != nil {
		p.bar.Describe(p.describe())
	}
}

func (p *progress) ComponentDone(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	if p.current == id {
		p.current = ""
	}
	if p.quiet {
		return
	}
	if p.bar == nil {
		fmt.Fprintf(p.w, "  %s done (%d/%d)\n", id, p.done, p.total)
		return
	}
	p.bar.Describe(p.describe())
	if p.unpacking {
		p.bar.Set(p.done)
		return
	}
	p.maybeUnpackPhase()
}

// Finish leaves the last frame, at 100 % and [N/N], on a finished
// install, and a clean line on a failed or interrupted one.
func (p *progress) Finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar == nil {
		return
	}
	if p.done == p.total {
		p.current = ""
		if !p.unpacking && p.got <= 0 {
			p.countBar() // nothing downloaded: no rate to show, only the count
		}
		p.bar.Describe(p.describe())
		p.bar.Finish()
		fmt.Fprintln(p.w)
		return
	}
	p.bar.Exit()
	fmt.Fprint(p.w, "\r\x1b[K")
}

func profileOr(p, def string) string {
	if p == "" {
		return def
	}
	return p
}

// source is --source, else the source setting (CUDAENV_SOURCE, the
// settings file); empty means nvidia.
func (e *env) source(c *cli.Context) (string, error) {
	if s := c.String("source"); s != "" {
		return s, nil
	}
	return e.setting("source")
}

// sayf prints one line made with outside data (paths from the working
// directory, index and manifest text, a mirror's errors), control
// characters escaped.
func sayf(w io.Writer, format string, args ...any) {
	fmt.Fprintln(w, termsafe.Escape(strings.TrimSuffix(fmt.Sprintf(format, args...), "\n")))
}

// installedWhat is what an installed entry holds, as list says it:
// "default profile, 14 components"; "" for a library installed whole
// from one archive or wheel.
func installedWhat(have store.Entry) string {
	return query.Holds(have.Kind, have.Receipt.Profile, len(have.Receipt.Components))
}

// inParens is " (s)", or "" for no s.
func inParens(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}
