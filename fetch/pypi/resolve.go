package pypi

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/cudaenv/cudaenv/internal/termsafe"
)

// Resolving requirements as pip and uv do, for the NVIDIA wheels they
// install: ResolveRequirements reads the metadata of each requirement's
// wheel for the target (the best wheel PEP 425 allows, the newest version
// every specifier allows), follows the requirements that apply on the
// target (PEP 508 markers, extras through any depth, cycles cut), and
// picks each NVIDIA project's version the way a resolver does: the newest
// on the index that satisfies every specifier from every requirement that
// reached it (PEP 440), skipping yanked files unless a specifier pins that
// version exactly (PEP 592), and pre-releases unless a specifier names
// one (or the project has nothing else).
//
// The projects followed are the requirements themselves, NVIDIA's wheels
// (nvidia-*, cuda-toolkit), whatever an extra pulls, requirements that ask
// for extras, and projects whose names say they carry CUDA (torch, jax,
// tensorflow, vllm, xformers, cupy, *-cu12, *cuda*, …). Other projects
// (numpy, requests) are not read: a pure-Python dependency pins no NVIDIA
// wheel. When that reaches no NVIDIA wheel at all, a requirement without
// extras gets the one extra that pulls them (tensorflow → and-cuda), and
// failing that every dependency is followed.

// maxFollowed bounds how many projects one resolution reads: torch with
// its NVIDIA wheels is about 25, vllm about 60.
const maxFollowed = 400

// maxRounds bounds how often the picks are revised when a requirement
// read later excludes a version picked earlier.
const maxRounds = 8

// Constraint is the specifiers one requirement puts on a project, and
// which requirement it was.
type Constraint struct {
	From       string // "torch 2.12.0", or "--for" for a requirement given
	Specifiers []Specifier
}

func (c Constraint) String() string {
	spec := specString(c.Specifiers)
	if spec == "" {
		spec = "(any version)"
	}
	return c.From + " requires " + spec
}

// Picked is one project as the resolution picked it.
type Picked struct {
	Project     string
	Version     string
	File        File // the wheel chosen for the target
	Extras      []string
	Constraints []Constraint
	// Yanked: the version is yanked on the index and taken because a
	// specifier pins it exactly.
	Yanked bool
	// Via is how its metadata was read (see Metadata.Via); "" when not.
	Via string
}

// Spec is the constraints joined: ">=13.1.0.3,<=13.1.1.3".
func (p Picked) Spec() string { return specString(mergedSpecs(p.Constraints)) }

// Exact reports whether some constraint pins the picked version exactly:
// ==V, ===V, or ==V.* naming V itself (the cuda-toolkit meta-package's
// form, which admits V's post-releases).
func (p Picked) Exact() bool {
	for _, c := range p.Constraints {
		for _, s := range c.Specifiers {
			if isExact(s) && s.Allows(p.Version) {
				return true
			}
			if v, ok := strings.CutSuffix(s.Version, ".*"); ok && s.Op == "==" && SameVersion(v, p.Version) {
				return true
			}
		}
	}
	return false
}

// Resolved is what a set of requirements installs of NVIDIA's wheels on a
// target, and how it was found.
type Resolved struct {
	Requirements []string // as given
	Target       WheelTarget
	// Top is each requirement's own project as picked, in the order given.
	Top []Picked
	// NVIDIA are NVIDIA's projects (nvidia-*), sorted by name.
	NVIDIA []Picked
	// Followed are the other projects whose requirements were read
	// (cuda-toolkit, jax-cuda13-plugin, torch under vllm), sorted.
	Followed []Picked
	// Extras names extras cudaenv turned on itself: "tensorflow[and-cuda]".
	Extras []string
	// Notes say what a user should know: a yanked pin, a project whose
	// requirements could not be read.
	Notes []string
	// Missing are NVIDIA libraries the requirements ask for that the index
	// has no wheel of for the target (left out; Err says why).
	Missing []MissingProject
}

// MissingProject is an NVIDIA library left out of a resolution.
type MissingProject struct {
	Project     string
	Constraints []Constraint
	Err         error
}

// Project is the picked project named p, NVIDIA's or followed.
func (r *Resolved) Project(p string) (Picked, bool) {
	p = NormalizeProject(p)
	for _, list := range [][]Picked{r.NVIDIA, r.Followed} {
		if i := slices.IndexFunc(list, func(x Picked) bool { return x.Project == p }); i >= 0 {
			return list[i], true
		}
	}
	return Picked{}, false
}

