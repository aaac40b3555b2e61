// Package fetchtest serves a fake NVIDIA redist server for tests: real
// manifests with their sha256/size values rewritten to match small
// generated archives, plus fault injection and request counting.
//
// The mirror serves /cuda/redist/ and /cudnn/redist/ listings (HTML like
// NVIDIA's), every redistrib_<version>.json found in Options.ManifestDir
// (by default the repository's testdata/nvidia/manifests, else built-in
// synthetic manifests for cuda 12.4.1 and 13.0.0 and cudnn 9.5.1), and for each artifact a generated archive in NVIDIA's
// layout (tar.xz for linux, zip for windows; bin/nvcc prints
// "Cuda compilation tools, release 12.4, V12.4.131"). Served manifests
// differ from the originals only in the sha256 and size values, which
// are replaced in place, not re-serialised.
//
// Use it from a test, including a testscript one:
//
//	m := fetchtest.NewMirror(t, fetchtest.Options{})
//	testscript.Run(t, testscript.Params{Dir: "testdata", Setup: func(e *testscript.Env) error {
//		e.Setenv("CUDAENV_MIRROR", m.URL())
//		return nil
//	}})
//
// Faults (by component id) inject 404s, 500s, dropped connections,
// ignored Range headers, wrong hashes or sizes, truncated or corrupt
// archives and hostile archive entries; ArchiveRequests and
// RangeRequests count what clients asked for.
package fetchtest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Options configure a Mirror.
type Options struct {
	// ManifestDir holds cuda/ and cudnn/ folders of redistrib_<v>.json
	// files. Empty: the repository's copies (FindManifests); if there are
	// none, the built-in synthetic manifests (cuda 12.4.1, 13.0.0; cudnn
	// 9.5.1).
	ManifestDir string
	// Synthetic serves only the built-in manifests.
	Synthetic bool
	// Faults by component id, for every version and platform.
	Faults map[string]Fault
	// Sizes adds a file of that many bytes (deterministic, moderately
	// compressible) to a component's archives: lib/<id>.payload.
	Sizes map[string]int64
}

// Fault changes how a component's archives are generated, listed or served.
type Fault struct {
	NotFound    bool  // answer 404
	Fail        int   // answer 500 to the first Fail requests
	DropAfter   int64 // send this many body bytes, then drop the connection ...
	DropTimes   int   // ... for the first DropTimes requests (0: once)
	IgnoreRange bool  // answer Range requests with 200 and the whole archive
	WrongSHA256 bool  // the manifest lists a sha256 that does not match
	WrongSize   bool  // the manifest lists the size plus one
	// Truncate serves only the first Truncate bytes (with a matching
	// Content-Length); the manifest keeps the full size and hash.
	Truncate int64
	// CorruptArchive cuts the archive in half and makes the manifest match
	// the cut bytes: downloads verify, extraction fails.
	CorruptArchive bool
	// Hang sends half the body, then waits until the client goes away
	// (an interrupted install, a stall timeout).
	Hang    bool
	Entries []Entry // replace the archive's contents
	Extra   []Entry // append to the archive's contents
}

// Mirror is a running fake redist server.
type Mirror struct {
	srv  *httptest.Server
	opts Options

	mu        sync.Mutex
	manifests map[string]map[string][]byte // product → version → original bytes
	archives  map[string][]byte            // "product/relpath" → generated archive
	artifacts map[string]artifactInfo      // "product/relpath" → what it is
	requests  map[string]int               // URL path → count
	ranges    map[string]int               // URL path → requests with a Range header
	failed    map[string]int               // URL path → 500s answered
	dropped   map[string]int               // URL path → connections dropped
}

type artifactInfo struct {
	component, version, platform, variant string
}

// built caches generated archives by their inputs, for all mirrors of
// the process.
var built sync.Map

