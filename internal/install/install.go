// Package install installs CUDA toolkits and cuDNN into the store: it is
// the one place where fetch (NVIDIA's redistributables and NVIDIA's wheels
// on a PyPI index) and store meet. Given a request it plans each version
// (the release, the cuDNN build for a CUDA major, the archives, what an
// installed entry lacks), then carries the plan out (download, verify,
// stage, receipt, the after-change hook), telling a Reporter as it goes;
// the CLI implements the Reporter with its progress bar and its wording.
// Nothing here reads the environment or writes to a terminal.
package install

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cudaenv/cudaenv/fetch"
	"github.com/cudaenv/cudaenv/fetch/pypi"
	"github.com/cudaenv/cudaenv/internal/lockfile"
	"github.com/cudaenv/cudaenv/internal/resolve"
	"github.com/cudaenv/cudaenv/internal/version"
	"github.com/cudaenv/cudaenv/store"
)

// Sources are the places a toolkit can come from: NVIDIA's redist server
// (or a mirror), NVIDIA's wheels on a PyPI index, or auto (NVIDIA, falling
// back to PyPI when the server cannot be reached).
var Sources = []string{"nvidia", "pypi", "auto"}

// Options are what every install and release listing shares.
type Options struct {
	Store    *store.Store
	CacheDir string // the download cache: release index, manifests, archives
	// Mirror is a base URL laid out like NVIDIA's server (http://, https://
	// or file://); "" means NVIDIA's server.
	Mirror string
	// PyPIIndex is a PEP 691/503 simple index; "" means pypi.DefaultIndex.
	PyPIIndex string
	// UserAgent is sent to the PyPI index ("cudaenv/<version>").
	UserAgent string
	Offline   bool // the download cache only
	Refresh   bool // ask the server for the release index even if a cached one is fresh
	Jobs      int  // parallel downloads, all of a command's versions together; <= 0 means max(4, CPU cores)
	// GOOS and GOARCH are this machine's, for the default platform.
	GOOS, GOARCH string
	// Driver returns this machine's NVIDIA driver version, "" for none. It
	// is asked only for Request.For; nil means no driver.
	Driver func(context.Context) string
	// Reporter hears what an install decides and does; nil hears nothing.
	Reporter Reporter
	// Changed runs after an install changed the store (the CLI refreshes
	// the shims there).
	Changed func()
	// Notice, if not nil, hears one line per retry of a download or an
	// index request (what failed, what happens next).
	Notice func(line string)
	// SettingsFile is named in errors that say how to change a setting.
	SettingsFile string
}

// Installer plans and carries out installs with one set of Options.
type Installer struct {
	opts     Options
	client   *fetch.Client
	fellBack bool // FallbackToPyPI was reported
	// fromTables: the request's versions are cudaenv's table's exact
	// answer (forTorchTables), so a dry run that cannot list the files
	// offline still says what it would install.
	fromTables bool
	// said keeps the warnings already given in this command, shared by
	// the copies the pipeline plans with: a wheel skipped is said once
	// however many plans (releases tried, --for's targets) meet it.
	said *saidOnce
	// shared is what the copies of an Installer a command makes (one per
	// pipeline job) share.
	shared *installerShared
	// forPins is what Request.For resolved to, for the CUDA plan
	// (forFramework); nil without --for.
	forPins *forPins
}

// installerShared is the command's one PyPI index, whose pages are read
// once (pypiIndex).
type installerShared struct {
	indexOnce sync.Once
	index     *pypi.Index
	indexErr  error
}

// saidOnce is a set of warnings given, safe for the pipeline's jobs.
type saidOnce struct {
	mu   sync.Mutex
	seen map[string]bool
}