// ConflictError says that no version of a project satisfies what two
// requirements ask of it (or one, when A and B are the same).
type ConflictError struct {
	Project string
	A, B    Constraint
	Index   string
	Near    []string // the newest versions the index has for the target
}

func (e *ConflictError) Error() string {
	near := ""
	if len(e.Near) > 0 {
		near = "; it has " + strings.Join(e.Near, ", ")
	}
	if specString(e.A.Specifiers) == specString(e.B.Specifiers) && e.A.From == e.B.From {
		return fmt.Sprintf("%s: no version on %s satisfies %s%s", e.Project, e.Index, e.A, near)
	}
	return fmt.Sprintf("%s: %s and %s; no version on %s satisfies both%s", e.Project, e.A, e.B, e.Index, near)
}

// carriesCUDA names the projects followed for their requirements without
// an extra asking: frameworks and libraries that pin NVIDIA's wheels.
var carriesCUDA = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`cuda|cudnn|nccl|nvidia|torch|jax|tensorflow|^tf-|cupy|xformers|vllm|flash|onnxruntime|paddle|gpu|` +
		`-cu[0-9]+x?(-|$)|^(cudf|cuml|cugraph|cuvs|cuspatial|rmm|raft|pylibraft|pylibcudf|libcudf|libraft|librmm|ucx)`)
})

// isNVIDIAProject: NVIDIA's wheels, whose versions are what the
// resolution is for.
func isNVIDIAProject(p string) bool { return strings.HasPrefix(p, "nvidia-") }

// ResolveRequirements resolves PEP 508 requirements ("torch==2.12.0",
// "jax[cuda13]>=0.9", "nvidia-cublas-cu12==12.4.5.8") together for a
// target, as described above. Nothing is downloaded but project pages and
// wheel metadata (cached under cacheDir by the wheel's sha256; "" for
// none). A requirement that cannot be read, or two that no version
// satisfies together (*ConflictError), is an error.
func (ix *Index) ResolveRequirements(ctx context.Context, reqs []string, t WheelTarget, cacheDir string) (*Resolved, error) {
	if _, err := t.minor(); err != nil {
		return nil, err
	}
	env, err := PythonEnv(t.Platform, t.Python)
	if err != nil {
		return nil, err
	}
	if len(reqs) == 0 {
		return nil, errors.New("no requirements to resolve")
	}
	var roots []Dependency
	for _, r := range reqs {
		d, err := ParseDependency(strings.TrimSpace(r))
		if err != nil {
			return nil, err
		}
		if ok, err := d.Applies(env); err != nil {
			return nil, fmt.Errorf("%s: %w", strconv.Quote(truncate(r, 80)), err)
		} else if !ok {
			continue // its marker leaves it out on this target
		}
		roots = append(roots, d)
	}
	if len(roots) == 0 {
		return nil, fmt.Errorf("no requirement applies to %s and Python %s (their markers leave them all out)", t.Platform, t.Python)
	}
	rs := &resolver{ix: ix, t: t, cacheDir: cacheDir, roots: roots}
	res, err := rs.resolve(ctx)
	if err != nil {
		return nil, err
	}
	if len(res.NVIDIA) == 0 {
		// No NVIDIA wheel without extras: the one extra that pulls them
		// (tensorflow[and-cuda], jax-cuda13-plugin[with-cuda]).
		var extras []string
		for i, d := range rs.roots {
			if len(d.Extras) > 0 {
				continue
			}
			if e := rs.cudaExtraOf(d.Project); e != "" {
				rs.roots[i].Extras = []string{e}
				extras = append(extras, d.Project+"["+e+"]")
			}
		}
		if len(extras) > 0 {
			if res, err = rs.resolve(ctx); err != nil {
				return nil, err
			}
			res.Extras = extras
		}
	}
	if len(res.NVIDIA) == 0 && !rs.all {
		rs.all = true
		if again, err := rs.resolve(ctx); err == nil && len(again.NVIDIA) > 0 {
			again.Extras = res.Extras
			res = again
		}
	}
	res.Requirements = slices.Clone(reqs)
	return res, nil
}

type resolver struct {
	ix       *Index
	t        WheelTarget
	cacheDir string
	roots    []Dependency
	all      bool // follow every dependency

	mu    sync.Mutex
	meta  map[string]*metaResult // by wheel file name
	notes []string
}

type metaResult struct {
	deps []Dependency
	via  string
	err  error
}

