package fetch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cudaenv/cudaenv/internal/atomicfile"
)

// DefaultBase is NVIDIA's server; a mirror replaces it.
const DefaultBase = "https://developer.download.nvidia.com/compute"

// IndexTTL is how long a cached release index or manifest is used without
// asking the server again.
const IndexTTL = 24 * time.Hour

// ErrOffline is wrapped by errors caused by Client.Offline: something is
// not in the cache.
var ErrOffline = errors.New("offline")

// Client talks to NVIDIA's redist server or a mirror of it. The zero value
// works (NVIDIA's server, no cache); set CacheDir to keep the index,
// manifests and verified archives between runs.
type Client struct {
	// Base replaces DefaultBase: an http(s):// or file:// URL laid out like
	// NVIDIA's (Base/<product>/redist/...).
	Base string
	// HTTP is used for http(s) URLs; nil means a client with dial and
	// response-header timeouts.
	HTTP *http.Client
	// CacheDir holds index/, manifests/ and archives/<sha256>. Empty: no
	// index cache, and archives are downloaded into a temporary directory
	// that Fetch removes.
	CacheDir string
	// Offline uses only the cache: the index and manifests whatever their
	// age, archives by sha256. Anything missing is an error wrapping
	// ErrOffline.
	Offline bool
	// Jobs is the number of parallel downloads; <= 0 means
	// max(4, runtime.NumCPU()).
	Jobs int
	// Unpackers is the number of archives decompressed and extracted at
	// once; <= 0 means min(runtime.NumCPU(), 4). Each holds its archive's
	// xz dictionary (8 MiB for xz -6) plus about 1 MiB of buffers.
	Unpackers int
	// Progress, if not nil, is told about bytes and components.
	Progress Progress
	// Retries is how often a failed transfer is retried (timeouts, resets,
	// short bodies, 5xx); 0 means 4, < 0 means never.
	Retries int
	// RetryDelay is the first backoff delay, doubled on every retry (capped
	// at 30s); 0 means 500ms.
	RetryDelay time.Duration
	// StallTimeout aborts (and retries) a transfer that receives nothing for
	// this long; 0 means 60s.
	StallTimeout time.Duration
	// HeaderTimeout aborts (and retries) a request whose response headers
	// do not come within it; 0 means 30s.
	HeaderTimeout time.Duration
	// MinSpeed aborts (and retries) a transfer that gets fewer than this
	// many bytes per second over SpeedWindow; 0 means 1024, < 0 no floor.
	MinSpeed int64
	// SpeedWindow is the span MinSpeed is measured over; 0 means 60s.
	SpeedWindow time.Duration
	// DocumentTimeout bounds each attempt at the index or a manifest, from
	// request to last byte; 0 means 2 minutes.
	DocumentTimeout time.Duration
	// DocumentStall replaces HeaderTimeout and StallTimeout, where it is
	// shorter, for the index and manifests; 0 means fetch.DocumentStall
	// (15s).
	DocumentStall time.Duration
	// DocumentBudget bounds all attempts at the index or a manifest
	// together, where Budget is nil; 0 means fetch.DocumentBudget (50s).
	DocumentBudget time.Duration
	// Budget, if not nil, bounds the time lost to failed attempts at the
	// index and the manifests of every client sharing it (and of the PyPI
	// index given it): one for a whole command, so that it gives up by
	// itself within the budget however many documents stall.
	Budget *Budget
	// Notice, if not nil, is told one line for each retry (what failed and
	// what is retried when) and for each wait on another process's
	// download of the same archive. Credentials are masked.
	Notice func(line string)
	// UserAgent is sent with every request; empty means "cudaenv".
	UserAgent string
	// Now is the clock for cache ages; nil means time.Now.
	Now func() time.Time
	// Slots, if not nil, are shared with other Fetches running at once:
	// their downloads and unpackers together stay within its limits (each
	// Fetch's own Jobs and Unpackers still apply), largest archive first.
	Slots *Slots
	// OwnFiles: the tree Fetch fills must own its files (a system store,
	// which its users check on their own): archives in the cache of
	// unpacked trees are cloned or copied into it, never linked, and the
	// others are unpacked straight into it.
	OwnFiles bool
	// NoUnpackedCache: archives are unpacked straight into the tree,
	// never through the cache of unpacked trees (CacheDir is a bundle
	// import's temporary folder, say).
	NoUnpackedCache bool
}

