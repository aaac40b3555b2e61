package install

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/cudaenv/cudaenv/fetch"
	"github.com/cudaenv/cudaenv/fetch/pypi"
	"github.com/cudaenv/cudaenv/internal/bundle"
	"github.com/cudaenv/cudaenv/internal/version"
	"github.com/cudaenv/cudaenv/store"
)

// ExportRequest is one `cudaenv bundle export`: versions as install takes
// them, for one or several platforms.
type ExportRequest struct {
	Args       []string
	Platforms  []string // NVIDIA platform keys; none means this machine's
	Source     string   // nvidia ("" too), pypi or auto
	Profile    string   // minimal, default ("" too) or full
	Components []string // instead of the profile
	CUDAMajor  int      // cuDNN alone: the CUDA major of the build
}

// Exported says what a bundle holds.
type Exported struct {
	Entries []bundle.Entry
	Files   int   // members after the index
	Bytes   int64 // their total size: the archives (or wheels) and manifests
}

// Export writes a bundle of the requested versions to w: for each
// platform, the plan install would make, then the verified archives (or
// wheels) from the download cache, downloading what it lacks, and the
// manifests (or wheel lists) they were checked against. Installed trees
// are never read: only the original archives go in.
func (in *Installer) Export(ctx context.Context, req ExportRequest, w io.Writer) (*Exported, error) {
	if len(req.Args) == 0 {
		return nil, errors.New("bundle export needs versions, e.g. cudaenv bundle export 12.4 cudnn@9.5 -o cuda.tar")
	}
	specs, err := in.Specs(ctx, Request{Args: req.Args})
	if err != nil {
		return nil, err
	}
	platforms, err := in.platforms(req.Platforms)
	if err != nil {
		return nil, err
	}
	source, profile, err := checkSourceProfile(req.Source, req.Profile)
	if err != nil {
		return nil, err
	}
	var plans []*Plan
	for _, platform := range platforms {
		major := req.CUDAMajor
		hasCUDA := false
		for _, sp := range specs {
			if sp.Tool != version.CUDA {
				continue
			}
			pl, err := in.Plan(ctx, sp, Target{Source: source, Platform: platform, Profile: profile, Components: req.Components})
			if err != nil {
				return nil, err
			}
			plans, hasCUDA = append(plans, pl), true
			if v, err := version.Parse(pl.Name); err == nil {
				major = v.Major()
			}
		}
		for _, sp := range specs {
			if !sp.Tool.Library() {
				continue
			}
			if major == 0 {
				return nil, fmt.Errorf("bundle export: %s is built per CUDA major; export it with a CUDA version (cudaenv bundle export 12.4 %s -o …), or pass --cuda-major 12", sp.Tool.Title(), sp)
			}
			var comps []string
			if !hasCUDA && sp.Tool == version.Cudnn {
				comps = req.Components
			}
			src := source
			if !fetch.Product(sp.Tool).Redist() && src != "nvidia" {
				// NCCL and NVSHMEM have PyPI wheels only.
				src = "pypi"
			}
			pl, err := in.Plan(ctx, sp, Target{Source: src, Platform: platform, Profile: "full", Components: comps, CUDAMajor: major})
			if err != nil {
				return nil, err
			}
			plans = append(plans, pl)
		}
	}

	ix := bundle.Index{Format: bundle.Format}
	sources := map[string]func() (io.ReadCloser, error){}
	add := func(f bundle.File, open func() (io.ReadCloser, error)) error {
		if have, ok := ix.Lookup(f.Name); ok {
			if have != f {
				return fmt.Errorf("bundle export: two different files would be %s", f.Name)
			}
			return nil
		}
		ix.Files = append(ix.Files, f)
		sources[f.Name] = open
		return nil
	}
	for _, pl := range plans {
		client := *in.client
		client.Progress = nil
		if in.opts.Reporter != nil {
			client.Progress = in.opts.Reporter.Progress(pl.Label + " (" + pl.platform + ")")
		}
		paths, err := client.Obtain(ctx, pl.Artifacts)
		if err != nil {
			if ctx.Err() != nil {
				return nil, errors.New("bundle export: interrupted; nothing was written")
			}
			return nil, fmt.Errorf("bundle export %s: %w", pl.Label, err)
		}
		e := bundle.Entry{
			Kind: string(pl.Kind), Name: pl.Name, Source: pl.Receipt.Source, Release: pl.release,
			Platform: pl.platform, Profile: pl.Receipt.Profile, CUDAMajor: pl.CUDAMajor, URL: pl.Receipt.URL,
		}
		for _, a := range pl.Artifacts {
			e.Components = append(e.Components, a.Component)
		}
		sort.Strings(e.Components)
		var manifest []byte
		if pl.manifest != nil {
			e.Manifest = nvidiaManifestName(pl.product, pl.release)
			manifest = pl.manifest.Raw
		} else {
			e.Manifest = wheelListName(e)
			if manifest, err = wheelList(pl, paths); err != nil {
				return nil, err
			}
		}
		if err := add(bundle.File{Name: e.Manifest, Size: int64(len(manifest)), SHA256: sha256Hex(manifest)}, bytesOpener(manifest)); err != nil {
			return nil, err
		}
		for _, a := range pl.Artifacts {
			p := paths[a.SHA256]
			if err := add(bundle.File{Name: memberName(pl, a), Size: a.Size, SHA256: a.SHA256}, func() (io.ReadCloser, error) { return os.Open(p) }); err != nil {
				return nil, err
			}
		}
		ix.Entries = append(ix.Entries, e)
	}
	out := &Exported{Entries: ix.Entries, Files: len(ix.Files)}
	for _, f := range ix.Files {
		out.Bytes += f.Size
	}
	if err := bundle.Write(w, ix, func(f bundle.File) (io.ReadCloser, error) { return sources[f.Name]() }); err != nil {
		return nil, err
	}
	return out, nil
}

