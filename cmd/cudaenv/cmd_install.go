package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/cudaenv/cudaenv/fetch"
	"github.com/cudaenv/cudaenv/internal/resolve"
	"github.com/cudaenv/cudaenv/internal/version"
	"github.com/cudaenv/cudaenv/store"
)

func installCommands(e *env) []*cli.Command {
	return []*cli.Command{
		{
			Name:      "install",
			Usage:     "download and install CUDA toolkits and cuDNN from NVIDIA's redistributables",
			ArgsUsage: "[VERSION] [cudnn@VERSION]   (none: what this directory selects)",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "profile", Value: "default", Usage: "minimal (nvcc, cudart, cccl: compile and run), default (the toolkit without drivers, GUI profilers and docs) or full"},
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
				&cli.StringFlag{Name: "for", Usage: "install the CUDA and the nearest cuDNN a PyTorch release was built with, e.g. --for torch==2.5.1"},
			},
			Action: func(c *cli.Context) error { return install(e, c) },
		},
		{
			Name:      "ls-remote",
			Usage:     "list releases available for download, newest last; * marks installed ones",
			ArgsUsage: "[cuda|cudnn] [PREFIX]",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "mirror", Usage: "base URL laid out like NVIDIA's (also CUDAENV_MIRROR)"},
				&cli.BoolFlag{Name: "refresh", Usage: "ignore the cached index (kept for a day)"},
				&cli.BoolFlag{Name: "offline", Usage: "use the cached index only"},
			},
			Action: func(c *cli.Context) error { return lsRemote(e, c) },
		},
		{
			Name:  "cache",
			Usage: "manage the download cache",
			Subcommands: []*cli.Command{{
				Name:  "prune",
				Usage: "remove every cached download, manifest and index",
				Action: func(c *cli.Context) error {
					if c.NArg() > 0 {
						return errors.New("cache prune takes no arguments; it empties the whole download cache")
					}
					if err := os.RemoveAll(e.dirs.Cache); err != nil {
						return fmt.Errorf("cache prune: %w", err)
					}
					fmt.Fprintf(e.stdout, "emptied %s\n", e.dirs.Cache)
					return nil
				},
			}},
		},
	}
}