// Progress receives download and extraction progress. Implementations must
// be safe for concurrent use: Add and ComponentDone are called from many
// goroutines.
type Progress interface {
	// Start is called once with the bytes to obtain (archives already in the
	// cache included) and the number of components.
	Start(totalBytes int64, components int)
	// Add reports bytes obtained (downloaded, or found in the cache). It is
	// negative when a transfer has to start over (a server ignored Range,
	// or a resumed file failed its check).
	Add(bytes int64)
	// ComponentDone reports a component verified and extracted.
	ComponentDone(id string)
	// Finish is called once when Fetch returns, also on failure.
	Finish()
}

// PhaseProgress is what a Progress may also implement to hear more: bytes
// that need no download (a cached archive, the part of a resumed one),
// reported through Cached instead of Add so a rate is not inflated; and
// the component being unpacked, so a display is never blank while the
// downloads are done and the unpacking goes on.
type PhaseProgress interface {
	Cached(bytes int64)
	Unpacking(id string)
}

// cached reports bytes that needed no download.
func cached(p Progress, n int64) {
	if n == 0 || p == nil {
		return
	}
	if pp, ok := p.(PhaseProgress); ok {
		pp.Cached(n)
		return
	}
	p.Add(n)
}

func (c *Client) base() string {
	b := c.Base
	if b == "" {
		b = DefaultBase
	}
	return strings.TrimRight(b, "/")
}

// ProductURL returns the directory holding a product's manifests and
// archives, ending in "/".
func (c *Client) ProductURL(p Product) string {
	return c.base() + "/" + url.PathEscape(string(p)) + "/redist/"
}

func (c *Client) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *Client) jobs() int {
	if c.Jobs > 0 {
		return c.Jobs
	}
	return max(4, runtime.NumCPU())
}

func (c *Client) unpackers() int {
	if c.Unpackers > 0 {
		return c.Unpackers
	}
	return min(runtime.NumCPU(), 4)
}

func (c *Client) retries() int {
	switch {
	case c.Retries < 0:
		return 0
	case c.Retries == 0:
		return 4
	}
	return c.Retries
}

func (c *Client) retryDelay(attempt int) time.Duration {
	d := c.RetryDelay
	if d <= 0 {
		d = 500 * time.Millisecond
	}
	for i := 0; i < attempt && d < 30*time.Second; i++ {
		d *= 2
	}
	return min(d, 30*time.Second)
}

// limits are the timeouts of one request; documents (the index, the
// manifests) get DocumentLimits.
func (c *Client) limits(document bool) Limits {
	if document {
		return c.DocumentLimits()
	}
	return Limits{Header: c.HeaderTimeout, Stall: c.StallTimeout, MinSpeed: c.MinSpeed, Window: c.SpeedWindow}
}

// DocumentLimits are the limits of one request for a small document: the
// release index, a manifest, and (the installer passes them on) a PyPI
// project page.
func (c *Client) DocumentLimits() Limits {
	l := Limits{Header: c.HeaderTimeout, Stall: c.StallTimeout, MinSpeed: c.MinSpeed, Window: c.SpeedWindow, Total: c.DocumentTimeout}.withDefaults()
	stall := c.DocumentStall
	if stall <= 0 {
		stall = DocumentStall
	}
	l.Header, l.Stall = min(l.Header, stall), min(l.Stall, stall)
	if l.Total <= 0 {
		l.Total = 2 * time.Minute
	}
	return l
}

func (c *Client) documentBudget() time.Duration {
	if c.DocumentBudget > 0 {
		return c.DocumentBudget
	}
	return DocumentBudget
}

// notice passes a line to Notice, credentials masked.
func (c *Client) notice(format string, args ...any) {
	if c.Notice != nil {
		c.Notice(Redact(fmt.Sprintf(format, args...)))
	}
}

// noticeRetry says what failed and when it is tried again.
func (c *Client) noticeRetry(what string, err error, attempt int, delay time.Duration) {
	c.notice("%s: %v; retrying in %s (attempt %d of %d)", what, err, seconds(delay), attempt+2, c.retries()+1)
}

// RetryNote is the end of a retry line for a small document: which
// attempt comes next and what may end the retries first, the attempts
// allowed or the budget left (attempts that stall take longer than
// those refused at once, so no count is sure).
func RetryNote(delay time.Duration, next, attempts int, left time.Duration) string {
	if left >= 10*time.Second {
		left = left.Round(time.Second)
	} else {
		left = max(0, left.Round(10*time.Millisecond))
	}
	return fmt.Sprintf("retrying in %s (attempt %d of at most %d; %s left for metadata)", seconds(delay), next, attempts, seconds(left))
}

