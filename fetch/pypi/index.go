package pypi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cudaenv/cudaenv/fetch"
)

// DefaultIndex is the public PyPI simple index.
const DefaultIndex = "https://pypi.org/simple/"

// Media types of the simple repository API (PEP 691).
const (
	mediaJSON = "application/vnd.pypi.simple.v1+json"
	mediaHTML = "application/vnd.pypi.simple.v1+html"
	// acceptHeader asks for JSON and takes the HTML forms as fallback.
	acceptHeader = mediaJSON + ", " + mediaHTML + ";q=0.2, text/html;q=0.01"
)

// maxPage bounds the size of one project page; the largest NVIDIA pages are a
// few hundred KiB.
const maxPage = 32 << 20

// ErrProjectNotFound is returned (wrapped) when the index has no such project.
var ErrProjectNotFound = errors.New("project not found on the index")

// Index reads projects from a simple repository (PEP 503 HTML or PEP 691 JSON).
type Index struct {
	base      *url.URL
	client    *http.Client
	userAgent string
	retries   int
	backoff   time.Duration
	accept    string
	limits    fetch.Limits
	notice    func(string)
	budget    *fetch.Budget
	// pages memoizes project pages for the Index's life (one command):
	// the resolver, the planner and the wheel picker ask for the same
	// projects.
	pages sync.Map // normalized name → *pageCall
	// cacheDir, when set, keeps pages on disk (see WithPageCache).
	cacheDir string
	refresh  bool
	// bytesRead counts the bytes of pages and metadata read from the
	// network, for benchmarks.
	bytesRead atomic.Int64
}

type pageCall struct {
	once sync.Once
	page *Page
	err  error
}

// WithPageCache keeps project pages under cacheDir (the download cache):
// a page is used without asking while the index's Cache-Control max-age
// allows (at most ten minutes, as pip and uv do), and after that asked for
// again with its ETag (or Last-Modified), so an unchanged page costs one
// small answer. refresh asks every time (still with the ETag).
func WithPageCache(cacheDir string, refresh bool) IndexOption {
	return func(ix *Index) { ix.cacheDir, ix.refresh = cacheDir, refresh }
}

// BytesRead is how many bytes of pages and metadata the Index read from
// the network so far (answers from the cache count nothing).
func (ix *Index) BytesRead() int64 { return ix.bytesRead.Load() }

// IndexOption configures an Index.
type IndexOption func(*Index)

// WithHTTPClient sets the HTTP client; the limits (WithLimits) apply to it
// too.
func WithHTTPClient(c *http.Client) IndexOption { return func(ix *Index) { ix.client = c } }

// WithLimits sets the timeouts of each request: response headers, stalls,
// the speed floor, the total (default: fetch.DocumentStall for headers and
// stalls, as for any small document, fetch's speed floor, and a total of
// 60s).
func WithLimits(l fetch.Limits) IndexOption { return func(ix *Index) { ix.limits = l } }

// WithNotice sets a function told one line for each retry: what failed
// and when it is tried again (credentials masked).
func WithNotice(f func(line string)) IndexOption { return func(ix *Index) { ix.notice = f } }

// WithBudget shares a budget for the time lost to failed attempts at
// project pages with the rest of a command's small documents (see
// fetch.Budget); without one, only WithRetries bounds the attempts.
func WithBudget(b *fetch.Budget) IndexOption { return func(ix *Index) { ix.budget = b } }

// WithUserAgent sets the User-Agent header sent with index requests.
func WithUserAgent(ua string) IndexOption { return func(ix *Index) { ix.userAgent = ua } }

// WithRetries sets how many times a page request is retried after a network
// error or a 5xx/429 answer, and the first backoff (doubled each time).
func WithRetries(n int, backoff time.Duration) IndexOption {
	return func(ix *Index) { ix.retries, ix.backoff = n, backoff }
}

