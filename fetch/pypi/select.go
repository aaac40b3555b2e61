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

// Platforms that have wheels, in redist manifest spelling.
const (
	LinuxX86_64   = "linux-x86_64"
	LinuxSBSA     = "linux-sbsa"
	WindowsX86_64 = "windows-x86_64"
	WindowsARM64  = "windows-arm64"
)

// platformRank scores how well a wheel platform tag fits a redist platform:
// 0 means it does not fit, 1 is the pure 'any' tag, higher is better. For
// manylinux tags the score grows with the glibc version the tag names, so
// the newest build wins when a release has several.
func platformRank(platform, tag string) int {
	if tag == "any" {
		return 1
	}
	switch platform {
	case LinuxX86_64:
		return manylinuxRank(tag, "x86_64")
	case LinuxSBSA:
		return manylinuxRank(tag, "aarch64")
	case WindowsX86_64:
		if tag == "win_amd64" {
			return 2
		}
	case WindowsARM64:
		if tag == "win_arm64" {
			return 2
		}
	}
	return 0
}

// manylinuxRank scores manylinux1/2010/2014 and manylinux_X_Y tags for arch.
// Legacy aliases map to their glibc versions (PEP 600).
func manylinuxRank(tag, arch string) int {
	rest, ok := strings.CutPrefix(tag, "manylinux")
	if !ok {
		return 0
	}
	rest, ok = strings.CutSuffix(rest, "_"+arch)
	if !ok {
		return 0
	}
	major, minor := 0, 0
	switch rest {
	case "1":
		major, minor = 2, 5
	case "2010":
		major, minor = 2, 12
	case "2014":
		major, minor = 2, 17
	default:
		ver, ok := strings.CutPrefix(rest, "_")
		if !ok {
			return 0
		}
		a, b, ok := strings.Cut(ver, "_")
		if !ok {
			return 0
		}
		var err1, err2 error
		major, err1 = strconv.Atoi(a)
		minor, err2 = strconv.Atoi(b)
		if err1 != nil || err2 != nil || major < 2 || minor < 0 || minor > 999 {
			return 0
		}
	}
	return 10 + major*1000 + minor
}

// KnownPlatform reports whether platform has wheels at all.
func KnownPlatform(platform string) bool {
	switch platform {
	case LinuxX86_64, LinuxSBSA, WindowsX86_64, WindowsARM64:
		return true
	}
	return false
}

// Artifact is one wheel to download: the field names follow fetch.Artifact
// so the conversion is one struct literal. RelativePath is the wheel's file
// name (what a cache or an extractor switch can key on); URL is absolute.
type Artifact struct {
	Component    string // redist component id: cuda_cudart
	Project      string // normalized wheel project: nvidia-cuda-runtime-cu12
	Version      string // component and wheel version: 12.4.127
	Platform     string // redist platform: linux-x86_64
	Filename     string // nvidia_cuda_runtime_cu12-12.4.127-py3-none-manylinux2014_x86_64.whl
	RelativePath string // same as Filename
	SHA256       string // from the index, lower-case hex; never empty
	Size         int64  // from the index; 0 when the index did not say
	URL          string
}

// NoWheelError says that a project has no wheel for a version and platform.
type NoWheelError struct {
	Project  string
	Version  string
	Platform string
	Index    string
	// Versions lists (newest last, at most ten) versions that do have a
	// wheel for the platform.
	Versions []string
}

func (e *NoWheelError) Error() string {
	msg := fmt.Sprintf("no wheel of %s==%s for %s on %s", e.Project, e.Version, e.Platform, e.Index)
	if len(e.Versions) > 0 {
		msg += "; versions with wheels for " + e.Platform + ": " + strings.Join(e.Versions, ", ")
	}
	return msg
}

// MissingHashError says that the index listed the chosen wheel without a
// sha256, so it cannot be verified and is refused.
type MissingHashError struct {
	Project  string
	Filename string
	Index    string
}

func (e *MissingHashError) Error() string {
	return fmt.Sprintf("%s: index %s gives no sha256 for %s; refusing an unverifiable wheel", e.Project, e.Index, e.Filename)
}

type candidate struct {
	file  File
	name  WheelName
	exact bool // version equal to the requested one, not a post-release of it
	rank  int
	abiOK bool
}