// node is one project in a round of the resolution.
type node struct {
	project string
	cons    []Constraint
	extras  []string
	follow  bool
	pick    *candidate2
	yanked  bool
	via     string
	err     error
	// expanded is the extras its requirements were read with ("\x00"
	// when never).
	expanded string
	missing  bool // an NVIDIA library the index lacks, left out
}

// needed: projects without which there is no toolkit to name — the
// CUDA components, cuDNN and the meta-package. An NVIDIA library beside
// them (NCCL, cuSPARSELt, …) that the index lacks is left out, as said.
func needed(p string) bool {
	_, comp := projectComponents()[p]
	return comp || cudnnMajorOf(p) > 0 || p == ToolkitProject
}

// candidate2 is one version of a project with the best wheel of it for
// the target.
type candidate2 struct {
	version string
	file    File
	yanked  bool // every fitting file of the version is yanked
}

func (rs *resolver) resolve(ctx context.Context) (*Resolved, error) {
	rs.mu.Lock()
	rs.notes = nil
	rs.mu.Unlock()
	prev := map[string]string{} // project → version picked in the last round
	for round := 0; round < maxRounds; round++ {
		nodes, order, err := rs.round(ctx, prev)
		if err != nil {
			return nil, err
		}
		// The picks every constraint of the round allows.
		settled := true
		next := map[string]string{}
		for _, name := range order {
			n := nodes[name]
			if n.pick == nil {
				continue
			}
			c, _, err := rs.choose(ctx, n)
			if err != nil {
				return nil, err
			}
			next[name] = c.version
			if c.version != n.pick.version {
				settled = false
			}
		}
		if settled {
			return rs.result(nodes, order), nil
		}
		prev = next
	}
	return nil, fmt.Errorf("the requirements do not settle on one version of each project after %d rounds", maxRounds)
}

// round walks the requirements from the roots, level by level, picking
// each project's version (the one picked in the last round while it
// still fits) and reading its requirements.
func (rs *resolver) round(ctx context.Context, prev map[string]string) (map[string]*node, []string, error) {
	env, _ := PythonEnv(rs.t.Platform, rs.t.Python)
	nodes := map[string]*node{}
	var order []string
	get := func(p string) *node {
		n := nodes[p]
		if n == nil {
			n = &node{project: p, expanded: "\x00"}
			nodes[p] = n
			order = append(order, p)
		}
		return n
	}
	var frontier []string
	for _, d := range rs.roots {
		n := get(d.Project)
		n.follow = true
		n.cons = append(n.cons, Constraint{From: "--for", Specifiers: d.Specifiers})
		n.extras = mergeExtras(n.extras, d.Extras)
		if !slices.Contains(frontier, d.Project) {
			frontier = append(frontier, d.Project)
		}
	}
	for len(frontier) > 0 {
		followed := 0
		for _, n := range nodes {
			if n.follow {
				followed++
			}
		}
		if followed > maxFollowed {
			return nil, nil, fmt.Errorf("the requirements reach more than %d projects", maxFollowed)
		}
		// Pages and picks, a few at a time.
		eachAtOnce(frontier, func(p string) {
			if n := nodes[p]; n.pick == nil && n.err == nil {
				n.pick, n.yanked, n.err = rs.choosePrev(ctx, n, prev[p])
			}
		})
		var errs []error
		for _, p := range frontier {
			n := nodes[p]
			if n.err == nil {
				continue
			}
			if rs.isRoot(p) || isTwoWayConflict(n.err) || ctx.Err() != nil || needed(p) ||
				!errors.Is(n.err, ErrProjectNotFound) && !errors.Is(n.err, ErrNoFrameworkWheel) && !isConflict(n.err) {
				errs = append(errs, n.err)
				continue
			}
			if isNVIDIAProject(p) {
				n.missing = true
			}
			if n.missing {
				continue // said by the toolkit's products
			}
			// A dependency cudaenv cannot read (only an sdist, or not on
			// the index): its requirements stay unread, as said.
			rs.note(fmt.Sprintf("%s: %v; its requirements are not read", p, n.err))
		}
		if len(errs) > 0 {
			// The first conflict is the one to fix; more are counted.
			var conflicts []error
			for _, e := range errs {
				if isConflict(e) {
					conflicts = append(conflicts, e)
				}
			}
			if len(conflicts) > 1 {
				return nil, nil, fmt.Errorf("%w (and %d more projects like it)", conflicts[0], len(conflicts)-1)
			}
			return nil, nil, termsafe.Join(errs...)
		}
		// Metadata of the picked wheels.
		eachAtOnce(frontier, func(p string) {
			if n := nodes[p]; n.pick != nil {
				rs.metadata(ctx, n.pick.file)
			}
		})
		var next []string
		for _, p := range frontier {
			n := nodes[p]
			if n.pick == nil {
				continue
			}
			m := rs.metadata(ctx, n.pick.file)
			if m.err != nil {
				return nil, nil, m.err
			}
			n.via = m.via
			key := strings.Join(n.extras, ",")
			if n.expanded == key {
				continue
			}
			n.expanded = key
			from := p + " " + n.pick.version
			menv := env
			menv.Extras = n.extras
			for _, d := range m.deps {
				if d.Project == p {
					// A self-reference (jax[cuda13] → jax[cuda12-local]):
					// its extras join this node's, cycles end here.
					if ok, err := d.Applies(menv); err == nil && ok && len(mergeExtras(n.extras, d.Extras)) > len(n.extras) {
						n.extras = mergeExtras(n.extras, d.Extras)
						n.expanded = "\x00"
						next = appendOnce(next, p)
					}
					continue
				}
				ok, err := d.Applies(menv)
				if err != nil {
					return nil, nil, fmt.Errorf("%s: %w", n.pick.file.Filename, err)
				}
				if !ok {
					continue
				}
				c := get(d.Project)
				c.cons = append(c.cons, Constraint{From: from, Specifiers: d.Specifiers})
				grew := len(mergeExtras(c.extras, d.Extras)) > len(c.extras)
				c.extras = mergeExtras(c.extras, d.Extras)
				byExtra := strings.Contains(d.Marker, "extra")
				if !c.follow && (rs.all || isNVIDIAProject(d.Project) || d.Project == ToolkitProject || byExtra || len(d.Extras) > 0 || carriesCUDA().MatchString(d.Project)) {
					c.follow = true
					next = appendOnce(next, d.Project)
				} else if c.follow && (grew || c.pick == nil && c.err == nil) {
					next = appendOnce(next, d.Project)
				}
			}
		}
		frontier = next
	}
	return nodes, order, nil
}