// defaultHTTP leaves response-header timeouts to Limits, which every
// request goes through, whatever HTTP client the caller sets. It is made
// from http.DefaultTransport on first use, so that a test's guard
// installed there (LoopbackOnly, in TestMain) holds for it too.
var defaultHTTP = sync.OnceValue(func() *http.Client {
	rt := http.DefaultTransport
	if g, ok := rt.(loopbackOnly); ok {
		rt = g.rt
	}
	if t, ok := rt.(*http.Transport); ok {
		t = t.Clone()
		t.MaxIdleConnsPerHost = 16
		rt = t
	}
	if _, ok := http.DefaultTransport.(loopbackOnly); ok {
		rt = LoopbackOnly(rt)
	}
	return &http.Client{Transport: rt}
})

func (c *Client) httpClient() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return defaultHTTP()
}

// cacheKey separates the index and manifest caches of different bases
// (credentials aside: the same mirror serves every user the same files).
func (c *Client) cacheKey() string {
	sum := sha256.Sum256([]byte(Redact(c.base())))
	return hex.EncodeToString(sum[:6])
}

// escapePath escapes each segment of a slash-separated path for a URL.
func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// statusError is a non-2xx HTTP answer.
type statusError struct {
	code   int
	status string
}

func (e *statusError) Error() string { return e.status }

// retryable reports whether err is worth another attempt.
func retryable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, ErrNotLoopback) {
		return false
	}
	var le *LocalError
	var pe *fs.PathError
	if errors.As(err, &le) || errors.As(err, &pe) {
		return false // the disk, not the network: another try writes to the same disk
	}
	var te *TimeoutError
	if errors.As(err, &te) {
		return true
	}
	var se *statusError
	if errors.As(err, &se) {
		return se.code >= 500 || se.code == http.StatusTooManyRequests || se.code == http.StatusRequestTimeout
	}
	var fatal *fatalError
	if errors.As(err, &fatal) {
		return false
	}
	var dns *net.DNSError
	if errors.As(err, &dns) && dns.IsNotFound {
		return false // the name does not exist: asking again changes nothing
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.EOF) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	var ue *url.Error
	return errors.As(err, &ue) // transport-level failures
}

// fatalError marks failures that no retry can fix (checksum, size).
type fatalError struct{ err error }

func (e *fatalError) Error() string { return e.err.Error() }
func (e *fatalError) Unwrap() error { return e.err }

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// filePath maps a file:// URL to a local path.
func filePath(u string) (string, error) {
	pu, err := url.Parse(u)
	if err != nil {
		return "", err
	}
	if pu.Host != "" && pu.Host != "localhost" {
		return "", fmt.Errorf("file URL %s names a host", u)
	}
	p := pu.Path
	if runtime.GOOS == "windows" && len(p) >= 3 && p[0] == '/' && p[2] == ':' {
		p = p[1:]
	}
	return filepath.FromSlash(p), nil
}

func isFileURL(u string) bool { return strings.HasPrefix(strings.ToLower(u), "file://") }

// getSmall fetches a small document (listing, manifest) into memory, with
// retries; what names it in notices.
func (c *Client) getSmall(ctx context.Context, what, u string) ([]byte, error) {
	if isFileURL(u) {
		p, err := filePath(u)
		if err != nil {
			return nil, err
		}
		if strings.HasSuffix(u, "/") {
			return listDir(p)
		}
		return os.ReadFile(p)
	}
	// A retry must have a stall limit's worth of the budget left, and no
	// attempt runs past the budget.
	b := c.Budget
	if b == nil {
		b = NewBudget(c.documentBudget())
	}
	base, start := c.DocumentLimits(), time.Now()
	for attempt := 0; ; attempt++ {
		l := base
		left, end := b.Begin()
		if left <= 0 {
			end(false)
			return nil, BudgetSpent(b, attempt)
		}
		l.Total = min(l.Total, left)
		data, err := c.getOnce(ctx, u, l)
		end(retryable(err)) // an answer (a 404) costs nothing
		if err == nil {
			return data, nil
		}
		delay := c.retryDelay(attempt)
		if !retryable(err) || attempt >= c.retries() {
			return nil, err
		}
		left = b.Left()
		if delay+l.Stall > left {
			return nil, fmt.Errorf("%w (gave up after %d attempts in %s)", err, attempt+1, time.Since(start).Round(100*time.Millisecond))
		}
		c.notice("%s: %v; %s", what, err, RetryNote(delay, attempt+2, c.retries()+1, left-delay))
		if err := b.Wait(ctx, delay); err != nil {
			return nil, err
		}
	}
}

