// Package pypitest serves a local Python package index over httptest for
// tests: NVIDIA's CUDA and cuDNN wheel projects with their real names,
// versions from the pypi package's built-in catalog, and generated wheels
// laid out like the real ones (nvidia/cu13/bin/nvcc,
// nvidia/cuda_runtime/lib/libcudart.so.12, nvidia/cudnn/lib/libcudnn.so.9,
// ...) with tiny contents and correct sha256s in the index.
//
// Pages are PEP 691 JSON or PEP 503 HTML by the request's Accept header;
// HTMLOnly makes the index answer HTML always, like a plain static mirror.
// Files are served with Range support, so downloaders can test resuming.
package pypitest

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cudaenv/cudaenv/fetch/pypi"
)

// Option configures an Index.
type Option func(*config)

type config struct {
	htmlOnly   bool
	releases   []string
	platforms  []string
	noHash     map[string]bool
	wrongHash  map[string]bool
	missing    map[string]bool
	extra      []pypi.Release
	entries    map[string][]Entry
	cudnn      []pypi.CudnnRelease
	libraries  []pypi.Release
	frameworks []FrameworkWheel
	sdists     [][2]string // project, version
	yanked     map[[2]string]bool
	requires   map[string][]string
	cacheable  bool
	without    map[[2]string]bool
}

// HTMLOnly makes the index serve PEP 503 HTML whatever the client accepts.
func HTMLOnly() Option { return func(c *config) { c.htmlOnly = true } }

// Releases limits the index to wheels of these catalog releases (default:
// every release in the catalog).
func Releases(versions ...string) Option {
	return func(c *config) { c.releases = append(c.releases, versions...) }
}

// ExtraRelease adds wheels for a release that is not in the catalog, e.g. a
// newer one a live manifest would describe.
func ExtraRelease(r pypi.Release) Option { return func(c *config) { c.extra = append(c.extra, r) } }

// ExtraCudnn adds nvidia-cudnn-cu<major> wheels of a cuDNN build the
// catalog lacks (9.1.0.70, which PyTorch 2.4 to 2.7 pin) for these majors.
func ExtraCudnn(cudnnVersion string, cudaMajors ...int) Option {
	return func(c *config) {
		c.cudnn = append(c.cudnn, pypi.CudnnRelease{Version: cudnnVersion, CudnnVersion: cudnnVersion, CUDAMajors: cudaMajors})
	}
}

// ExtraLibrary adds nvidia-<library>-cu<major> wheels of one version of a
// library built per CUDA major (nccl, cusparselt, cutensor, cudss,
// nvshmem) for these majors, laid out as NVIDIA's: nvidia-nccl-cu13
// 2.30.7 holds nvidia/nccl/include/nccl.h and nvidia/nccl/lib/libnccl.so.2.
func ExtraLibrary(library, version string, cudaMajors ...int) Option {
	return func(c *config) {
		for _, m := range cudaMajors {
			c.libraries = append(c.libraries, pypi.Release{Version: fmt.Sprint(m), Components: []pypi.Component{{ID: library, Version: version}}})
		}
	}
}

// WithoutVersion leaves one version of a project off the index (its
// other versions stay): a release whose wheels the index has only some of.
func WithoutVersion(project, version string) Option {
	return func(c *config) { c.without[[2]string{pypi.NormalizeProject(project), version}] = true }
}

// Cacheable makes the index answer pages as PyPI does for caches: an
// ETag, Cache-Control max-age=600, and 304 Not Modified to a request with
// the page's ETag in If-None-Match.
func Cacheable() Option { return func(c *config) { c.cacheable = true } }

// Yanked marks every file of project==version yanked (PEP 592), as PyPI
// lists cuDNN 9.25.0.15.
func Yanked(project, version string) Option {
	return func(c *config) { c.yanked[[2]string{pypi.NormalizeProject(project), version}] = true }
}

// WheelRequires gives every generated wheel of a project these
// Requires-Dist lines (nvidia-cusolver-cu12 requires
// nvidia-nvjitlink-cu12, …).
func WheelRequires(project string, reqs ...string) Option {
	return func(c *config) {
		p := pypi.NormalizeProject(project)
		c.requires[p] = append(c.requires[p], reqs...)
	}
}