func (in *Installer) platforms(keys []string) ([]string, error) {
	var out []string
	for _, p := range keys {
		if err := checkPlatform(p); err != nil {
			return nil, err
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		p, err := fetch.HostPlatform(in.opts.GOOS, in.opts.GOARCH)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

func checkSourceProfile(source, profile string) (string, string, error) {
	source, err := checkSource(source)
	if err != nil {
		return "", "", err
	}
	profile, err = checkProfile(profile)
	if err != nil {
		return "", "", err
	}
	return source, profile, nil
}

// Bundle members are laid out like NVIDIA's server, so that an unpacked
// bundle is a file:// mirror: <product>/redist/redistrib_<release>.json
// and <product>/redist/<relative_path>; wheels go under pypi/.
func nvidiaManifestName(p fetch.Product, release string) string {
	return string(p) + "/redist/redistrib_" + release + ".json"
}

func wheelListName(e bundle.Entry) string {
	return "pypi/" + e.Kind + "-" + e.Name + "-" + e.Platform + ".json"
}

func memberName(pl *Plan, a fetch.Artifact) string {
	if pl.manifest == nil {
		return "pypi/" + a.RelativePath
	}
	return string(pl.product) + "/redist/" + a.RelativePath
}

// wheelList is a pypi plan's manifest member: the wheels as verified.
func wheelList(pl *Plan, paths map[string]string) ([]byte, error) {
	wl := bundle.Wheels{ManifestSHA256: pl.Receipt.ManifestSHA256}
	for _, a := range pl.Artifacts {
		wl.Wheels = append(wl.Wheels, bundle.Wheel{Component: a.Component, Project: a.Name, Version: a.Version, Platform: a.Platform, File: a.RelativePath, SHA256: a.SHA256, Size: a.Size})
	}
	data, err := json.MarshalIndent(wl, "", "  ")
	return append(data, '\n'), err
}

func bytesOpener(b []byte) func() (io.ReadCloser, error) {
	return func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
}

// ImportRequest is one `cudaenv bundle import` (or install --from).
type ImportRequest struct {
	Platform string // the bundle's versions for this platform; "" means this machine's
	Force    bool   // reinstall what is installed
	// FreeSpace, if not nil, replaces the file system's count of the
	// bytes free in a folder (tests set it; < 0 means unknown).
	FreeSpace func(dir string) (int64, error)
}

// maxManifestSize caps a manifest (or wheel list) read from a bundle;
// NVIDIA's largest is under 100 KiB.
const maxManifestSize = 16 << 20

// Import installs a bundle's versions for one platform with no network.
// The whole bundle is read and checked first (see package bundle), then
// every version's archives are checked against its bundled manifest (or
// wheel list); only when all of it holds does anything reach the store,
// CUDA before cuDNN, each as install does (staging, one rename, receipt
// last). A bundle that fails any check installs nothing.
func (in *Installer) Import(ctx context.Context, r io.Reader, req ImportRequest) ([]Result, error) {
	platform := req.Platform
	if platform == "" {
		var err error
		if platform, err = fetch.HostPlatform(in.opts.GOOS, in.opts.GOARCH); err != nil {
			return nil, err
		}
	} else if err := checkPlatform(platform); err != nil {
		return nil, fmt.Errorf("bundle import: %w", err)
	}
	br, err := bundle.Open(r)
	if err != nil {
		return nil, fmt.Errorf("bundle import: %w", err)
	}
	// Held while the import runs; a killed import's is removed by the
	// next command that uses the cache.
	tmp, done, err := fetch.NewImportDir(in.opts.CacheDir)
	if err != nil {
		return nil, fmt.Errorf("bundle import: %w", err)
	}
	defer done()
	paths, err := extractBundle(br, tmp, req)
	if err != nil {
		return nil, fmt.Errorf("bundle import: %w; nothing was installed", err)
	}
	plans, err := bundlePlans(&br.Index, paths)
	if err != nil {
		return nil, fmt.Errorf("bundle import: %w; nothing was installed", err)
	}
	var mine []*Plan
	var others []string
	for _, pl := range plans {
		if pl.platform == platform {
			mine = append(mine, pl)
		} else if !slices.Contains(others, pl.platform) {
			others = append(others, pl.platform)
		}
	}
	if len(mine) == 0 {
		return nil, fmt.Errorf("bundle import: the bundle has nothing for %s (it has: %s); export it with --platform %s", platform, strings.Join(others, ", "), platform)
	}
	sort.SliceStable(mine, func(i, j int) bool { return mine[i].Kind == store.CUDA && mine[j].Kind != store.CUDA })

	// Install from the checked files only: an offline client whose cache
	// is the extraction folder.
	sub := *in
	// Its cache is a folder removed once the import is done: nothing is
	// linked from there.
	sub.client = &fetch.Client{CacheDir: tmp, Offline: true, Jobs: in.opts.Jobs, NoUnpackedCache: true, OwnFiles: in.client.OwnFiles}
	in.opts.Store.CleanStaging()
	var results []Result
	for _, pl := range mine {
		res, err := sub.Apply(ctx, pl, req.Force)
		if err != nil {
			return results, err
		}
		results = append(results, res)
	}
	return results, nil
}

// bundlePlans turns every entry of a checked bundle into an install plan
// whose archives are the bundle's, after checking each against what its
// manifest (or wheel list) says: the manifest must be where its release
// puts it, every archive it selects must be in the bundle with the sha256
// and size the manifest lists, the store name must follow from the
// manifest, and no file may be left that no version uses.
func bundlePlans(ix *bundle.Index, paths map[string]string) ([]*Plan, error) {
	have := map[string]bool{}
	for _, f := range ix.Files {
		have[f.SHA256] = true
	}
	used := map[string]bool{}
	var plans []*Plan
	for _, e := range ix.Entries {
		pl, err := entryPlan(ix, paths, e, used)
		if err != nil {
			return nil, fmt.Errorf("%s %s (%s): %w", e.Kind, e.Name, e.Platform, err)
		}
		if pl.Name != e.Name {
			return nil, fmt.Errorf("%s %s (%s): its manifest makes it %s, not %s", e.Kind, e.Name, e.Platform, pl.Name, e.Name)
		}
		inner := pl.reselect
		pl.reselect = func(ids []string) ([]fetch.Artifact, error) {
			arts, err := inner(ids)
			if err != nil {
				return nil, err
			}
			for _, a := range arts {
				if !have[a.SHA256] {
					return nil, fmt.Errorf("the installed version has %s, which the bundle lacks; add --force to replace it with the bundle's components", a.Component)
				}
			}
			return arts, nil
		}
		plans = append(plans, pl)
	}
	for _, f := range ix.Files {
		if !used[f.Name] {
			return nil, fmt.Errorf("it holds %s, which none of its versions uses", f.Name)
		}
	}
	return plans, nil
}

func entryPlan(ix *bundle.Index, paths map[string]string, e bundle.Entry, used map[string]bool) (*Plan, error) {
	if e.Source == "nvidia" {
		return nvidiaBundlePlan(ix, paths, e, used)
	}
	return pypiBundlePlan(ix, paths, e, used)
}

func readMember(ix *bundle.Index, paths map[string]string, name string) ([]byte, error) {
	f, ok := ix.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("%s is not in the bundle", name)
	}
	if f.Size > maxManifestSize {
		return nil, fmt.Errorf("%s is %d bytes, more than any manifest", name, f.Size)
	}
	return os.ReadFile(paths[name])
}

func nvidiaBundlePlan(ix *bundle.Index, paths map[string]string, e bundle.Entry, used map[string]bool) (*Plan, error) {
	p := fetch.Product(e.Kind)
	if want := nvidiaManifestName(p, e.Release); e.Manifest != want {
		return nil, fmt.Errorf("its manifest is %s, not %s", e.Manifest, want)
	}
	data, err := readMember(ix, paths, e.Manifest)
	if err != nil {
		return nil, err
	}
	m, err := fetch.Decode(data, e.Release)
	if err != nil {
		return nil, err
	}
	if m.Version != e.Release {
		return nil, fmt.Errorf("its manifest is release %s, not %s", m.Version, e.Release)
	}
	if e.Profile != "" && !slices.Contains(fetch.Profiles, e.Profile) {
		return nil, fmt.Errorf("unknown profile %q", e.Profile)
	}
	if version.Tool(e.Kind).Library() && e.CUDAMajor <= 0 {
		return nil, fmt.Errorf("a %s build without its CUDA major", version.Tool(e.Kind).Title())
	}
	sel := fetch.Selection{Platform: e.Platform, Components: e.Components, CUDAMajor: e.CUDAMajor}
	arts, err := m.Select(sel)
	if err != nil {
		return nil, err
	}
	used[e.Manifest] = true
	pl := &Plan{
		product: p, release: e.Release, platform: e.Platform, manifest: m,
		Receipt: store.Receipt{Source: "nvidia", URL: e.URL, Platform: e.Platform, Profile: e.Profile, ManifestSHA256: m.SHA256},
	}
	pl.Artifacts = arts
	for _, a := range arts {
		name := memberName(pl, a)
		f, ok := ix.Lookup(name)
		if !ok {
			return nil, fmt.Errorf("its manifest lists %s, which the bundle lacks", name)
		}
		if f.SHA256 != a.SHA256 || f.Size != a.Size {
			return nil, fmt.Errorf("%s in the bundle is not what its manifest lists (sha256 %s, %d bytes; the manifest says %s, %d bytes)", name, f.SHA256, f.Size, a.SHA256, a.Size)
		}
		used[name] = true
	}
	pl.reselect = func(ids []string) ([]fetch.Artifact, error) {
		s := sel
		s.Components = ids
		return m.Select(s)
	}
	return pl, pl.setName(p, e.Release, cudnnVersion(m, arts), e.CUDAMajor)
}

func pypiBundlePlan(ix *bundle.Index, paths map[string]string, e bundle.Entry, used map[string]bool) (*Plan, error) {
	p := fetch.Product(e.Kind)
	if want := wheelListName(e); e.Manifest != want {
		return nil, fmt.Errorf("its wheel list is %s, not %s", e.Manifest, want)
	}
	data, err := readMember(ix, paths, e.Manifest)
	if err != nil {
		return nil, err
	}
	var wl bundle.Wheels
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&wl); err != nil {
		return nil, fmt.Errorf("its wheel list: %w", err)
	}
	used[e.Manifest] = true
	pl := &Plan{
		product: p, release: e.Release, platform: e.Platform,
		Receipt: store.Receipt{Source: "pypi", URL: e.URL, Platform: e.Platform, Profile: e.Profile, ManifestSHA256: wl.ManifestSHA256},
	}
	// The bundle's wheel list says which project each component is; like a
	// lock's, it is held to the project the component and CUDA major map
	// to, and each wheel is unpacked only when its METADATA agrees.
	major := e.CUDAMajor
	if p == fetch.CUDA {
		v, err := version.Parse(e.Release)
		if err != nil {
			return nil, fmt.Errorf("release %q: %w", e.Release, err)
		}
		major = v.Major()
	}
	var comps []string
	for _, w := range wl.Wheels {
		name := "pypi/" + w.File
		if err := bundle.CheckName(name); err != nil || strings.Contains(w.File, "/") {
			return nil, fmt.Errorf("wheel file name %q is not a plain file name", w.File)
		}
		f, ok := ix.Lookup(name)
		if !ok {
			return nil, fmt.Errorf("its wheel list names %s, which the bundle lacks", name)
		}
		if f.SHA256 != w.SHA256 || f.Size != w.Size {
			return nil, fmt.Errorf("%s in the bundle is not what its wheel list says", name)
		}
		if w.Platform != e.Platform {
			return nil, fmt.Errorf("%s is for %s", name, w.Platform)
		}
		if t := version.Tool(e.Kind); t.Library() && t != version.Cudnn && w.Component != string(t) {
			// A library's wheel is its one component: nvcc is not NCCL.
			return nil, fmt.Errorf("its wheel list has %s; a %s build has only its %s wheel", w.Component, t.Title(), t)
		}
		project, err := pypi.CheckLockedWheel(w.Component, major, w.Version, w.Platform, w.File)
		if err != nil {
			return nil, fmt.Errorf("its wheel list: %w", err)
		}
		wn, _ := pypi.ParseWheelName(w.File) // CheckLockedWheel parsed it
		used[name] = true
		comps = append(comps, w.Component)
		pl.Artifacts = append(pl.Artifacts, fetch.Artifact{
			Component: w.Component, Name: project, Version: w.Version, Platform: w.Platform,
			RelativePath: w.File, SHA256: w.SHA256, Size: w.Size,
			License: "NVIDIA (see the wheel's license)", Unpack: unpackWheelAs(project, wn.Version),
		})
	}
	sort.Strings(comps)
	if !slices.Equal(comps, e.Components) {
		return nil, fmt.Errorf("its wheel list has %s, the index says %s", strings.Join(comps, ", "), strings.Join(e.Components, ", "))
	}
	pl.reselect = func([]string) ([]fetch.Artifact, error) { return pl.Artifacts, nil }
	cudnnVer := ""
	if version.Tool(p).Library() {
		if e.CUDAMajor <= 0 {
			return nil, fmt.Errorf("a %s build without its CUDA major", version.Tool(p).Title())
		}
		cudnnVer = strings.TrimSuffix(e.Name, "-cuda"+strconv.Itoa(e.CUDAMajor))
	}
	return pl, pl.setName(p, e.Release, cudnnVer, e.CUDAMajor)
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