// BudgetSpent is the error of a document not tried (again) because
// failed attempts at others spent the budget; it counts as the server
// being unreachable.
func BudgetSpent(b *Budget, attempts int) error {
	why := "not tried: "
	if attempts > 0 {
		why = fmt.Sprintf("given up after %d attempts: ", attempts)
	}
	return &TimeoutError{why + "stalled or failed requests spent the " + seconds(b.Total()) + " this command allows for metadata"}
}

const maxSmall = 64 << 20

func (c *Client) getOnce(ctx context.Context, u string, l Limits) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	c.setHeaders(req)
	resp, err := l.Do(c.httpClient(), req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, &statusError{resp.StatusCode, resp.Status}
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxSmall+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxSmall {
		return nil, &fatalError{fmt.Errorf("larger than %d bytes", maxSmall)}
	}
	return data, nil
}

func (c *Client) setHeaders(req *http.Request) {
	ua := c.UserAgent
	if ua == "" {
		ua = "cudaenv"
	}
	req.Header.Set("User-Agent", ua)
}

// listDir renders a local directory like a web server's listing.
func listDir(dir string) ([]byte, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	for _, e := range ents {
		fmt.Fprintf(&b, "<a href='%s'>%s</a>\n", e.Name(), e.Name())
	}
	return []byte(b.String()), nil
}

var releaseLinkRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`redistrib_([0-9]+(?:\.[0-9]+)*)\.json`) })

// parseIndex returns the versions of every redistrib_<version>.json link
// in a directory listing, oldest first.
func parseIndex(listing []byte) []string {
	var vs []string
	for _, m := range releaseLinkRE().FindAllSubmatch(listing, -1) {
		vs = append(vs, string(m[1]))
	}
	return sortVersions(vs)
}

type indexCache struct {
	Base     string    `json:"base"`
	Fetched  time.Time `json:"fetched"`
	Releases []string  `json:"releases"`
}

func (c *Client) indexPath(p Product) string {
	return filepath.Join(c.CacheDir, "index", c.cacheKey(), string(p)+".json")
}

// Releases lists a product's releases, oldest first, from the server's
// directory listing (every link redistrib_<version>.json). The list is
// cached for IndexTTL; refresh asks the server anyway. Offline uses the
// cache whatever its age.
func (c *Client) Releases(ctx context.Context, p Product, refresh bool) ([]string, error) {
	vs, err := c.releases(ctx, p, refresh)
	return vs, RedactError(err)
}

func (c *Client) releases(ctx context.Context, p Product, refresh bool) ([]string, error) {
	if err := checkProduct(p); err != nil {
		return nil, err
	}
	var cached *indexCache
	if c.CacheDir != "" {
		if data, _, err := readOwnFile(c.indexPath(p), maxSmall); err == nil {
			var ic indexCache
			if json.Unmarshal(data, &ic) == nil && ic.Base == Redact(c.base()) && len(ic.Releases) > 0 {
				cached = &ic
			}
		}
	}
	if c.Offline {
		if cached == nil {
			return nil, fmt.Errorf("%w: no cached release index for %s; run without --offline", ErrOffline, p)
		}
		return cached.Releases, nil
	}
	if cached != nil && !refresh {
		age := c.now().Sub(cached.Fetched)
		if age >= 0 && age < IndexTTL {
			return cached.Releases, nil
		}
	}
	u := c.ProductURL(p)
	listing, err := c.getSmall(ctx, "list "+string(p)+" releases", u)
	if err != nil {
		var ne *NetError
		if errors.As(err, &ne) { // it names the host; the URL is noise
			return nil, fmt.Errorf("list %s releases: %w", p, err)
		}
		return nil, fmt.Errorf("list %s releases: %w: %s", p, err, u)
	}
	vs := parseIndex(listing)
	if len(vs) == 0 {
		return nil, fmt.Errorf("list %s releases: no redistrib_<version>.json links in %s", p, u)
	}
	if c.CacheDir != "" {
		data, _ := json.MarshalIndent(indexCache{Base: Redact(c.base()), Fetched: c.now().UTC(), Releases: vs}, "", "  ")
		if err := c.writeCache(c.indexPath(p), data); err != nil {
			return nil, fmt.Errorf("cache %s release index: %w", p, err)
		}
	}
	return vs, nil
}