// Platforms limits the generated wheels to these redist platforms (default:
// linux-x86_64, linux-sbsa and windows-x86_64).
func Platforms(platforms ...string) Option {
	return func(c *config) { c.platforms = append(c.platforms, platforms...) }
}

// WithoutHash lists a project's files without any sha256.
func WithoutHash(project string) Option {
	return func(c *config) { c.noHash[pypi.NormalizeProject(project)] = true }
}

// WrongHash lists a project's files with a sha256 that does not match the
// bytes served.
func WrongHash(project string) Option {
	return func(c *config) { c.wrongHash[pypi.NormalizeProject(project)] = true }
}

// Missing removes a project from the index (its page answers 404).
func Missing(project string) Option {
	return func(c *config) { c.missing[pypi.NormalizeProject(project)] = true }
}

// Entry is a file or symlink to add to a wheel, below its package root
// (nvidia/cu13/, nvidia/cuda_runtime/, ...).
type Entry struct {
	Name string
	Body string
	Link string // a symlink to Link when set
}

// Extra adds entries to every wheel of a project, e.g. Hostile ones.
func Extra(project string, entries ...Entry) Option {
	return func(c *config) {
		p := pypi.NormalizeProject(project)
		c.entries[p] = append(c.entries[p], entries...)
	}
}

// HostileKinds lists the attacks Hostile knows, for usage messages.
const HostileKinds = "escape [PATH], receipt-link PATH, bomb"

// Hostile returns wheel entries that attack the installer:
//
//   - escape [PATH]: lib/z1 → .. and lib/zN → zN-1/.. for N up to 16, each
//     harmless to read, together climbing 15 folders above the tree; with
//     PATH (absolute), lib/escape leads there through them.
//   - receipt-link PATH: the same chain, and a receipt.json link to PATH.
//   - bomb: 16 MiB of zeros, a few KiB deflated.
func Hostile(kind, arg string) ([]Entry, error) {
	chain := []Entry{{Name: "lib/z1", Link: ".."}}
	for i := 2; i <= 16; i++ {
		chain = append(chain, Entry{Name: fmt.Sprintf("lib/z%d", i), Link: fmt.Sprintf("z%d/..", i-1)})
	}
	rel := strings.TrimLeft(arg, "/")
	switch kind {
	case "escape":
		if arg != "" {
			chain = append(chain, Entry{Name: "lib/escape", Link: "z16/" + rel})
		}
		return chain, nil
	case "receipt-link":
		if arg == "" {
			return nil, fmt.Errorf("receipt-link needs the path the receipt should land on")
		}
		return append(chain, Entry{Name: "receipt.json", Link: "lib/z16/" + rel}), nil
	case "bomb":
		return []Entry{{Name: "lib/zeros", Body: strings.Repeat("\x00", 16<<20)}}, nil
	}
	return nil, fmt.Errorf("unknown hostile wheel %q (known: %s)", kind, HostileKinds)
}

// Wheel is a generated wheel as the index lists it.
type Wheel struct {
	Project   string
	Component string
	Version   string
	Platform  string
	Filename  string
	SHA256    string // of Data, whatever the index lists
	Data      []byte
	// Metadata is the METADATA a generated wheel carries, which the index
	// also serves at <file>.metadata (PEP 658), as PyPI does.
	Metadata string
}

type projectFiles struct {
	once   sync.Once
	wheels []Wheel
	// wants are the (component, version, major) triples to generate.
	wants []want
	// fixed are wheels built up front (Frameworks).
	fixed []Wheel
}

type want struct {
	component, version string
	major              int
}

// Index is a running test index.
type Index struct {
	tb  testing.TB
	cfg config
	srv *httptest.Server

	projects map[string]*projectFiles // by normalized name
	files    sync.Map                 // filename → *Wheel

	mu   sync.Mutex
	hits map[string]int

	frameworks map[string]FrameworkWheel // by file name
}