// NewIndex returns a client for the simple index at baseURL (empty means
// DefaultIndex), e.g. a university mirror's https://mirror.example/pypi/simple/.
func NewIndex(baseURL string, opts ...IndexOption) (*Index, error) {
	if baseURL == "" {
		baseURL = DefaultIndex
	}
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("parse index url %q: %w", baseURL, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("index url %q: scheme must be http or https", baseURL)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("index url %q: no host", baseURL)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	u.RawQuery, u.Fragment = "", ""
	ix := &Index{
		base:      u,
		client:    http.DefaultClient,
		limits:    fetch.Limits{Header: fetch.DocumentStall, Stall: fetch.DocumentStall, Total: 60 * time.Second},
		userAgent: "cudaenv",
		retries:   2,
		backoff:   500 * time.Millisecond,
		accept:    acceptHeader,
	}
	for _, o := range opts {
		o(ix)
	}
	return ix, nil
}

// URL returns the index base URL, always ending in '/', with any
// credentials masked (fetch.Redact): it is for messages and receipts.
func (ix *Index) URL() string { return fetch.Redact(ix.base.String()) }

// File is one distribution file listed on a project page.
type File struct {
	Filename string
	URL      string // absolute
	SHA256   string // lower-case hex; empty when the index gave none
	Size     int64  // 0 when the index did not say (PEP 503 pages never do)
	Yanked   bool
	// Metadata says the index serves the wheel's METADATA at URL+".metadata"
	// (PEP 658/714); MetadataSHA256 is its hash when the index gave one.
	Metadata       bool
	MetadataSHA256 string
	// RequiresPython is the file's Requires-Python as the page gives it
	// (PEP 503 data-requires-python, PEP 691 requires-python); "" when none.
	RequiresPython string
}

// Page is a project's file list.
type Page struct {
	Project string // normalized name
	URL     string // the page URL the files were read from (after redirects), credentials masked
	Files   []File
}

// ProjectURL returns the page URL of a project: the base plus its
// normalized name and a trailing slash.
func (ix *Index) ProjectURL(project string) string {
	return ix.base.ResolveReference(&url.URL{Path: NormalizeProject(project) + "/"}).String()
}

// Project fetches and parses a project's page. It asks for the JSON form and
// accepts the HTML form from servers that only have that. Errors carry no
// credentials.
//
// Within one Index a page is read once; callers must not change it.
func (ix *Index) Project(ctx context.Context, project string) (*Page, error) {
	name := NormalizeProject(project)
	c, _ := ix.pages.LoadOrStore(name, &pageCall{})
	call := c.(*pageCall)
	call.once.Do(func() {
		call.page, call.err = ix.project(ctx, name)
		call.err = fetch.RedactError(call.err)
	})
	if call.err != nil && ctx.Err() == nil && errors.Is(call.err, context.Canceled) {
		// Another caller's context ended the read; read it again.
		ix.pages.CompareAndDelete(name, call)
		return ix.Project(ctx, project)
	}
	return call.page, call.err
}

func (ix *Index) project(ctx context.Context, project string) (*Page, error) {
	name := NormalizeProject(project)
	if name == "" || strings.ContainsAny(name, "/?#%\\") {
		return nil, fmt.Errorf("project name %q is not valid", project)
	}
	pageURL := ix.ProjectURL(name)
	shown := fetch.Redact(pageURL)
	cached := ix.cachedPage(name)
	if cached != nil && !ix.refresh && time.Since(cached.Fetched) < cached.MaxAge && cached.MaxAge > 0 {
		if page, err := ix.pageFromCache(name, cached); err == nil {
			return page, nil
		}
		cached = nil
	}
	var lastErr error
	delay := ix.backoff
	start := time.Now()
	for attempt := 0; attempt <= ix.retries; attempt++ {
		if attempt > 0 {
			if ix.budget != nil {
				left := ix.budget.Left()
				if delay+ix.limits.Stall > left {
					return nil, fmt.Errorf("%w (gave up after %d attempts in %s)", lastErr, attempt, time.Since(start).Round(100*time.Millisecond))
				}
				ix.tell(fmt.Sprintf("%v; %s", lastErr, fetch.RetryNote(delay, attempt+1, ix.retries+1, left-delay)))
				if err := ix.budget.Wait(ctx, delay); err != nil {
					return nil, fmt.Errorf("read %s: %w", shown, err)
				}
			} else {
				ix.tell(fmt.Sprintf("%v; retrying in %s (attempt %d of %d)", lastErr, delay, attempt+1, ix.retries+1))
				select {
				case <-ctx.Done():
					return nil, fmt.Errorf("read %s: %w", shown, ctx.Err())
				case <-time.After(delay):
				}
			}
			delay *= 2
		}
		page, retry, err := ix.attempt(ctx, name, pageURL, shown, attempt, cached)
		if err == nil {
			return page, nil
		}
		lastErr = err
		if !retry || ctx.Err() != nil {
			break
		}
	}
	return nil, lastErr
}

// tell passes a retry line to the notice function, credentials masked.
func (ix *Index) tell(line string) {
	if ix.notice != nil {
		ix.notice(fetch.Redact(line))
	}
}

// attempt is one try at a page, within what is left of the budget.
func (ix *Index) attempt(ctx context.Context, name, pageURL, shown string, attempt int, cached *cachedPage) (*Page, bool, error) {
	if ix.budget == nil {
		return ix.fetchPage(ctx, name, pageURL, ix.limits, cached)
	}
	left, end := ix.budget.Begin()
	if left <= 0 {
		end(false)
		return nil, false, fmt.Errorf("read %s: %w", shown, fetch.BudgetSpent(ix.budget, attempt))
	}
	l := ix.limits
	if l.Total <= 0 || left < l.Total {
		l.Total = left
	}
	page, retry, err := ix.fetchPage(ctx, name, pageURL, l, cached)
	end(err != nil && retry) // an answer (a 404) costs nothing
	return page, retry, err
}

func (ix *Index) fetchPage(ctx context.Context, name, pageURL string, limits fetch.Limits, cached *cachedPage) (page *Page, retry bool, err error) {
	shown := fetch.Redact(pageURL)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, pageURL, nil)
	if err != nil {
		return nil, false, fmt.Errorf("read %s: %w", shown, err)
	}
	req.Header.Set("Accept", ix.accept)
	if cached != nil && cached.ETag != "" {
		req.Header.Set("If-None-Match", cached.ETag)
	}
	if cached != nil && cached.LastModified != "" {
		req.Header.Set("If-Modified-Since", cached.LastModified)
	}
	ix.setHeaders(req)
	resp, err := limits.Do(ix.client, req)
	if err != nil {
		return nil, !errors.Is(err, fetch.ErrNotLoopback), fmt.Errorf("read %s: %w", shown, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotModified && cached != nil {
		cached.Fetched, cached.MaxAge = time.Now(), maxAge(resp.Header)
		if page, err := ix.pageFromCache(name, cached); err == nil {
			ix.saveCachedPage(name, cached)
			return page, false, nil
		}
		return nil, true, fmt.Errorf("read %s: the cached page no longer reads", shown)
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, false, fmt.Errorf("%s at %s: %w", name, shown, ErrProjectNotFound)
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return nil, true, fmt.Errorf("read %s: %s", shown, resp.Status)
	case resp.StatusCode != http.StatusOK:
		return nil, false, fmt.Errorf("read %s: %s", shown, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxPage+1))
	if err != nil {
		return nil, true, fmt.Errorf("read %s: %w", shown, err)
	}
	if len(body) > maxPage {
		return nil, false, fmt.Errorf("read %s: page larger than %d bytes", shown, maxPage)
	}
	ix.bytesRead.Add(int64(len(body)))
	finalURL := resp.Request.URL
	files, err := ParsePage(resp.Header.Get("Content-Type"), body, finalURL)
	if err != nil {
		return nil, false, fmt.Errorf("read %s: %w", shown, err)
	}
	etag, modified := resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
	if ix.cacheDir != "" && (etag != "" || modified != "" || maxAge(resp.Header) > 0) {
		u := *finalURL
		u.User = nil // credentials stay out of the cache; the index's are added back
		ix.saveCachedPage(name, &cachedPage{URL: u.String(), ContentType: resp.Header.Get("Content-Type"), ETag: etag, LastModified: modified,
			Fetched: time.Now(), MaxAge: maxAge(resp.Header), Body: body})
	}
	return &Page{Project: name, URL: fetch.Redact(finalURL.String()), Files: files}, false, nil
}

// cachedPage is a project page kept on disk, with what revalidates it.
type cachedPage struct {
	URL          string        `json:"url"` // the page's final URL, without credentials
	ContentType  string        `json:"content_type"`
	ETag         string        `json:"etag,omitempty"`
	LastModified string        `json:"last_modified,omitempty"`
	Fetched      time.Time     `json:"fetched"`
	MaxAge       time.Duration `json:"max_age"`
	Body         []byte        `json:"body"`
}

// maxPageAge caps how long a page is used without asking: PyPI says ten
// minutes.
const maxPageAge = 10 * time.Minute

// maxAge is Cache-Control's max-age, at most maxPageAge; 0 when absent
// or when the answer may not be stored.
func maxAge(h http.Header) time.Duration {
	cc := strings.ToLower(h.Get("Cache-Control"))
	if strings.Contains(cc, "no-store") || strings.Contains(cc, "no-cache") || strings.Contains(cc, "private") {
		return 0
	}
	for _, part := range strings.Split(cc, ",") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(part), "max-age="); ok {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return 0
			}
			return min(time.Duration(n)*time.Second, maxPageAge)
		}
	}
	return 0
}