// first reports whether key is new, and marks it said; a nil set says
// everything is new.
func (s *saidOnce) first(key string) bool {
	if s == nil {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen[key] {
		return false
	}
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	s.seen[key] = true
	return true
}

// New checks the options (the mirror's scheme) and returns an Installer.
func New(o Options) (*Installer, error) {
	if err := checkMirror(o.Mirror); err != nil {
		return nil, err
	}
	return &Installer{opts: o, said: &saidOnce{}, shared: &installerShared{}, client: &fetch.Client{
		Base:     strings.TrimRight(o.Mirror, "/"),
		CacheDir: o.CacheDir,
		Offline:  o.Offline,
		Jobs:     o.Jobs,
		Notice:   o.Notice,
		// One budget for the stalls of all the command's small documents,
		// NVIDIA's and PyPI's alike (#19).
		Budget: fetch.NewBudget(0),
		// One set of download and unpacking slots for all the versions
		// the command installs at once (pipeline).
		Slots: fetch.NewSlots(o.Jobs, 0),
		// A system store's users check its files on their own: it owns
		// them, never linked to the admin's cache.
		OwnFiles: o.Store != nil && o.Store.Shared,
	}}, nil
}

func checkMirror(base string) error {
	if base == "" {
		return nil
	}
	low := strings.ToLower(base)
	if !strings.HasPrefix(low, "http://") && !strings.HasPrefix(low, "https://") && !strings.HasPrefix(low, "file://") {
		return fmt.Errorf("mirror %q: use an http://, https:// or file:// URL laid out like https://developer.download.nvidia.com/compute", base)
	}
	return nil
}

// Reporter hears an install as it happens. The CLI prints each Event and
// draws a progress bar per download.
type Reporter interface {
	Event(Event)
	// Progress returns what one entry's download reports to (label is
	// the entry, "CUDA 12.4.1"); nil reports nothing.
	Progress(label string) Progress
}

// Progress receives one download's progress; Add and ComponentDone are
// called from many goroutines at once.
type Progress interface {
	// Start is called once with the bytes to obtain (cached archives
	// included) and the number of components.
	Start(totalBytes int64, components int)
	// Add reports bytes obtained; negative when a transfer starts over.
	Add(bytes int64)
	// ComponentDone reports a component verified and extracted.
	ComponentDone(id string)
	// Finish is called once when the download ends, also on failure.
	Finish()
}

// Event is one of FallbackToPyPI, SkippedWheel, UnlistedRelease,
// TorchTargets, Adding, LockUpdated, NotAsLocked or Result.
type Event interface{ event() }

// FallbackToPyPI: with source auto, NVIDIA's server could not be reached
// (Err says how), so the version comes from the PyPI index.
type FallbackToPyPI struct{ Err error }

// SkippedWheel: the PyPI index has no usable wheel for components of the
// release (Components; Reason is the first one's); the install goes on
// without them. Older, when set, names an older release that has them and
// how to take it.
type SkippedWheel struct {
	Label      string // CUDA 13.1.2
	Component  string // the first of Components
	Components []string
	Reason     error
	Older      string
}

// UnlistedRelease: the PyPI index has a CUDA release that cudaenv's table
// does not know; it is installed under its full version (Release) with the
// wheels its cuda-toolkit meta-package pins, else the newest that fit, and
// Note says so.
type UnlistedRelease struct {
	Release, Note string
}

// TorchTargets: Request.For named a PyTorch release built with CUDA and
// BundledCudnn; CUDA and Cudnn (the nearest release the server offers)
// are installed.
type TorchTargets struct {
	For, CUDA, BundledCudnn, Cudnn string
}

// Adding: the entry is installed but lacks components the request wants;
// they are added.
type Adding struct {
	Label   string
	Missing []string // component ids, sorted
	// Changed are components it has at other builds than the
	// requirements pin (install --for), replaced: "libcublas 13.1.0.3 →
	// 13.1.1.3".
	Changed []string
}

func (FallbackToPyPI) event()  {}
func (SkippedWheel) event()    {}
func (UnlistedRelease) event() {}
func (TorchTargets) event()    {}
func (Adding) event()          {}
func (Result) event()          {}

// Outcome says what an install did with one entry.
type Outcome int

const (
	Installed        Outcome = iota // fetched and put in the store (or completed: see Adding)
	AlreadyInstalled                // it has every component asked for; nothing fetched
	AlreadyLinked                   // a linked toolkit stands there; never replaced
)

// Result is one entry of the store after an install.
type Result struct {
	Outcome Outcome
	Entry   store.Entry
	Label   string // "CUDA 12.4.1", "cuDNN 9.5.1.17-cuda12"
	// Use is what follows `cudaenv use` to activate it: "12.4.1", or
	// "12 cudnn@9.5.1.17" for cuDNN (CUDA major first; the CUDA version
	// itself when it was installed in the same request).
	Use        string
	Components int           // Installed: archives fetched; AlreadyInstalled: archives it has
	Elapsed    time.Duration // Installed: time spent fetching and staging
	// Missing (AlreadyInstalled) are the components the request's
	// profile would add, and MissingBytes their download size: the entry
	// is left as it is unless the profile or components are named.
	Missing      []string
	MissingBytes int64
}

func (in *Installer) event(e Event) {
	if in.opts.Reporter != nil {
		in.opts.Reporter.Event(e)
	}
}

// Here is a working directory, to install what it selects when a request
// names no version, and to find the CUDA major of a cuDNN installed alone.
type Here struct {
	Dir        string
	Lookup     resolve.Lookup // the environment (CUDAENV_VERSION); nil means empty
	GlobalFile string
	// Warn, if not nil, hears each version file skipped on the way.
	Warn func(string)
}

func (h Here) find() (resolve.Selection, error) {
	lookup := h.Lookup
	if lookup == nil {
		lookup = func(string) (string, bool) { return "", false }
	}
	sel, _, err := resolve.Find(h.Dir, lookup, h.GlobalFile)
	if h.Warn != nil {
		for _, w := range sel.Warnings {
			h.Warn(w)
		}
	}
	return sel, err
}

// Request is one `cudaenv install`.
type Request struct {
	// Args are the versions as typed ("12.4", "cudnn@9.5"); none means
	// what Here selects.
	Args []string
	// For are PEP 508 requirements ("torch==2.15.0",
	// "jax[cuda13]==0.9.0", "vllm", "nvidia-cublas-cu12==12.4.5.8"): instead
	// of Args, install what they load of NVIDIA's, resolved together as pip
	// and uv resolve them on the package index (forFramework): one toolkit
	// with the builds they pin, named by its runtime's release, their cuDNN
	// and libraries. Two that no version satisfies together fail before
	// anything is downloaded. A lone torch release the index cannot answer
	// for is taken from cudaenv's tables (the CUDA build this machine's
	// driver runs and the cuDNN nearest to the one it bundles).
	For []string
	// Python is the CPython version ("3.12") whose framework wheel For
	// reads; "" means DefaultPython.
	Python string
	// DryRun plans and reports (WouldInstall) what would be installed,
	// with exact versions, and installs nothing.
	DryRun bool
	Here   Here
	// Source is nvidia ("" too), pypi or auto. Unless SourceTyped (the
	// user typed --source for this command), a version already installed
	// keeps the source its receipt names.
	Source      string
	SourceTyped bool
	// Profile is minimal, default ("" too) or full; Components, when set,
	// replaces it.
	Profile    string
	Components []string
	Platform   string // an NVIDIA platform key; "" means this machine's
	CUDAMajor  int    // cuDNN alone: the CUDA major of the build
	Force      bool   // reinstall what is installed
	// Repair (with Force) reinstalls an installed PyPI toolkit as its
	// receipt lists it: every component at the build it has, so one
	// install --for made with a framework's builds (torch 2.7.1's nvrtc
	// of 12.6.2 in 12.6.3) gets those back, not the release's own
	// (cudaenv verify --repair).
	Repair bool
	// Locked refuses to install unless a .cuda-version.lock lists exactly
	// what .cuda-version selects here, for this platform (CI: the lock is
	// never rewritten). Without it a lock that no longer matches is written
	// again, keeping every release that still matches.
	Locked bool
}

// checkSource is source, "" meaning nvidia, when it is one of Sources.
func checkSource(source string) (string, error) {
	if source == "" {
		source = "nvidia"
	}
	if !slices.Contains(Sources, source) {
		return "", fmt.Errorf("unknown source %q; use one of: %s", source, strings.Join(Sources, ", "))
	}
	return source, nil
}

// checkProfile is profile, "" meaning default, when it is one of
// fetch.Profiles.
func checkProfile(profile string) (string, error) {
	if profile == "" {
		profile = "default"
	}
	if !slices.Contains(fetch.Profiles, profile) {
		return "", fmt.Errorf("unknown profile %q; use one of: %s", profile, strings.Join(fetch.Profiles, ", "))
	}
	return profile, nil
}

// platformKey is the shape of NVIDIA's platform keys; the list itself
// grows with new releases, so only the shape is checked here.
var platformKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(linux|windows)-[a-z0-9_]+$`) })

// checkPlatform refuses a platform key that does not have the shape of
// NVIDIA's.
func checkPlatform(p string) error {
	if !platformKey().MatchString(p) {
		return fmt.Errorf("%q is not an NVIDIA platform key; use one like linux-x86_64, linux-sbsa, linux-aarch64 or windows-x86_64", p)
	}
	return nil
}

// Install installs what the request asks for. With no Args and no For,
// in a directory whose .cuda-version has a .cuda-version.lock beside it,
// it installs exactly what the lock lists (see Request.Locked). Otherwise
// it installs its CUDA versions and then its cuDNN (and other library)
// versions for the CUDA major of the CUDA planned (else Request.CUDAMajor,
// else the one Here selects). Each version starts downloading and
// unpacking as soon as it is planned, alongside the others (pipeline);
// results and events are reported in that order all the same, each
// version's as soon as those before it are done. The first version to fail
// cancels the others; a version that fails to plan lets those before it
// finish, as they would have one after another.
func (in *Installer) Install(ctx context.Context, req Request) ([]Result, error) {
	untold := req.Source == "" && !req.SourceTyped
	source, err := checkSource(req.Source)
	if err != nil {
		return nil, fmt.Errorf("install: %w", err)
	}
	req.Source = source
	platform := req.Platform
	if platform != "" {
		if err := checkPlatform(platform); err != nil {
			return nil, fmt.Errorf("install: %w", err)
		}
	}
	if platform == "" {
		var err error
		if platform, err = fetch.HostPlatform(in.opts.GOOS, in.opts.GOARCH); err != nil {
			return nil, err
		}
	}
	if len(req.Args) == 0 && len(req.For) == 0 {
		sel, err := req.Here.find()
		if err != nil {
			return nil, err
		}
		if lockPath, ok := lockOf(sel); ok && !sel.System() {
			lk, err := readLock(lockPath)
			if err != nil {
				return nil, err
			}
			if lk != nil {
				return in.installLocked(ctx, req, sel.Source.Path, sel.AsWritten(), lockPath, lk, platform)
			}
			if req.Locked {
				return nil, fmt.Errorf("install --locked: no %s beside %s; write it with cudaenv lock and commit it", lockfile.FileName, sel.Source.Path)
			}
		} else if req.Locked {
			return nil, fmt.Errorf("install --locked installs what a .cuda-version.lock lists, and the versions here come from %s; run it where a .cuda-version and its lock are", sel.Source)
		}
	} else if req.Locked {
		return nil, errors.New("install --locked installs what .cuda-version.lock lists; drop the version arguments and --for")
	}
	specs, err := in.Specs(ctx, req)
	if err != nil {
		return nil, err
	}
	profile, err := checkProfile(req.Profile)
	if err != nil {
		return nil, fmt.Errorf("install: %w", err)
	}
	explicit := req.Profile != "" || len(req.Components) > 0
	if len(req.For) > 0 && !explicit {
		// What the framework's extensions build against, added to an
		// installed version that lacks it.
		profile, explicit = pypi.ProfileExtensions, true
	}

	if req.DryRun {
		return nil, in.dryRun(ctx, req, specs, Target{Source: source, Platform: platform, Profile: profile, Components: req.Components, Explicit: explicit}, untold)
	}

	st := in.opts.Store
	st.CleanStaging() // staging folders no running install owns

	pp := in.newPipeline(ctx, req.Force)
	cudaMajor := req.CUDAMajor
	installedCUDA := false
	useWith := "" // the CUDA installed here, named in the cuDNN's hint
	for _, sp := range specs {
		if sp.Tool != version.CUDA {
			continue
		}
		pl, ok := pp.plan(func(ctx context.Context, in *Installer) (*Plan, error) {
			pins := in.pinsFor(sp)
			if pins == nil && req.Repair {
				pins = installedBuilds(st, sp, platform)
			}
			return in.Plan(ctx, sp, Target{Source: req.sourceFor(st, sp, 0), Platform: platform, Profile: profile, Components: req.Components, Explicit: explicit, applySkips: true, pins: pins})
		})
		if !ok {
			return pp.wait()
		}
		// The plan names the entry, so the libraries' plans need not wait
		// for CUDA to be installed.
		installedCUDA = true
		if v, err := version.Parse(pl.Name); err == nil {
			cudaMajor, useWith = v.Major(), v.String()
		}
	}
	for _, sp := range specs {
		if !sp.Tool.Library() {
			continue
		}
		if cudaMajor == 0 {
			if c := selectedCUDA(req.Here, st); c != nil {
				cudaMajor = c.Version.Major()
			}
		}
		if cudaMajor == 0 {
			err := fmt.Errorf("install: %s is built per CUDA major; install it with a CUDA version (cudaenv install 12.4 %s@%s), select a CUDA version first, or pass --cuda-major 12",
				sp.Tool.Title(), sp.Tool, strings.TrimPrefix(sp.String(), string(sp.Tool)+"@"))
			pp.plan(func(context.Context, *Installer) (*Plan, error) { return nil, err })
			return pp.wait()
		}
		var comps []string
		if !installedCUDA {
			comps = req.Components
		}
		src := req.librarySource(st, sp, cudaMajor, untold)
		_, ok := pp.plan(func(ctx context.Context, in *Installer) (*Plan, error) {
			p, err := in.Plan(ctx, sp, Target{Source: src, Platform: platform, Profile: "full", Components: comps, CUDAMajor: cudaMajor, applySkips: true})
			if p != nil {
				p.useWith = useWith
			}
			return p, err
		})
		if !ok {
			break
		}
	}
	results, err := pp.wait()
	if err != nil || !installedLibrary(results) {
		return results, err
	}
	// A library brings what its headers include and its libraries load
	// into the toolkit it is used with.
	installed := map[int]string{}
	for _, r := range results {
		if r.Entry.Kind == store.CUDA {
			installed[r.Entry.Version.Major()] = r.Entry.Name
		}
	}
	more, err := in.bringNeeds(ctx, req, results, installed, platform)
	return append(results, more...), err
}

func installedLibrary(results []Result) bool {
	for _, r := range results {
		if r.Entry.Kind.Library() {
			return true
		}
	}
	return false
}

// pinsFor is the builds Request.For pins for a CUDA spec of the release
// it resolved to; nil otherwise.
func (in *Installer) pinsFor(sp version.Spec) *forPins {
	if in.forPins == nil || sp.Tool != version.CUDA || sp.String() != in.forPins.release {
		return nil
	}
	return in.forPins
}

// sourceFor is the source a spec is installed from: the one its installed
// entry came from unless --source was typed (rememberedSource), else the
// request's.
func (req Request) sourceFor(st *store.Store, sp version.Spec, cudaMajor int) string {
	if !req.SourceTyped {
		if s := rememberedSource(st, sp, cudaMajor); s != "" {
			return s
		}
	}
	return req.Source
}

// librarySource is where a library spec is installed from (Install and
// its dry run alike): the source its installed entry came from unless
// --source was typed (sourceFor), PyPI for a library NVIDIA's server has
// none of and for the wheel a framework pins, and NVIDIA's archive, else
// its wheel, when no source was named anywhere (untold).
func (req Request) librarySource(st *store.Store, sp version.Spec, cudaMajor int, untold bool) string {
	src := req.sourceFor(st, sp, cudaMajor)
	switch {
	case !fetch.Product(sp.Tool).Redist() && (!req.SourceTyped || len(req.For) > 0):
		// Its only source (for a framework's pin even under --source
		// nvidia, which names where the toolkit comes from).
		src = "pypi"
	case !req.SourceTyped && len(req.For) > 0 && sp.Tool != version.Cudnn:
		// The wheel a framework pins.
		src = "pypi"
	case untold && src == "nvidia" && sp.Tool != version.Cudnn:
		// NVIDIA's archive, else its wheel: no --source needed.
		src = "auto"
	}
	return src
}

// Specs are the versions a request installs: For's targets (the cuDNN
// among those Request.Source offers), else Args, else what Here selects.
func (in *Installer) Specs(ctx context.Context, req Request) ([]version.Spec, error) {
	if len(req.For) > 0 {
		if len(req.Args) > 0 {
			return nil, errors.New("install --for picks the versions itself; drop the version arguments")
		}
		platform := req.Platform
		if platform == "" {
			var err error
			if platform, err = fetch.HostPlatform(in.opts.GOOS, in.opts.GOARCH); err != nil {
				return nil, err
			}
		}
		return in.forFramework(ctx, req, platform)
	}
	if len(req.Args) == 0 {
		sel, err := req.Here.find()
		if err != nil {
			return nil, err
		}
		if sel.Source.Kind == resolve.None || sel.System() {
			return nil, errors.New("install needs a version, e.g. cudaenv install 12.4 cudnn@9.5 (with none, it installs what .cuda-version selects, and nothing selects a version here)")
		}
		return sel.AsWritten(), nil
	}
	specs, _, err := parseArgs("install", req.Args, "install: system is not installable; name a version, e.g. cudaenv install 12.4")
	return specs, err
}

// parseArgs reads versions as a command's arguments give them, and the
// settings beside them (libraries=off); system is refused with noSystem.
func parseArgs(cmd string, args []string, noSystem string) ([]version.Spec, resolve.Options, error) {
	specs, opts, err := resolve.ParseOptions(cmd, []byte(strings.Join(args, " ")))
	if err != nil {
		var se *resolve.SyntaxError
		if errors.As(err, &se) {
			se.Line = 0
		}
		return nil, resolve.Options{}, err
	}
	for _, sp := range specs {
		if sp.Kind == version.System {
			return nil, resolve.Options{}, errors.New(noSystem)
		}
	}
	return specs, opts, nil
}

// pypiIndex is the command's index (Options.PyPIIndex, or the public
// one), opened once: a page is read once per command, and kept in the
// download cache as pip and uv keep it (pypi.WithPageCache).
func (in *Installer) pypiIndex() (*pypi.Index, error) {
	sh := in.shared
	sh.indexOnce.Do(func() {
		opts := []pypi.IndexOption{}
		if in.opts.CacheDir != "" {
			opts = append(opts, pypi.WithPageCache(in.opts.CacheDir, in.opts.Refresh))
		}
		sh.index, sh.indexErr = in.newPyPIIndex(opts...)
	})
	return sh.index, sh.indexErr
}

// newPyPIIndex opens Options.PyPIIndex, or the public index, afresh.
func (in *Installer) newPyPIIndex(extra ...pypi.IndexOption) (*pypi.Index, error) {
	base := in.opts.PyPIIndex
	if base == "" {
		base = pypi.DefaultIndex
	}
	var opts []pypi.IndexOption
	if in.opts.UserAgent != "" {
		opts = append(opts, pypi.WithUserAgent(in.opts.UserAgent))
	}
	if in.opts.Notice != nil {
		opts = append(opts, pypi.WithNotice(in.opts.Notice))
	}
	// Project pages are small documents, limited as the client limits its
	// own (a short stall limit), within pypi's total per page.
	l := in.client.DocumentLimits()
	l.Total = min(l.Total, time.Minute)
	opts = append(opts, pypi.WithLimits(l), pypi.WithBudget(in.client.Budget))
	idx, err := pypi.NewIndex(base, append(opts, extra...)...)
	if err != nil {
		return nil, fmt.Errorf("CUDAENV_PYPI_INDEX: %w", err)
	}
	return idx, nil
}

// PruneCache empties cudaenv's folders in the download cache dir and
// returns the bytes it freed. A folder that is not cudaenv's is refused.
func PruneCache(dir string) (int64, error) {
	before := fetch.CacheUsage(dir)
	if _, err := fetch.PruneCache(dir); err != nil {
		return 0, err
	}
	return before - fetch.CacheUsage(dir), nil
}

// CacheUsage is the bytes cudaenv's downloads take in the cache dir.
func CacheUsage(dir string) int64 { return fetch.CacheUsage(dir) }

// AbandonedImports lists the folders killed bundle imports left in the
// cache dir, and the bytes they hold; it removes nothing.
func AbandonedImports(dir string) ([]string, int64) { return fetch.AbandonedImports(dir) }