func (e *env) fetchClient(c *cli.Context) (*fetch.Client, error) {
	base := c.String("mirror")
	if base == "" {
		var err error
		if base, err = e.setting("mirror"); err != nil {
			return nil, err
		}
	}
	if err := checkMirror(base); err != nil {
		return nil, err
	}
	return &fetch.Client{
		Base:     strings.TrimRight(base, "/"),
		CacheDir: e.dirs.Cache,
		Offline:  c.Bool("offline"),
		Jobs:     c.Int("jobs"),
	}, nil
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

func install(e *env, c *cli.Context) error {
	client, err := e.fetchClient(c)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var specs []version.Spec
	if forArg := c.String("for"); forArg != "" {
		if c.NArg() > 0 {
			return errors.New("install --for picks the versions itself; drop the version arguments")
		}
		specs, err = forTorch(ctx, e, client, forArg)
	} else {
		specs, err = installSpecs(e, c.Args().Slice())
	}
	if err != nil {
		return err
	}
	platform := c.String("platform")
	if platform != "" && !platformKey.MatchString(platform) {
		return fmt.Errorf("install: %q is not an NVIDIA platform key; use one like linux-x86_64, linux-sbsa, linux-aarch64 or windows-x86_64", platform)
	}
	if platform == "" {
		if platform, err = fetch.HostPlatform(e.goos, runtime.GOARCH); err != nil {
			return err
		}
	}
	var components []string
	if s := c.String("components"); s != "" {
		for _, id := range strings.Split(s, ",") {
			if id = strings.TrimSpace(id); id != "" {
				components = append(components, id)
			}
		}
	}
	source, err := installSource(e, c.String("source"))
	if err != nil {
		return err
	}
	profile := c.String("profile")
	if !contains(fetch.Profiles, profile) {
		return fmt.Errorf("install: unknown profile %q; use one of: %s", profile, strings.Join(fetch.Profiles, ", "))
	}

	st := e.store()
	cleanStaleStaging(st)

	cudaMajor := c.Int("cuda-major")
	installedCUDA := false
	for _, sp := range specs {
		if sp.Tool != version.CUDA {
			continue
		}
		ent, err := installOne(ctx, e, c, client, st, fetch.CUDA, sp, fetch.Selection{Platform: platform, Profile: profile, Components: components}, source)
		if err != nil {
			return err
		}
		cudaMajor = ent.Version.Major()
		installedCUDA = true
	}
	for _, sp := range specs {
		if sp.Tool != version.Cudnn {
			continue
		}
		if cudaMajor == 0 {
			if r, err := resolveHere(e); err == nil && r.CUDA != nil {
				cudaMajor = r.CUDA.Version.Major()
			}
		}
		if cudaMajor == 0 {
			return errors.New("install: cuDNN is built per CUDA major; install it with a CUDA version (cudaenv install 12.4 cudnn@9.5), select a CUDA version first, or pass --cuda-major 12")
		}
		var comps []string
		if !installedCUDA {
			comps = components
		}
		if _, err := installOne(ctx, e, c, client, st, fetch.CUDNN, sp, fetch.Selection{Platform: platform, Profile: "full", Components: comps, CUDAMajor: cudaMajor}, source); err != nil {
			return err
		}
	}
	return nil
}

// platformKey is the shape of NVIDIA's platform keys; the list itself
// grows with new releases, so only the shape is checked here.
var platformKey = regexp.MustCompile(`^(linux|windows)-[a-z0-9_]+$`)

// installSpecs reads the specs to install; with none, what the working
// directory selects.
func installSpecs(e *env, args []string) ([]version.Spec, error) {
	if len(args) == 0 {
		sel, _, err := resolve.Find(e.cwd, e.lookup, e.dirs.GlobalFile())
		if err != nil {
			return nil, err
		}
		if sel.Source.Kind == resolve.None || sel.System() {
			return nil, errors.New("install needs a version, e.g. cudaenv install 12.4 cudnn@9.5 (with none, it installs what .cuda-version selects, and nothing selects a version here)")
		}
		return sel.Specs, nil
	}
	specs, err := resolve.Parse("install", []byte(strings.Join(args, " ")))
	if err != nil {
		var se *resolve.SyntaxError
		if errors.As(err, &se) {
			se.Line = 0
		}
		return nil, err
	}
	for _, sp := range specs {
		if sp.Kind == version.System {
			return nil, errors.New("install: system is not installable; name a version, e.g. cudaenv install 12.4")
		}
	}
	return specs, nil
}

// plan is what one install will fetch and how to name it in the store.
type plan struct {
	kind     store.Kind
	name     string
	label    string // "CUDA 12.4.1", "cuDNN 9.5.1.17-cuda12"
	arts     []fetch.Artifact
	receipt  store.Receipt // source, URL, platform, profile, manifest hash
	cudaMaj  int           // cuDNN: the CUDA major of the build
	reselect func(ids []string) ([]fetch.Artifact, error)
}

// installOne plans a spec with the chosen source and installs it.
func installOne(ctx context.Context, e *env, c *cli.Context, client *fetch.Client, st *store.Store, p fetch.Product, sp version.Spec, sel fetch.Selection, source string) (store.Entry, error) {
	var pl *plan
	var err error
	switch source {
	case "pypi":
		pl, err = planPyPI(ctx, e, client, p, sp, sel)
	case "auto":
		// Ask NVIDIA once, briefly: an unreachable server means PyPI.
		probe := *client
		probe.Retries, probe.RetryDelay = 1, 200*time.Millisecond
		pl, err = planNVIDIA(ctx, c, &probe, p, sp, sel)
		if err != nil && unreachable(err) && !client.Offline {
			fmt.Fprintf(e.stderr, "cudaenv: NVIDIA's server cannot be reached (%v); installing from PyPI instead\n", err)
			pl, err = planPyPI(ctx, e, client, p, sp, sel)
		}
	default:
		pl, err = planNVIDIA(ctx, c, client, p, sp, sel)
		if err != nil && unreachable(err) {
			err = fmt.Errorf("%w; check the network, set CUDAENV_MIRROR to a mirror, or try --source pypi", err)
		}
	}
	if err != nil {
		return store.Entry{}, err
	}

	unlock, err := st.Lock(pl.kind, pl.name)
	if err != nil {
		return store.Entry{}, err
	}
	defer unlock()
	if have, ok := st.Get(pl.kind, pl.name); ok && have.Err == nil && !c.Bool("force") {
		if have.Linked() {
			fmt.Fprintf(e.stdout, "%s is already linked to %s\n", pl.label, have.Path)
			return have, nil
		}
		missing := missingComponents(have, pl.arts)
		if len(missing) == 0 {
			fmt.Fprintf(e.stdout, "%s is already installed (cudaenv install --force reinstalls it)\n", pl.label)
			return have, nil
		}
		// Add what is missing: the union is fetched again (the archives
		// already installed come from the cache) and replaces the old tree.
		if pl.arts, err = pl.reselect(append(componentIDs(have), missing...)); err != nil {
			return store.Entry{}, fmt.Errorf("install %s: %w", pl.label, err)
		}
		pl.receipt.Profile = ""
		if !c.Bool("quiet") {
			fmt.Fprintf(e.stderr, "adding %s to %s\n", strings.Join(missing, ", "), pl.label)
		}
	}

	client.Progress = newProgress(e, pl.label, c.Bool("quiet"))
	start := time.Now()
	ent, err := st.Install(pl.kind, pl.name, func(stage string) (store.Receipt, error) {
		res, err := client.Fetch(ctx, pl.arts, stage)
		if err != nil {
			if ctx.Err() != nil {
				return store.Receipt{}, fmt.Errorf("install %s: interrupted; nothing was installed", pl.label)
			}
			return store.Receipt{}, fmt.Errorf("install %s: %w", pl.label, err)
		}
		return withComponents(pl.receipt, res), nil
	})
	if err != nil {
		return store.Entry{}, err
	}
	afterStoreChange(e)
	fmt.Fprintf(e.stdout, "installed %s (%d components) in %.1fs: %s\n", pl.label, len(pl.arts), time.Since(start).Seconds(), ent.Dir)
	if pl.kind == store.CUDA {
		fmt.Fprintf(e.stdout, "activate it with: cudaenv use %s\n", pl.name)
	} else {
		fmt.Fprintf(e.stdout, "activate it with: cudaenv use %d cudnn@%s\n", pl.cudaMaj, ent.Version)
	}
	return ent, nil
}

// planNVIDIA resolves the spec against NVIDIA's release index (or a
// mirror of it) and selects the archives.
func planNVIDIA(ctx context.Context, c *cli.Context, client *fetch.Client, p fetch.Product, sp version.Spec, sel fetch.Selection) (*plan, error) {
	releases, err := client.Releases(ctx, p, c.Bool("refresh"))
	if err != nil {
		return nil, fmt.Errorf("install %s: %w", sp, err)
	}
	rel, err := pickRelease(p, sp, releases)
	if err != nil {
		return nil, err
	}
	m, err := client.Manifest(ctx, p, rel)
	if err != nil {
		return nil, fmt.Errorf("install %s %s: %w", p, rel, err)
	}
	arts, err := m.Select(sel)
	if err != nil {
		return nil, fmt.Errorf("install %s %s: %w", p, rel, err)
	}
	url := client.Base
	if url == "" {
		url = fetch.DefaultBase
	}
	pl := &plan{
		arts:    arts,
		receipt: store.Receipt{Source: "nvidia", URL: url, Platform: sel.Platform, Profile: sel.Profile, ManifestSHA256: m.SHA256},
		reselect: func(ids []string) ([]fetch.Artifact, error) {
			s := sel
			s.Profile, s.Components = "", ids
			return m.Select(s)
		},
	}
	if len(sel.Components) > 0 {
		pl.receipt.Profile = ""
	}
	if err := pl.setName(p, rel, cudnnVersion(m, arts), sel.CUDAMajor); err != nil {
		return nil, err
	}
	return pl, nil
}

// setName fills kind, name and label: CUDA by release, cuDNN by the cudnn
// component's own four-part version and the CUDA major of the build.
func (pl *plan) setName(p fetch.Product, rel, cudnnVer string, cudaMajor int) error {
	if p == fetch.CUDNN {
		v, err := version.Parse(cudnnVer)
		if err != nil {
			return fmt.Errorf("install cudnn %s: %w", rel, err)
		}
		pl.kind, pl.name, pl.cudaMaj = store.Cudnn, store.CudnnName(v, cudaMajor), cudaMajor
		pl.label = "cuDNN " + pl.name
		return nil
	}
	v, err := version.Parse(rel)
	if err != nil {
		return fmt.Errorf("install cuda %s: %w", rel, err)
	}
	pl.kind, pl.name, pl.label = store.CUDA, v.String(), "CUDA "+v.String()
	return nil
}

// unreachable reports whether err means NVIDIA's server could not be
// reached at all (as opposed to answering with an error).
func unreachable(err error) bool {
	if errors.Is(err, fetch.ErrOffline) {
		return false
	}
	var ne net.Error
	var oe *net.OpError
	var dnsErr *net.DNSError
	return errors.As(err, &ne) || errors.As(err, &oe) || errors.As(err, &dnsErr) ||
		strings.Contains(err.Error(), "connection refused") || strings.Contains(err.Error(), "no such host")
}

// pickRelease finds the newest release matching the spec.
func pickRelease(p fetch.Product, sp version.Spec, releases []string) (string, error) {
	rel, ok := bestOf(sp, releases)
	if !ok {
		var near []string
		for _, r := range releases {
			if v, err := version.Parse(r); err == nil && sp.Kind == version.Prefix && v.Major() == sp.Prefix.Major() {
				near = append(near, v.String())
			}
		}
		hint := "see: cudaenv ls-remote " + string(p)
		if len(near) > 0 {
			hint = "available: " + strings.Join(near, ", ")
		}
		return "", fmt.Errorf("install: no %s release matches %s; %s", p, strings.TrimPrefix(sp.String(), "cudnn@"), hint)
	}
	return rel, nil
}

// bestOf returns the newest of names (release labels) that the spec
// matches; names that are not versions are skipped.
func bestOf(sp version.Spec, names []string) (string, bool) {
	var vs []version.Version
	byString := map[string]string{}
	for _, n := range names {
		if v, err := version.Parse(n); err == nil {
			vs = append(vs, v)
			byString[v.String()] = n
		}
	}
	best, ok := version.Best(sp, vs)
	return byString[best.String()], ok
}

// cudnnVersion is the cudnn component's own four-part version (9.5.1.17),
// which names the store entry; the release label (9.5.1) is the fallback.
func cudnnVersion(m *fetch.Manifest, arts []fetch.Artifact) string {
	for _, a := range arts {
		if a.Component == "cudnn" && a.Version != "" {
			return a.Version
		}
	}
	return m.Version
}

func componentIDs(e store.Entry) []string {
	var ids []string
	for _, c := range e.Receipt.Components {
		ids = append(ids, c.ID)
	}
	return ids
}

func missingComponents(have store.Entry, arts []fetch.Artifact) []string {
	got := map[string]bool{}
	for _, c := range have.Receipt.Components {
		got[c.ID] = true
	}
	var missing []string
	for _, a := range arts {
		if !got[a.Component] && !(a.Component == "cccl" && got["cuda_cccl"]) && !(a.Component == "cuda_cccl" && got["cccl"]) {
			missing = append(missing, a.Component)
		}
	}
	sort.Strings(missing)
	return missing
}

// withComponents completes a receipt with what Fetch installed.
func withComponents(r store.Receipt, res *fetch.Result) store.Receipt {
	licenses := map[string]bool{}
	for _, ic := range res.Components {
		r.Components = append(r.Components, store.Component{ID: ic.ID, Version: ic.Version, SHA256: ic.SHA256, Size: ic.Size, License: ic.License})
		if ic.License != "" {
			licenses[ic.License] = true
		}
	}
	for l := range licenses {
		r.Licenses = append(r.Licenses, l)
	}
	sort.Strings(r.Licenses)
	return r
}

// cleanStaleStaging removes staging folders that no running install owns.
func cleanStaleStaging(st *store.Store) {
	st.CleanStaging()
}

func lsRemote(e *env, c *cli.Context) error {
	client, err := e.fetchClient(c)
	if err != nil {
		return err
	}
	args := c.Args().Slice()
	p := fetch.CUDA
	if len(args) > 0 && (args[0] == "cuda" || args[0] == "cudnn") {
		p = fetch.Product(args[0])
		args = args[1:]
	}
	if len(args) > 1 {
		return errors.New("ls-remote takes at most a product and a prefix, e.g. cudaenv ls-remote cudnn 9")
	}
	var prefix version.Version
	if len(args) == 1 {
		v, err := version.Parse(args[0])
		if err != nil {
			return fmt.Errorf("ls-remote: %q is neither cuda, cudnn nor a version prefix; e.g. cudaenv ls-remote cudnn 9", args[0])
		}
		prefix = v
	}
	releases, err := client.Releases(context.Background(), p, c.Bool("refresh"))
	if err != nil {
		return err
	}
	kind := store.CUDA
	if p == fetch.CUDNN {
		kind = store.Cudnn
	}
	installed := map[string]bool{}
	list, _ := e.store().List(kind)
	for _, ent := range list {
		installed[ent.Version.String()] = true
		if kind == store.Cudnn && len(ent.Version) > 3 {
			installed[ent.Version[:3].String()] = true
		}
	}
	for _, r := range releases {
		v, err := version.Parse(r)
		if err != nil || (prefix != nil && !v.HasPrefix(prefix)) {
			continue
		}
		mark := " "
		if installed[v.String()] {
			mark = "*"
		}
		fmt.Fprintf(e.stdout, "%s %s\n", mark, r)
	}
	return nil
}

// progress shows a bar on a terminal and plain lines elsewhere.
type progress struct {
	w      io.Writer
	label  string
	quiet  bool
	bar    *progressbar.ProgressBar
	mu     sync.Mutex
	done   atomic.Int64
	total  int
	bytes  int64
	isTerm bool
}

func newProgress(e *env, label string, quiet bool) *progress {
	p := &progress{w: e.stderr, label: label, quiet: quiet}
	if f, ok := e.stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.isTerm = true
	}
	return p
}