// New starts an index; it stops when the test ends.
func New(tb testing.TB, opts ...Option) *Index {
	tb.Helper()
	cfg := config{noHash: map[string]bool{}, wrongHash: map[string]bool{}, missing: map[string]bool{}, entries: map[string][]Entry{},
		yanked: map[[2]string]bool{}, requires: map[string][]string{}, without: map[[2]string]bool{}}
	for _, o := range opts {
		o(&cfg)
	}
	if len(cfg.platforms) == 0 {
		cfg.platforms = []string{pypi.LinuxX86_64, pypi.LinuxSBSA, pypi.WindowsX86_64}
	}
	ix := &Index{tb: tb, cfg: cfg, projects: map[string]*projectFiles{}, hits: map[string]int{}, frameworks: map[string]FrameworkWheel{}}
	rels := pypi.CatalogReleases()
	if len(cfg.releases) > 0 {
		rels = slices.DeleteFunc(rels, func(r pypi.Release) bool { return !slices.Contains(cfg.releases, r.Version) })
		if len(rels) != len(cfg.releases) {
			tb.Fatalf("pypitest: releases %v are not all in the catalog", cfg.releases)
		}
	}
	rels = append(rels, cfg.extra...)
	rels = append(rels, cfg.libraries...)
	for _, r := range append(pypi.CatalogCudnnReleases(), cfg.cudnn...) {
		for _, major := range r.CUDAMajors {
			rels = append(rels, pypi.Release{Version: fmt.Sprint(major), Components: []pypi.Component{{ID: "cudnn", Version: r.CudnnVersion}}})
		}
	}
	for _, r := range rels {
		major := r.Major()
		for _, c := range r.Components {
			project, err := pypi.Project(c.ID, major)
			if err != nil {
				continue
			}
			p := ix.projects[project]
			if p == nil {
				p = &projectFiles{}
				ix.projects[project] = p
			}
			w := want{c.ID, c.Version, major}
			if !slices.Contains(p.wants, w) {
				p.wants = append(p.wants, w)
			}
		}
	}
	ix.addFrameworks()
	ix.addSdists()
	mux := http.NewServeMux()
	mux.HandleFunc("/simple/", ix.serveSimple)
	mux.HandleFunc("/files/", ix.serveFile)
	ix.srv = httptest.NewServer(mux)
	tb.Cleanup(ix.srv.Close)
	return ix
}

// URL returns the simple index base URL, ending in /simple/.
func (ix *Index) URL() string { return ix.srv.URL + "/simple/" }

// Client returns an HTTP client for the index.
func (ix *Index) Client() *http.Client { return ix.srv.Client() }

// Hits returns how many requests a path (e.g. /simple/nvidia-cuda-nvcc/ or
// /files/<wheel>) has had.
func (ix *Index) Hits(path string) int {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.hits[path]
}

// Wheels returns the generated wheels of a project.
func (ix *Index) Wheels(project string) []Wheel {
	p := ix.projects[pypi.NormalizeProject(project)]
	if p == nil {
		return nil
	}
	return slices.Clone(ix.generate(pypi.NormalizeProject(project), p))
}

// Wheel returns a generated wheel by file name.
func (ix *Index) Wheel(filename string) (Wheel, bool) {
	if w, ok := ix.files.Load(filename); ok {
		return *w.(*Wheel), true
	}
	for name, p := range ix.projects {
		ix.generate(name, p)
	}
	w, ok := ix.files.Load(filename)
	if !ok {
		return Wheel{}, false
	}
	return *w.(*Wheel), true
}

func (ix *Index) hit(path string) {
	ix.mu.Lock()
	ix.hits[path]++
	ix.mu.Unlock()
}