func checkProduct(p Product) error {
	if p == "" || strings.ContainsAny(string(p), "/\\.:?#% ") {
		return fmt.Errorf("invalid product %q", p)
	}
	return nil
}

func (c *Client) manifestPath(p Product, version string) string {
	return filepath.Join(c.CacheDir, "manifests", c.cacheKey(), string(p), "redistrib_"+version+".json")
}

// Manifest fetches and decodes redistrib_<version>.json of a product and
// fills every artifact's URL. The raw manifest is cached; a cached copy
// younger than IndexTTL is used without asking the server, and Offline uses
// it whatever its age.
func (c *Client) Manifest(ctx context.Context, p Product, version string) (*Manifest, error) {
	m, err := c.manifest(ctx, p, version)
	return m, RedactError(err)
}

func (c *Client) manifest(ctx context.Context, p Product, version string) (*Manifest, error) {
	if err := checkProduct(p); err != nil {
		return nil, err
	}
	if !versionRE().MatchString(version) {
		return nil, fmt.Errorf("invalid %s version %q", p, version)
	}
	name := "redistrib_" + version + ".json"
	u := c.ProductURL(p) + name
	var data []byte
	foreign := false // a cached copy another user wrote, not believed
	if c.CacheDir != "" {
		// Opened once and judged by its descriptor (readOwnFile): a
		// check of the name, then a second open, could be raced.
		d, st, err := readOwnFile(c.manifestPath(p, version), maxSmall)
		foreign = errors.Is(err, ErrForeign)
		if err == nil {
			age := c.now().Sub(st.ModTime())
			if c.Offline || (age >= 0 && age < IndexTTL) {
				data = d
			}
		}
	}
	fromCache := data != nil
	if data == nil {
		if c.Offline && foreign {
			return nil, fmt.Errorf("%w: the cached %s %s manifest was written by another user and is not believed; run without --offline", ErrOffline, p, version)
		}
		if c.Offline {
			return nil, fmt.Errorf("%w: %s %s manifest is not in the cache; run without --offline", ErrOffline, p, version)
		}
		var err error
		data, err = c.getSmall(ctx, "get "+string(p)+" "+version+" manifest", u)
		if err != nil {
			var se *statusError
			if errors.As(err, &se) && se.code == http.StatusNotFound {
				return nil, fmt.Errorf("%s %s: no such release (%s): %s", p, version, se.status, u)
			}
			var ne *NetError
			if errors.As(err, &ne) {
				return nil, fmt.Errorf("get %s %s manifest: %w", p, version, err)
			}
			return nil, fmt.Errorf("get %s %s manifest: %w: %s", p, version, err, u)
		}
	}
	m, err := Decode(data, version)
	if err != nil {
		if fromCache {
			_ = os.Remove(c.manifestPath(p, version))
		}
		return nil, fmt.Errorf("%w: %s", err, u)
	}
	if !fromCache && c.CacheDir != "" {
		cp := c.manifestPath(p, version)
		if err := c.writeCache(cp, data); err != nil {
			return nil, fmt.Errorf("cache %s %s manifest: %w", p, version, err)
		}
		now := c.now()
		_ = os.Chtimes(cp, now, now)
	}
	m.setURLs(c.ProductURL(p))
	return m, nil
}

// writeCache writes a file of the cache, marking the cache folder first
// if it is new.
func (c *Client) writeCache(name string, data []byte) error {
	if err := markCache(c.CacheDir); err != nil {
		return err
	}
	// Its top folder (index, manifests) is checked as CacheFolder checks
	// it; what is below is made by atomicfile, as the umask asks.
	if rel, err := filepath.Rel(c.CacheDir, name); err == nil && filepath.IsLocal(rel) {
		top, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
		if _, err := CacheFolder(c.CacheDir, top); err != nil {
			return err
		}
	}
	return localize(atomicfile.WriteWith(name, 0o600, func(f *os.File) error {
		_, err := cacheWrite(f, data)
		return err
	}), inCache)
}