// eachAtOnce runs f on each item, eight at a time, and waits for all.
func eachAtOnce(items []string, f func(string)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for _, it := range items {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			f(it)
		}()
	}
	wg.Wait()
}

func isConflict(err error) bool {
	var ce *ConflictError
	return errors.As(err, &ce)
}

// isTwoWayConflict: two requirements ask what no version gives. One that
// no wheel satisfies alone (a version uploaded as an sdist only) leaves a
// dependency's requirements unread instead: pip would build it.
func isTwoWayConflict(err error) bool {
	var ce *ConflictError
	return errors.As(err, &ce) && (ce.A.From != ce.B.From || specString(ce.A.Specifiers) != specString(ce.B.Specifiers))
}

func (rs *resolver) isRoot(p string) bool {
	return slices.ContainsFunc(rs.roots, func(d Dependency) bool { return d.Project == p })
}

func (rs *resolver) note(s string) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if !slices.Contains(rs.notes, s) {
		rs.notes = append(rs.notes, s)
	}
}

func appendOnce(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

func mergeExtras(have, add []string) []string {
	out := slices.Clone(have)
	for _, e := range add {
		e = NormalizeProject(e)
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	slices.Sort(out)
	return out
}

// metadata reads (once per resolution) a wheel's requirements.
func (rs *resolver) metadata(ctx context.Context, f File) *metaResult {
	rs.mu.Lock()
	if rs.meta == nil {
		rs.meta = map[string]*metaResult{}
	}
	if m, ok := rs.meta[f.Filename]; ok {
		rs.mu.Unlock()
		return m
	}
	rs.mu.Unlock()
	m := &metaResult{}
	meta, err := rs.ix.WheelMetadata(ctx, f, rs.cacheDir)
	if err == nil {
		m.via = meta.Via
		m.deps, err = parseDependencies(meta.RequiresDist)
		if err != nil {
			err = fmt.Errorf("%s: %w", f.Filename, err)
		}
	}
	m.err = err
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if have, ok := rs.meta[f.Filename]; ok {
		return have
	}
	if ctx.Err() == nil {
		rs.meta[f.Filename] = m
	}
	return m
}

// choosePrev keeps the version picked in the last round while it still
// satisfies what is known of the project; else it picks anew.
func (rs *resolver) choosePrev(ctx context.Context, n *node, prev string) (*candidate2, bool, error) {
	if prev != "" {
		page, err := rs.ix.Project(ctx, n.project)
		if err != nil {
			return nil, false, err
		}
		for _, c := range rs.candidates(page, n.cons) {
			if c.version == prev {
				return &c, c.yanked, nil
			}
		}
	}
	c, yanked, err := rs.choose(ctx, n)
	if err != nil {
		return nil, false, err
	}
	return &c, yanked, nil
}

// choose picks the newest version every constraint allows.
func (rs *resolver) choose(ctx context.Context, n *node) (candidate2, bool, error) {
	page, err := rs.ix.Project(ctx, n.project)
	if err != nil {
		return candidate2{}, false, err
	}
	cands := rs.candidates(page, n.cons)
	if len(cands) > 0 {
		return cands[0], cands[0].yanked, nil
	}
	return candidate2{}, false, rs.conflict(page, n.cons)
}

// candidates are the versions of a page the constraints allow, newest
// first, each with its best wheel for the target.
func (rs *resolver) candidates(page *Page, cons []Constraint) []candidate2 {
	all := mergedSpecs(cons)
	versions := rs.versions(page)
	pre := namesPre(all) || !slices.ContainsFunc(versions, func(c candidate2) bool {
		v, _ := parseVersion(c.version)
		return !v.isPre()
	})
	var out []candidate2
	for _, c := range versions {
		if !allowsAll(all, c.version, pre) {
			continue
		}
		if c.yanked && !pinsExactly(all, c.version) {
			continue
		}
		out = append(out, c)
	}
	return out
}

func mergedSpecs(cons []Constraint) []Specifier {
	var all []Specifier
	for _, c := range cons {
		all = append(all, c.Specifiers...)
	}
	return all
}

// pinsExactly: some specifier is ==V (no wildcard) or ===V naming v, the
// only way PEP 592 lets a yanked file be installed.
func pinsExactly(specs []Specifier, v string) bool {
	return slices.ContainsFunc(specs, func(s Specifier) bool { return isExact(s) && s.Allows(v) })
}

// versions are a page's versions that have a wheel for the target (tags
// and Requires-Python), newest first, each with its best wheel: a file
// that is not yanked before a yanked one, then the best tag, then the
// highest build tag.
func (rs *resolver) versions(page *Page) []candidate2 {
	type best struct {
		c     candidate2
		rank  int
		build int
	}
	byVersion := map[string]*best{}
	var keys []string
	for _, f := range page.Files {
		if !wheelFilename().MatchString(f.Filename) {
			continue
		}
		w, err := ParseWheelName(f.Filename)
		if err != nil || w.Project != page.Project {
			continue
		}
		pv, ok := parseVersion(w.Version)
		if !ok {
			continue
		}
		rank, ok := rs.t.tagRank(w)
		if !ok || !rs.pythonOK(f.RequiresPython) {
			continue
		}
		build, _ := strconv.Atoi(leadingDigits(w.Build))
		key := canonicalFull(pv)
		b := byVersion[key]
		better := b == nil ||
			(b.c.yanked && !f.Yanked) ||
			(b.c.yanked == f.Yanked && (rank < b.rank || rank == b.rank && build > b.build))
		if better {
			if b == nil {
				keys = append(keys, key)
			}
			byVersion[key] = &best{c: candidate2{version: w.Version, file: f, yanked: f.Yanked}, rank: rank, build: build}
		}
	}
	out := make([]candidate2, 0, len(keys))
	for _, k := range keys {
		out = append(out, byVersion[k].c)
	}
	slices.SortStableFunc(out, func(a, b candidate2) int { return compareVersions(b.version, a.version) })
	return out
}

// canonicalFull is a version's normal form, so 13.0 and 13.0.0 are one.
func canonicalFull(v version) string {
	rel := slices.Clone(v.release)
	for len(rel) > 1 && rel[len(rel)-1] == 0 {
		rel = rel[:len(rel)-1]
	}
	return fmt.Sprint(v.epoch, rel, v.preKind, v.pre, v.hasPost, v.post, v.hasDev, v.dev, v.local)
}

// pythonOK reports whether a file's Requires-Python admits the target
// CPython (as 3.N.0); one that does not parse is ignored, as pip does.
func (rs *resolver) pythonOK(requires string) bool {
	requires = strings.TrimSpace(requires)
	if requires == "" {
		return true
	}
	var specs []Specifier
	for _, c := range strings.Split(requires, ",") {
		if strings.TrimSpace(c) == "" {
			continue
		}
		s, err := ParseSpecifier(c)
		if err != nil {
			return true
		}
		specs = append(specs, s)
	}
	return allowsAll(specs, rs.t.Python+".0", true)
}

// conflict explains why no version fits: one constraint nothing on the
// index satisfies, else the first two that no version satisfies together.
func (rs *resolver) conflict(page *Page, cons []Constraint) error {
	versions := rs.versions(page)
	var near []string
	for i := len(versions) - 1; i >= 0; i-- {
		if v, _ := parseVersion(versions[i].version); !v.isPre() && !versions[i].yanked {
			near = append(near, versions[i].version)
		}
	}
	if len(near) > 6 {
		near = near[len(near)-6:]
	}
	fits := func(cs ...Constraint) bool { return len(rs.candidates(page, cs)) > 0 }
	if len(versions) == 0 || rs.isRoot(page.Project) && !slices.ContainsFunc(cons, func(c Constraint) bool { return c.From != "--for" }) {
		// What was asked for has no wheel here: the framework fallback's
		// error (ErrNoFrameworkWheel).
		what := specString(mergedSpecs(cons))
		if v := (Dependency{Specifiers: mergedSpecs(cons)}).Exact(); v != "" {
			what = v
		}
		if what == "" {
			what = "any version"
		}
		seen := "none"
		if len(near) > 0 {
			seen = strings.Join(near, ", ")
		}
		return noFrameworkWheel(fmt.Sprintf("%s has no wheel of %s for %s and Python %s at %s (newest there: %s)",
			page.Project, what, rs.t.Platform, rs.t.Python, page.URL, seen))
	}
	for _, c := range cons {
		if !fits(c) {
			return &ConflictError{Project: page.Project, A: c, B: c, Index: page.URL, Near: near}
		}
	}
	for i := range cons {
		for j := i + 1; j < len(cons); j++ {
			if !fits(cons[i], cons[j]) {
				return &ConflictError{Project: page.Project, A: cons[i], B: cons[j], Index: page.URL, Near: near}
			}
		}
	}
	return &ConflictError{Project: page.Project, A: cons[0], B: cons[len(cons)-1], Index: page.URL, Near: near}
}

// cudaExtraOf is the one extra of a root's picked wheel whose
// requirements, and only its, pull NVIDIA wheels; "" when none or several.
func (rs *resolver) cudaExtraOf(project string) string {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for name, m := range rs.meta {
		w, err := ParseWheelName(name)
		if err != nil || w.Project != project || m.err != nil {
			continue
		}
		return cudaExtra(m.deps, rs.t.Platform, rs.t.Python)
	}
	return ""
}

// result collects the nodes that were followed and picked.
func (rs *resolver) result(nodes map[string]*node, order []string) *Resolved {
	res := &Resolved{Target: rs.t}
	for _, name := range order {
		n := nodes[name]
		if n.missing {
			res.Missing = append(res.Missing, MissingProject{Project: name, Constraints: n.cons, Err: n.err})
		}
		if n.pick == nil || !n.follow {
			continue
		}
		p := Picked{Project: name, Version: n.pick.version, File: n.pick.file, Extras: n.extras, Constraints: n.cons, Yanked: n.yanked, Via: n.via}
		if p.Yanked {
			rs.note(fmt.Sprintf("%s %s is yanked on the index (%s); it is installed because %s pins it exactly", name, p.Version, p.File.Filename, p.Spec()))
		}
		if isNVIDIAProject(name) {
			res.NVIDIA = append(res.NVIDIA, p)
		} else {
			res.Followed = append(res.Followed, p)
		}
	}
	for _, d := range rs.roots {
		if n := nodes[d.Project]; n != nil && n.pick != nil {
			res.Top = append(res.Top, Picked{Project: d.Project, Version: n.pick.version, File: n.pick.file, Extras: n.extras, Constraints: n.cons, Via: n.via})
		}
	}
	slices.SortFunc(res.NVIDIA, func(a, b Picked) int { return strings.Compare(a.Project, b.Project) })
	slices.SortFunc(res.Followed, func(a, b Picked) int { return strings.Compare(a.Project, b.Project) })
	rs.mu.Lock()
	res.Notes = slices.Clone(rs.notes)
	rs.mu.Unlock()
	return res
}