// pageCacheName is where a project's page of this index is kept.
func (ix *Index) pageCacheName(name string) string {
	u := *ix.base
	u.User = nil
	sum := sha256.Sum256([]byte(u.String()))
	return path.Join("index", "pypi-"+hex.EncodeToString(sum[:6])+"-"+name+".page.json")
}

// cachedPage is the page kept for a project, nil when none can be
// believed.
func (ix *Index) cachedPage(name string) *cachedPage {
	if ix.cacheDir == "" {
		return nil
	}
	data, err := fetch.ReadTrustedCache(ix.cacheDir, ix.pageCacheName(name), maxPage*2)
	if err != nil {
		return nil
	}
	var c cachedPage
	if json.Unmarshal(data, &c) != nil || c.Fetched.After(time.Now().Add(time.Minute)) || c.MaxAge > maxPageAge {
		return nil
	}
	return &c
}

func (ix *Index) saveCachedPage(name string, c *cachedPage) {
	data, err := json.Marshal(c)
	if err == nil {
		_ = fetch.WriteCache(ix.cacheDir, ix.pageCacheName(name), data) // a cache that cannot be written only costs time
	}
}

// pageFromCache parses a kept page, as if just read from its URL: the
// index's credentials go back on where the page is on the index's host.
func (ix *Index) pageFromCache(name string, c *cachedPage) (*Page, error) {
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("cached page of %s: bad url", name)
	}
	if u.Host == ix.base.Host {
		u.User = ix.base.User
	}
	files, err := ParsePage(c.ContentType, c.Body, u)
	if err != nil {
		return nil, err
	}
	return &Page{Project: name, URL: fetch.Redact(u.String()), Files: files}, nil
}