func (ix *Index) generate(project string, p *projectFiles) []Wheel {
	p.once.Do(func() {
		for _, wh := range p.fixed {
			p.wheels = append(p.wheels, wh)
			ix.files.Store(wh.Filename, &wh)
		}
		if len(p.wants) == 0 {
			return // a framework's project: no placeholder sdist
		}
		for _, w := range p.wants {
			if ix.cfg.without[[2]string{project, w.version}] {
				continue
			}
			for _, platform := range ix.cfg.platforms {
				tag := platformTag(platform, w.major)
				files := wheelFiles(w.component, w.version, w.major, platform)
				for _, e := range ix.cfg.entries[project] {
					if e.Link != "" {
						files = append(files, file{name: e.Name, mode: fs.ModeSymlink | 0o777, body: e.Link})
					} else {
						files = append(files, file{name: e.Name, body: e.Body})
					}
				}
				files = wheelEntries(project, w.component, w.version, w.major, tag, files, ix.cfg.requires[project])
				data, err := zipFiles(files)
				if err != nil {
					ix.tb.Errorf("pypitest: build wheel of %s %s: %v", project, w.version, err)
					continue
				}
				filename := fmt.Sprintf("%s-%s-py3-none-%s.whl", strings.ReplaceAll(project, "-", "_"), w.version, tag)
				sum := sha256.Sum256(data)
				wh := Wheel{Project: project, Component: w.component, Version: w.version, Platform: platform,
					Filename: filename, SHA256: hex.EncodeToString(sum[:]), Data: data,
					Metadata: GeneratedMetadata(project, w.component, w.version, ix.cfg.requires[project])}
				p.wheels = append(p.wheels, wh)
				ix.files.Store(filename, &wh)
			}
		}
		// The placeholder sdist NVIDIA keeps on many of these projects.
		sdist := []byte("placeholder sdist\n")
		sum := sha256.Sum256(sdist)
		wh := Wheel{Project: project, Version: "0.0.1.dev5", Filename: project + "-0.0.1.dev5.tar.gz", SHA256: hex.EncodeToString(sum[:]), Data: sdist}
		p.wheels = append(p.wheels, wh)
		ix.files.Store(wh.Filename, &wh)
	})
	return p.wheels
}