// NewMirror starts a mirror; it is closed when the test ends.
func NewMirror(tb testing.TB, opts Options) *Mirror {
	tb.Helper()
	m := &Mirror{
		opts:      opts,
		manifests: map[string]map[string][]byte{},
		archives:  map[string][]byte{},
		artifacts: map[string]artifactInfo{},
		requests:  map[string]int{},
		ranges:    map[string]int{},
		failed:    map[string]int{},
		dropped:   map[string]int{},
	}
	if m.opts.Faults == nil {
		m.opts.Faults = map[string]Fault{}
	}
	dir := opts.ManifestDir
	if dir == "" && !opts.Synthetic {
		dir = FindManifests()
	}
	if dir != "" {
		if err := m.loadDir(dir); err != nil {
			tb.Fatalf("fetchtest: %v", err)
		}
		// The libraries' manifests (cuTENSOR, cuSPARSELt, cuDSS) sit beside
		// the pinned ones, unpinned (see their SOURCES.md).
		if err := m.loadDir(filepath.Join(filepath.Dir(dir), "library-manifests")); err != nil {
			tb.Fatalf("fetchtest: %v", err)
		}
	} else {
		for product, vs := range synthetic {
			for v, raw := range vs {
				m.AddManifest(product, v, []byte(raw))
			}
		}
	}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	tb.Cleanup(m.srv.Close)
	return m
}

// FindManifests returns the repository's copies of NVIDIA's manifests,
// testdata/nvidia/manifests beside the go.mod found by walking up from
// the working directory (a test's package folder), or "". They are in the
// repository, not beside it, so a plain clone tests the same releases as
// any checkout.
func FindManifests() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			p := filepath.Join(dir, "testdata", "nvidia", "manifests")
			if st, err := os.Stat(p); err == nil && st.IsDir() {
				return p
			}
			return ""
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

var manifestName = regexp.MustCompile(`^redistrib_([0-9]+(?:\.[0-9]+)*)\.json$`)

func (m *Mirror) loadDir(dir string) error {
	for _, product := range []string{"cuda", "cudnn", "cutensor", "cusparselt", "cudss"} {
		ents, err := os.ReadDir(filepath.Join(dir, product))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return err
		}
		for _, e := range ents {
			mm := manifestName.FindStringSubmatch(e.Name())
			if mm == nil {
				continue
			}
			raw, err := os.ReadFile(filepath.Join(dir, product, e.Name()))
			if err != nil {
				return err
			}
			m.AddManifest(product, mm[1], raw)
		}
	}
	return nil
}

// AddManifest serves raw (a redistrib JSON) as product's release version;
// its artifacts' sha256 and size are rewritten when served.
func (m *Mirror) AddManifest(product, version string, raw []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.manifests[product] == nil {
		m.manifests[product] = map[string][]byte{}
	}
	m.manifests[product][version] = raw
	for _, a := range scanArtifacts(raw) {
		m.artifacts[product+"/"+a.relpath] = a.info
	}
}

// URL is the mirror's base: use it as Client.Base or CUDAENV_MIRROR.
func (m *Mirror) URL() string { return m.srv.URL }

// Close stops the server (also done when the test ends).
func (m *Mirror) Close() { m.srv.Close() }

// Versions lists the releases served for product.
func (m *Mirror) Versions(product string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var vs []string
	for v := range m.manifests[product] {
		vs = append(vs, v)
	}
	sort.Strings(vs)
	return vs
}

// SetFault replaces a component's fault (the zero Fault clears it) and
// forgets its generated archives and request counters.
func (m *Mirror) SetFault(component string, f Fault) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.opts.Faults[component] = f
	for key, info := range m.artifacts {
		if info.component == component {
			delete(m.archives, key)
			p := keyPath(key)
			delete(m.failed, p)
			delete(m.dropped, p)
		}
	}
}

// ResetCounts forgets all request counts.
func (m *Mirror) ResetCounts() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests = map[string]int{}
	m.ranges = map[string]int{}
}

// Requests returns how many requests each URL path got.
func (m *Mirror) Requests() map[string]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]int{}
	for k, v := range m.requests {
		out[k] = v
	}
	return out
}

// ArchiveRequests counts requests for archives of a component ("" counts
// all archives).
func (m *Mirror) ArchiveRequests(component string) int {
	return m.count(m.requests, component)
}