// ParsePage parses a project page body in the form its content type names
// (PEP 691 JSON, or PEP 503 HTML for text/html and the v1+html type; an
// unknown or missing type is sniffed). Relative file URLs are resolved
// against pageURL. Files without a usable URL are dropped; hashes other than
// sha256 are ignored.
func ParsePage(contentType string, body []byte, pageURL *url.URL) ([]File, error) {
	mt, _, _ := mime.ParseMediaType(contentType)
	switch mt {
	case mediaJSON, "application/json":
		return parseJSONPage(body, pageURL)
	case mediaHTML, "text/html", "application/xhtml+xml":
		return parseHTMLPage(body, pageURL)
	}
	if trimmed := strings.TrimLeft(string(body[:min(len(body), 512)]), " \t\r\n\ufeff"); strings.HasPrefix(trimmed, "{") {
		return parseJSONPage(body, pageURL)
	}
	return parseHTMLPage(body, pageURL)
}

type jsonPage struct {
	Meta struct {
		APIVersion string `json:"api-version"`
	} `json:"meta"`
	Files []struct {
		Filename string            `json:"filename"`
		URL      string            `json:"url"`
		Hashes   map[string]string `json:"hashes"`
		Size     *int64            `json:"size"`
		Yanked   json.RawMessage   `json:"yanked"`
		Python   string            `json:"requires-python"`
		Core     json.RawMessage   `json:"core-metadata"`
		DistInfo json.RawMessage   `json:"dist-info-metadata"` // its name before PEP 714
	} `json:"files"`
}