// SelectWheel picks the wheel of project==version for platform from a page's
// files. A file that is not yanked wins over a yanked one; then a wheel of
// exactly that version; failing that, the newest post-release of it (NVIDIA
// re-uploaded some CUDA 12.4 aarch64 wheels as 12.4.127.post1, and fixed
// yanked CCCL wheels that way). Then platform-specific wheels win over pure
// 'any' ones; among those the best platform tag (newest manylinux glibc),
// then ABI 'none', then the file name for a stable answer. The chosen
// file must carry a sha256.
func SelectWheel(page *Page, version, platform string) (File, error) {
	if !KnownPlatform(platform) {
		return File{}, fmt.Errorf("select wheel of %s: platform %q has no wheels (want one of %s, %s, %s, %s)",
			page.Project, platform, LinuxX86_64, LinuxSBSA, WindowsX86_64, WindowsARM64)
	}
	var best *candidate
	fitting := map[string]bool{} // versions with a wheel for the platform
	for _, f := range page.Files {
		if !wheelFilename().MatchString(f.Filename) {
			continue // not a name a wheel can have: never shown nor used
		}
		w, err := ParseWheelName(f.Filename)
		if err != nil || w.Project != page.Project {
			continue
		}
		if _, ok := parseVersion(w.Version); !ok {
			continue
		}
		c := candidate{file: f, name: w}
		for _, tag := range w.Platforms {
			c.rank = max(c.rank, platformRank(platform, tag))
		}
		if c.rank == 0 {
			continue
		}
		fitting[w.Version] = true
		c.exact = SameVersion(w.Version, version)
		if !c.exact && !isPostOf(w.Version, version) {
			continue
		}
		c.abiOK = slices.Contains(w.ABI, "none")
		if best == nil || better(c, *best) {
			best = &c
		}
	}
	if best == nil {
		return File{}, &NoWheelError{Project: page.Project, Version: version, Platform: platform,
			Index: page.URL, Versions: newestVersions(fitting, 10)}
	}
	if best.file.SHA256 == "" {
		return File{}, &MissingHashError{Project: page.Project, Filename: best.file.Filename, Index: page.URL}
	}
	return best.file, nil
}

// wheelFilename is the alphabet of PEP 427 wheel file names; files named
// otherwise on an index are ignored, so their names reach no message,
// cache or receipt.
var wheelFilename = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.+!-]+\.whl$`) })

func better(a, b candidate) bool {
	// NVIDIA yanks broken uploads and fixes them with a post-release
	// (nvidia-cuda-cccl-cu12 12.4.127 lacks nv/target; 12.4.127.post1 has
	// it), so a file that is not yanked wins over an exact yanked one.
	if a.file.Yanked != b.file.Yanked {
		return !a.file.Yanked
	}
	if a.exact != b.exact {
		return a.exact
	}
	if !a.exact {
		if c := compareVersions(a.name.Version, b.name.Version); c != 0 {
			return c > 0
		}
	}
	if (a.rank > 1) != (b.rank > 1) {
		return a.rank > 1
	}
	if a.rank != b.rank {
		return a.rank > b.rank
	}
	if a.abiOK != b.abiOK {
		return a.abiOK
	}
	return a.file.Filename < b.file.Filename
}

func newestVersions(set map[string]bool, n int) []string {
	vs := make([]string, 0, len(set))
	for v := range set {
		vs = append(vs, v)
	}
	slices.SortFunc(vs, compareVersions)
	if len(vs) > n {
		vs = vs[len(vs)-n:]
	}
	return vs
}

// Skipped is an optional requirement that the index could not satisfy.
type Skipped struct {
	Requirement Requirement
	Reason      error
}

// Resolution is the outcome of Resolve: the wheels to fetch, in the order of
// the requirements, and the optional requirements left out with the reason.
type Resolution struct {
	Artifacts []Artifact
	Skipped   []Skipped
}

// Resolve looks up every requirement on the index (a few pages at a time)
// and picks its wheel for platform. An optional requirement whose project or
// wheel is missing is skipped and reported; any other failure fails the
// whole resolution, with every failing requirement named.
//
// PEP 503 HTML pages carry no file sizes; for those wheels Resolve asks the
// file server (HEAD, else a one-byte range request), and leaves Size 0 when
// the server does not say.
func (ix *Index) Resolve(ctx context.Context, platform string, reqs []Requirement) (Resolution, error) {
	// Versions go into receipts and messages; refuse odd ones before
	// asking the index anything.
	var bad []error
	for _, r := range reqs {
		if err := checkPlainVersion(r.Component, r.Version); err != nil {
			bad = append(bad, fmt.Errorf("resolve %s (%s): %w", r.Component, r.Project, err))
		}
	}
	if len(bad) > 0 {
		return Resolution{}, termsafe.Join(bad...)
	}
	type result struct {
		art Artifact
		err error
	}
	results := make([]result, len(reqs))
	sem := make(chan struct{}, 6)
	var wg sync.WaitGroup
	for i, r := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			page, err := ix.Project(ctx, r.Project)
			if err != nil {
				results[i].err = err
				return
			}
			f, err := SelectWheel(page, r.Version, platform)
			if err != nil {
				results[i].err = err
				return
			}
			if f.Size == 0 {
				f.Size = ix.fileSize(ctx, f.URL)
			}
			results[i].art = Artifact{
				Component: r.Component, Project: page.Project, Version: r.Version, Platform: platform,
				Filename: f.Filename, RelativePath: f.Filename, SHA256: f.SHA256, Size: f.Size, URL: f.URL,
			}
		}()
	}
	wg.Wait()
	var res Resolution
	var errs []error
	for i, r := range results {
		req := reqs[i]
		var noWheel *NoWheelError
		switch {
		case r.err == nil:
			res.Artifacts = append(res.Artifacts, r.art)
		case req.Optional && (errors.As(r.err, &noWheel) || errors.Is(r.err, ErrProjectNotFound)):
			res.Skipped = append(res.Skipped, Skipped{Requirement: req, Reason: r.err})
		default:
			errs = append(errs, fmt.Errorf("resolve %s (%s==%s): %w", req.Component, req.Project, req.Version, r.err))
		}
	}
	if len(errs) > 0 {
		return Resolution{}, termsafe.Join(errs...)
	}
	return res, nil
}