// RangeRequests counts requests with a Range header for archives of a
// component ("" counts all archives).
func (m *Mirror) RangeRequests(component string) int {
	return m.count(m.ranges, component)
}

func (m *Mirror) count(counts map[string]int, component string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for p, c := range counts {
		key, ok := archiveKey(p)
		if !ok {
			continue
		}
		if info, known := m.artifacts[key]; known && (component == "" || info.component == component) {
			n += c
		}
	}
	return n
}

// keyPath maps "product/relpath" to /<product>/redist/<relpath>.
func keyPath(key string) string {
	product, rel, _ := strings.Cut(key, "/")
	return "/" + product + "/redist/" + rel
}

// archiveKey maps /<product>/redist/<relpath> to "product/relpath".
func archiveKey(urlPath string) (string, bool) {
	rest := strings.TrimPrefix(urlPath, "/")
	product, rel, ok := strings.Cut(rest, "/redist/")
	if !ok || product == "" || rel == "" || strings.Contains(product, "/") {
		return "", false
	}
	return product + "/" + rel, true
}

// Manifest returns the manifest as served (hashes and sizes rewritten).
func (m *Mirror) Manifest(product, version string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.manifestLocked(product, version)
}

// Archive returns an artifact's archive as served (before Truncate).
func (m *Mirror) Archive(product, relativePath string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.archiveLocked(product + "/" + relativePath)
}

func (m *Mirror) archiveLocked(key string) ([]byte, error) {
	if data, ok := m.archives[key]; ok {
		return data, nil
	}
	info, ok := m.artifacts[key]
	if !ok {
		return nil, fmt.Errorf("no artifact %s", key)
	}
	rel := key[strings.Index(key, "/")+1:]
	f := m.opts.Faults[info.component]
	entries := f.Entries
	if entries == nil {
		entries = Contents(info.component, info.version, info.platform, info.variant)
	}
	entries = append(append([]Entry(nil), entries...), f.Extra...)
	if n := m.opts.Sizes[info.component]; n > 0 {
		entries = append(entries, Entry{Name: "lib/" + info.component + ".payload", Size: n})
	}
	sum := sha256.Sum256([]byte(key))
	seed := uint64(sum[0]) | uint64(sum[1])<<8 | uint64(sum[2])<<16
	// Generated archives are deterministic: share them between mirrors.
	cacheKey := fmt.Sprintf("%s\x00%d\x00%#v", rel, seed, entries)
	var data []byte
	if v, ok := built.Load(cacheKey); ok {
		data = v.([]byte)
	} else {
		var err error
		data, err = buildArchive(rel, entries, seed)
		if err != nil {
			return nil, fmt.Errorf("build %s: %w", key, err)
		}
		built.Store(cacheKey, data)
	}
	if f.CorruptArchive {
		data = data[:len(data)/2]
	}
	m.archives[key] = data
	return data, nil
}

func (m *Mirror) manifestLocked(product, version string) ([]byte, error) {
	raw, ok := m.manifests[product][version]
	if !ok {
		return nil, fmt.Errorf("no manifest %s %s", product, version)
	}
	arts := scanArtifacts(raw)
	sort.Slice(arts, func(i, j int) bool { return arts[i].start > arts[j].start })
	out := append([]byte(nil), raw...)
	type edit struct {
		start, end int
		text       string
	}
	var edits []edit
	for _, a := range arts {
		data, err := m.archiveLocked(product + "/" + a.relpath)
		if err != nil {
			return nil, err
		}
		f := m.opts.Faults[a.info.component]
		sum := sha256.Sum256(data)
		if f.WrongSHA256 {
			sum = sha256.Sum256(append(append([]byte(nil), data...), "wrong"...))
		}
		size := int64(len(data))
		if f.WrongSize {
			size++
		}
		if a.shaStart >= 0 {
			edits = append(edits, edit{a.shaStart, a.shaEnd, `"` + hex.EncodeToString(sum[:]) + `"`})
		}
		if a.sizeStart >= 0 {
			s := strconv.FormatInt(size, 10)
			if a.sizeQuoted {
				s = `"` + s + `"`
			}
			edits = append(edits, edit{a.sizeStart, a.sizeEnd, s})
		}
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].start > edits[j].start })
	for _, e := range edits {
		out = append(out[:e.start], append([]byte(e.text), out[e.end:]...)...)
	}
	return out, nil
}