func (p *progress) Start(total int64, components int) {
	p.total, p.bytes = components, total
	if p.quiet {
		return
	}
	if p.isTerm {
		p.bar = progressbar.NewOptions64(total,
			progressbar.OptionSetWriter(p.w),
			progressbar.OptionShowBytes(true),
			progressbar.OptionSetDescription(fmt.Sprintf("%s [0/%d]", p.label, components)),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
		return
	}
	fmt.Fprintf(p.w, "%s: %d components, %s\n", p.label, components, humanBytes(total))
}

func (p *progress) Add(n int64) {
	if p.bar != nil {
		p.bar.Add64(n)
	}
}

func (p *progress) ComponentDone(id string) {
	n := p.done.Add(1)
	if p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.Describe(fmt.Sprintf("%s [%d/%d]", p.label, n, p.total))
		return
	}
	fmt.Fprintf(p.w, "  %s done (%d/%d)\n", id, n, p.total)
}

func (p *progress) Finish() {
	if p.bar != nil {
		p.bar.Finish()
	}
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// forTorch turns --for torch==X into a CUDA spec (major.minor of the build
// this driver runs) and the cuDNN release nearest to the one the wheels
// bundle, among those the mirror offers.
func forTorch(ctx context.Context, e *env, client *fetch.Client, arg string) ([]version.Spec, error) {
	cuda, bundled, err := torchTargets(e, arg)
	if err != nil {
		return nil, err
	}
	cudaSpec, err := version.ParseSpec(cuda)
	if err != nil {
		return nil, fmt.Errorf("install --for: %s: %w", cuda, err)
	}
	specs := []version.Spec{cudaSpec}
	want, err := version.Parse(bundled)
	if err != nil {
		return specs, nil // no cuDNN known for this build
	}
	releases, err := client.Releases(ctx, fetch.CUDNN, false)
	if err != nil {
		return nil, fmt.Errorf("install --for: %w", err)
	}
	near := nearestRelease(want, releases)
	if near == nil {
		return specs, nil
	}
	fmt.Fprintf(e.stderr, "%s was built with CUDA %s and cuDNN %s; installing CUDA %s and cuDNN %s\n", arg, cuda, bundled, cuda, near)
	return append(specs, version.Spec{Tool: version.Cudnn, Kind: version.Prefix, Prefix: near}), nil
}

// nearestRelease is the release of want's major closest to want: the same
// minor if there is one (newest patch), else the nearest minor, newer on a tie.
func nearestRelease(want version.Version, releases []string) version.Version {
	var best version.Version
	bestDist := -1
	for _, r := range releases {
		v, err := version.Parse(r)
		if err != nil || v.Major() != want.Major() || len(v) < 2 || len(want) < 2 {
			continue
		}
		d := v[1] - want[1]
		if d < 0 {
			d = -d
		}
		if bestDist < 0 || d < bestDist || (d == bestDist && version.Compare(v, best) > 0) {
			best, bestDist = v, d
		}
	}
	return best
}