func parseJSONPage(body []byte, pageURL *url.URL) ([]File, error) {
	var p jsonPage
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, fmt.Errorf("decode json page: %w", err)
	}
	if major, _, _ := strings.Cut(p.Meta.APIVersion, "."); major != "1" {
		return nil, fmt.Errorf("decode json page: unsupported api-version %q", p.Meta.APIVersion)
	}
	files := make([]File, 0, len(p.Files))
	for _, f := range p.Files {
		abs, err := resolveFileURL(pageURL, f.URL)
		if err != nil {
			continue
		}
		file := File{Filename: f.Filename, URL: abs, SHA256: normalizeSHA256(f.Hashes["sha256"])}
		if f.Size != nil && *f.Size > 0 {
			file.Size = *f.Size
		}
		// yanked is false or true or a reason string.
		y := strings.TrimSpace(string(f.Yanked))
		file.Yanked = y != "" && y != "false" && y != "null"
		file.RequiresPython = f.Python
		file.Metadata, file.MetadataSHA256 = jsonCoreMetadata(f.Core)
		if !file.Metadata {
			file.Metadata, file.MetadataSHA256 = jsonCoreMetadata(f.DistInfo)
		}
		if file.Filename == "" {
			file.Filename = fileNameOf(abs)
		}
		files = append(files, file)
	}
	return files, nil
}

func parseHTMLPage(body []byte, pageURL *url.URL) ([]File, error) {
	base := pageURL
	var files []File
	for _, a := range scanAnchors(string(body)) {
		if a.tag == "base" {
			if b, err := pageURL.Parse(a.attrs["href"]); err == nil {
				base = b
			}
			continue
		}
		href, ok := a.attrs["href"]
		if !ok {
			continue
		}
		abs, err := resolveFileURL(base, href)
		if err != nil {
			continue
		}
		u, _ := url.Parse(abs)
		file := File{URL: abs}
		if name, value, ok := strings.Cut(u.Fragment, "="); ok && name == "sha256" {
			file.SHA256 = normalizeSHA256(value)
		}
		u.Fragment = ""
		file.URL = u.String()
		file.Filename = strings.TrimSpace(a.text)
		if file.Filename == "" || strings.ContainsAny(file.Filename, "/\\") {
			file.Filename = fileNameOf(file.URL)
		}
		_, file.Yanked = a.attrs["data-yanked"]
		file.RequiresPython = a.attrs["data-requires-python"]
		file.Metadata, file.MetadataSHA256 = htmlCoreMetadata(a.attrs["data-core-metadata"])
		if !file.Metadata {
			file.Metadata, file.MetadataSHA256 = htmlCoreMetadata(a.attrs["data-dist-info-metadata"])
		}
		files = append(files, file)
	}
	return files, nil
}

// resolveFileURL resolves a file href against the page URL and keeps only
// http(s) results.
func resolveFileURL(pageURL *url.URL, href string) (string, error) {
	href = strings.TrimSpace(href)
	if href == "" {
		return "", errors.New("empty href")
	}
	u, err := pageURL.Parse(href)
	if err != nil {
		return "", err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("scheme %q", u.Scheme)
	}
	return u.String(), nil
}

func fileNameOf(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	return path.Base(u.Path)
}

func normalizeSHA256(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if len(s) != 64 {
		return ""
	}
	if _, err := hex.DecodeString(s); err != nil {
		return ""
	}
	return s
}

type anchor struct {
	tag   string
	attrs map[string]string
	text  string
}