// scannedArtifact is an artifact object found in raw manifest bytes, with
// the byte spans of its sha256 and size values.
type scannedArtifact struct {
	relpath            string
	info               artifactInfo
	start              int
	shaStart, shaEnd   int
	sizeStart, sizeEnd int
	sizeQuoted         bool
}

// scanArtifacts walks the JSON tokens of a manifest, remembering byte
// offsets, so values can be replaced without re-serialising.
func scanArtifacts(raw []byte) []scannedArtifact {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	type frame struct {
		object  bool
		wantKey bool
		key     string
		path    []string // keys from the top
		art     scannedArtifact
		strs    map[string]string
	}
	var stack []*frame
	var out []scannedArtifact
	var keys []string
	defer func() {
		// Component versions, wherever their key sits in the object.
		var top map[string]map[string]json.RawMessage
		_ = json.Unmarshal(raw, &top)
		for i := range out {
			var v string
			_ = json.Unmarshal(top[out[i].info.component]["version"], &v)
			out[i].info.version = v
		}
	}()
	for {
		before := int(dec.InputOffset())
		tok, err := dec.Token()
		if err != nil {
			return out
		}
		end := int(dec.InputOffset())
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.wantKey {
			if s, ok := tok.(string); ok {
				top.key = s
				top.wantKey = false
				continue
			}
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				if top != nil && top.object {
					keys = append(keys, top.key)
				}
				f := &frame{object: t == '{', wantKey: t == '{', path: append([]string(nil), keys...), strs: map[string]string{}}
				f.art = scannedArtifact{start: before, shaStart: -1, sizeStart: -1}
				stack = append(stack, f)
			case '}', ']':
				stack = stack[:len(stack)-1]
				if top.object && top.strs["relative_path"] != "" {
					a := top.art
					a.relpath = top.strs["relative_path"]
					a.info = infoFor(top.path)
					out = append(out, a)
				}
				if len(stack) > 0 {
					parent := stack[len(stack)-1]
					if parent.object {
						keys = keys[:len(keys)-1]
						parent.wantKey = true
					}
				}
			}
		default:
			if top == nil || !top.object {
				continue
			}
			switch v := t.(type) {
			case string:
				top.strs[top.key] = v
				if top.key == "sha256" {
					top.art.shaStart, top.art.shaEnd = end-len(v)-2, end
				}
				if top.key == "size" {
					top.art.sizeStart, top.art.sizeEnd, top.art.sizeQuoted = end-len(v)-2, end, true
				}
			case json.Number:
				if top.key == "size" {
					top.art.sizeStart, top.art.sizeEnd = end-len(v.String()), end
				}
			}
			top.wantKey = true
		}
	}
}

// infoFor derives component/platform/variant from the key path of an
// artifact object: [component, platform] or [component, platform, variant].
func infoFor(keys []string) artifactInfo {
	var info artifactInfo
	if len(keys) >= 1 {
		info.component = keys[0]
	}
	if len(keys) >= 2 {
		info.platform = keys[1]
	}
	if len(keys) >= 3 {
		info.variant = keys[2]
	}
	return info
}