// zipFiles builds a wheel with fixed timestamps, so its bytes and hash are
// the same in every run.
func zipFiles(files []file) ([]byte, error) {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	stamp := time.Date(2025, 7, 17, 2, 56, 0, 0, time.UTC)
	for _, f := range files {
		h := &zip.FileHeader{Name: f.name, Method: zip.Deflate, Modified: stamp}
		mode := f.mode
		if mode == 0 {
			mode = 0o644
		}
		h.SetMode(mode)
		w, err := zw.CreateHeader(h)
		if err != nil {
			return nil, err
		}
		if _, err := io.WriteString(w, f.body); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func (ix *Index) serveSimple(w http.ResponseWriter, r *http.Request) {
	ix.hit(r.URL.Path)
	name := strings.Trim(strings.TrimPrefix(r.URL.Path, "/simple/"), "/")
	if name == "" {
		ix.serveRoot(w, r)
		return
	}
	if norm := pypi.NormalizeProject(name); norm != name {
		http.Redirect(w, r, "/simple/"+norm+"/", http.StatusMovedPermanently)
		return
	}
	p := ix.projects[name]
	if p == nil || ix.cfg.missing[name] {
		http.NotFound(w, r)
		return
	}
	if !strings.HasSuffix(r.URL.Path, "/") {
		http.Redirect(w, r, r.URL.Path+"/", http.StatusMovedPermanently)
		return
	}
	wheels := ix.generate(name, p)
	listed := func(wh Wheel) string {
		if fw, ok := ix.frameworks[wh.Filename]; ok && fw.ClaimSHA256 != "" {
			return fw.ClaimSHA256
		}
		switch {
		case ix.cfg.noHash[name]:
			return ""
		case ix.cfg.wrongHash[name]:
			return strings.Repeat("0", 64)
		}
		return wh.SHA256
	}
	if !ix.cfg.htmlOnly && strings.Contains(r.Header.Get("Accept"), "application/vnd.pypi.simple.v1+json") {
		type jsonFile struct {
			Filename string            `json:"filename"`
			URL      string            `json:"url"`
			Hashes   map[string]string `json:"hashes"`
			Size     int64             `json:"size"`
			Yanked   any               `json:"yanked"`
			Python   string            `json:"requires-python,omitempty"`
			Core     map[string]string `json:"core-metadata,omitempty"`
		}
		page := struct {
			Meta struct {
				APIVersion string `json:"api-version"`
			} `json:"meta"`
			Name     string     `json:"name"`
			Files    []jsonFile `json:"files"`
			Versions []string   `json:"versions"`
		}{Name: name}
		page.Meta.APIVersion = "1.1"
		seen := map[string]bool{}
		for _, wh := range wheels {
			hashes := map[string]string{}
			if h := listed(wh); h != "" {
				hashes["sha256"] = h
			}
			jf := jsonFile{Filename: wh.Filename, URL: "../../files/" + wh.Filename, Hashes: hashes, Size: ix.listedSize(wh), Yanked: false, Python: ix.requiresPython(wh.Filename)}
			if ix.cfg.yanked[[2]string{name, wh.Version}] {
				jf.Yanked = "broken upload"
			}
			if h := ix.metadataOf(wh.Filename); h != "" {
				jf.Core = map[string]string{"sha256": h}
			}
			page.Files = append(page.Files, jf)
			if !seen[wh.Version] {
				seen[wh.Version] = true
				page.Versions = append(page.Versions, wh.Version)
			}
		}
		body, _ := json.Marshal(page)
		w.Header().Set("Content-Type", "application/vnd.pypi.simple.v1+json")
		ix.writePage(w, r, body)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, "<!DOCTYPE html>\n<html><head><meta name=\"pypi:repository-version\" content=\"1.1\"><title>Links for %s</title></head><body>\n<h1>Links for %s</h1>\n", name, name)
	for _, wh := range wheels {
		href := "../../files/" + wh.Filename
		if h := listed(wh); h != "" {
			href += "#sha256=" + h
		}
		core := ""
		if h := ix.metadataOf(wh.Filename); h != "" {
			core = " data-core-metadata=\"sha256=" + h + "\""
		}
		if ix.cfg.yanked[[2]string{name, wh.Version}] {
			core += " data-yanked=\"broken upload\""
		}
		rp := ix.requiresPython(wh.Filename)
		if rp == "" {
			rp = ">=3"
		}
		fmt.Fprintf(w, "<a href=\"%s\" data-requires-python=\"%s\"%s>%s</a><br />\n", html.EscapeString(href), html.EscapeString(rp), core, html.EscapeString(wh.Filename))
	}
	fmt.Fprint(w, "</body></html>\n")
}

// writePage answers a page body, as Cacheable says.
func (ix *Index) writePage(w http.ResponseWriter, r *http.Request, body []byte) {
	if ix.cfg.cacheable {
		sum := sha256.Sum256(body)
		etag := `"` + hex.EncodeToString(sum[:8]) + `"`
		w.Header().Set("ETag", etag)
		w.Header().Set("Cache-Control", "max-age=600, public")
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	_, _ = w.Write(body)
}

func (ix *Index) serveRoot(w http.ResponseWriter, _ *http.Request) {
	names := make([]string, 0, len(ix.projects))
	for n := range ix.projects {
		if !ix.cfg.missing[n] {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprint(w, "<!DOCTYPE html>\n<html><body>\n")
	for _, n := range names {
		fmt.Fprintf(w, "<a href=\"%s/\">%s</a>\n", n, n)
	}
	fmt.Fprint(w, "</body></html>\n")
}

func (ix *Index) serveFile(w http.ResponseWriter, r *http.Request) {
	ix.hit(r.URL.Path)
	name := strings.TrimPrefix(r.URL.Path, "/files/")
	if ix.serveFramework(w, r, name) {
		return
	}
	wh, ok := ix.Wheel(name)
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(wh.Data))
}

// Download fetches url with one GET and checks its sha256; it is a test
// helper, not a downloader (the fetch package does that for real).
func Download(tb testing.TB, client *http.Client, url, sha256Hex string) []byte {
	tb.Helper()
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Get(url)
	if err != nil {
		tb.Fatalf("download %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		tb.Fatalf("download %s: %s", url, resp.Status)
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatalf("download %s: %v", url, err)
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != sha256Hex {
		tb.Fatalf("download %s: sha256 %s, want %s", url, got, sha256Hex)
	}
	return data
}