// scanAnchors finds <a ...>text</a> and <base href> tags in an HTML page.
// It is a tolerant scanner for the simple pages of PEP 503, not an HTML
// parser: comments are skipped, attribute values may be quoted or bare, and
// entities are unescaped.
func scanAnchors(doc string) []anchor {
	var out []anchor
	lower := strings.ToLower(doc)
	i := 0
	for i < len(doc) {
		lt := strings.IndexByte(doc[i:], '<')
		if lt < 0 {
			break
		}
		i += lt
		if strings.HasPrefix(doc[i:], "<!--") {
			end := strings.Index(doc[i+4:], "-->")
			if end < 0 {
				break
			}
			i += 4 + end + 3
			continue
		}
		var tag string
		switch {
		case isTagStart(lower[i:], "a"):
			tag = "a"
		case isTagStart(lower[i:], "base"):
			tag = "base"
		default:
			i++
			continue
		}
		attrs, next := parseAttrs(doc, i+1+len(tag))
		i = next
		a := anchor{tag: tag, attrs: attrs}
		if tag == "a" {
			end := strings.Index(lower[i:], "</a")
			if end < 0 {
				end = len(doc) - i
			}
			a.text = html.UnescapeString(stripTags(doc[i : i+end]))
			i += end
		}
		out = append(out, a)
	}
	return out
}

func isTagStart(s, tag string) bool {
	if !strings.HasPrefix(s, "<"+tag) || len(s) <= len(tag)+1 {
		return false
	}
	c := s[len(tag)+1]
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '>' || c == '/'
}

// parseAttrs reads attributes from doc[i:] up to the closing '>' and returns
// them with the index just past it.
func parseAttrs(doc string, i int) (map[string]string, int) {
	attrs := map[string]string{}
	for i < len(doc) {
		for i < len(doc) && strings.IndexByte(" \t\r\n/", doc[i]) >= 0 {
			i++
		}
		if i >= len(doc) {
			break
		}
		if doc[i] == '>' {
			return attrs, i + 1
		}
		start := i
		for i < len(doc) && strings.IndexByte(" \t\r\n/>=", doc[i]) < 0 {
			i++
		}
		name := strings.ToLower(doc[start:i])
		for i < len(doc) && strings.IndexByte(" \t\r\n", doc[i]) >= 0 {
			i++
		}
		value := ""
		if i < len(doc) && doc[i] == '=' {
			i++
			for i < len(doc) && strings.IndexByte(" \t\r\n", doc[i]) >= 0 {
				i++
			}
			if i < len(doc) && (doc[i] == '"' || doc[i] == '\'') {
				q := doc[i]
				end := strings.IndexByte(doc[i+1:], q)
				if end < 0 {
					value, i = doc[i+1:], len(doc)
				} else {
					value, i = doc[i+1:i+1+end], i+1+end+1
				}
			} else {
				start := i
				for i < len(doc) && strings.IndexByte(" \t\r\n>", doc[i]) < 0 {
					i++
				}
				value = doc[start:i]
			}
		}
		if name != "" {
			if _, dup := attrs[name]; !dup {
				attrs[name] = html.UnescapeString(value)
			}
		}
	}
	return attrs, len(doc)
}

func stripTags(s string) string {
	var b strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == '<':
			in = true
		case r == '>':
			in = false
		case !in:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// fileSize asks a file server for the size of url: HEAD's Content-Length,
// else the total of a Content-Range answer to a one-byte range request.
// It returns 0 when neither says.
func (ix *Index) fileSize(ctx context.Context, rawURL string) int64 {
	if req, err := http.NewRequestWithContext(ctx, http.MethodHead, rawURL, nil); err == nil {
		ix.setHeaders(req)
		if resp, err := ix.limits.Do(ix.client, req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && resp.ContentLength > 0 {
				return resp.ContentLength
			}
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return 0
	}
	ix.setHeaders(req)
	req.Header.Set("Range", "bytes=0-0")
	resp, err := ix.limits.Do(ix.client, req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent {
		return 0
	}
	_, total, ok := strings.Cut(resp.Header.Get("Content-Range"), "/")
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(strings.TrimSpace(total), 10, 64)
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

func (ix *Index) setHeaders(req *http.Request) {
	if ix.userAgent != "" {
		req.Header.Set("User-Agent", ix.userAgent)
	}
}