func (m *Mirror) serve(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	m.mu.Lock()
	m.requests[p]++
	if r.Header.Get("Range") != "" {
		m.ranges[p]++
	}
	m.mu.Unlock()
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	product, rest, ok := strings.Cut(strings.TrimPrefix(p, "/"), "/redist/")
	if !ok {
		if p == "/" {
			fmt.Fprint(w, "<html><body><a href='cuda/'>cuda/</a><br><a href='cudnn/'>cudnn/</a></body></html>\n")
			return
		}
		if pr, found := strings.CutSuffix(strings.TrimPrefix(p, "/"), "/redist"); found && !strings.Contains(pr, "/") {
			http.Redirect(w, r, p+"/", http.StatusMovedPermanently)
			return
		}
		http.NotFound(w, r)
		return
	}
	switch {
	case rest == "":
		m.serveListing(w, product)
	case manifestName.MatchString(rest):
		v := manifestName.FindStringSubmatch(rest)[1]
		m.mu.Lock()
		data, err := m.manifestLocked(product, v)
		m.mu.Unlock()
		if err != nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		w.Write(data)
	default:
		m.serveArchive(w, r, product+"/"+rest)
	}
}

func (m *Mirror) serveListing(w http.ResponseWriter, product string) {
	m.mu.Lock()
	var vs []string
	for v := range m.manifests[product] {
		vs = append(vs, v)
	}
	m.mu.Unlock()
	if len(vs) == 0 {
		http.Error(w, "404 page not found", http.StatusNotFound)
		return
	}
	sort.Strings(vs)
	var b strings.Builder
	fmt.Fprintf(&b, "<html><head><title>Index of /compute/%s/redist</title></head><body>\n<a href='../'>Parent Directory</a><br>\n", product)
	fmt.Fprintf(&b, "<a href='redistrib-v2.schema.json'>redistrib-v2.schema.json</a><br>\n")
	for _, v := range vs {
		fmt.Fprintf(&b, "<a href='redistrib_%s.json'>redistrib_%s.json</a><br>\n", v, v)
	}
	fmt.Fprintf(&b, "<a href='cuda_nvcc/'>cuda_nvcc/</a><br>\n</body></html>\n")
	w.Header().Set("Content-Type", "text/html")
	io.WriteString(w, b.String())
}

func (m *Mirror) serveArchive(w http.ResponseWriter, r *http.Request, key string) {
	m.mu.Lock()
	info, known := m.artifacts[key]
	f := m.opts.Faults[info.component]
	var data []byte
	var err error
	if known && !f.NotFound {
		data, err = m.archiveLocked(key)
	}
	p := r.URL.Path
	fail := known && m.failed[p] < f.Fail
	if fail {
		m.failed[p]++
	}
	drop := false
	if known && f.DropAfter > 0 {
		times := f.DropTimes
		if times <= 0 {
			times = 1
		}
		if m.dropped[p] < times {
			m.dropped[p]++
			drop = true
		}
	}
	m.mu.Unlock()
	switch {
	case !known || f.NotFound:
		http.NotFound(w, r)
		return
	case err != nil:
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	case fail:
		http.Error(w, "injected failure", http.StatusInternalServerError)
		return
	}
	if f.Truncate > 0 && f.Truncate < int64(len(data)) {
		data = data[:f.Truncate]
	}
	status := http.StatusOK
	body := data
	if rg := r.Header.Get("Range"); rg != "" && !f.IgnoreRange {
		start, ok := parseRange(rg)
		if !ok || start >= int64(len(data)) {
			w.Header().Set("Content-Range", fmt.Sprintf("bytes */%d", len(data)))
			http.Error(w, "range not satisfiable", http.StatusRequestedRangeNotSatisfiable)
			return
		}
		status = http.StatusPartialContent
		body = data[start:]
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", start, len(data)-1, len(data)))
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Accept-Ranges", "bytes")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	if r.Method == http.MethodHead {
		return
	}
	if f.Hang {
		w.Write(body[:len(body)/2])
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
		<-r.Context().Done()
		return
	}
	if drop && f.DropAfter < int64(len(body)) {
		w.Write(body[:f.DropAfter])
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
				return
			}
		}
		panic(http.ErrAbortHandler)
	}
	w.Write(body)
}

// parseRange understands "bytes=N-" (all cudaenv sends).
func parseRange(s string) (int64, bool) {
	rest, ok := strings.CutPrefix(s, "bytes=")
	if !ok {
		return 0, false
	}
	first, last, ok := strings.Cut(rest, "-")
	if !ok || last != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(first, 10, 64)
	return n, err == nil && n >= 0
}
