package image

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Registry is how cudaenv talks to registries: the credentials Docker and
// Podman keep, plain HTTP only to this machine, a deadline on every read.
type Registry struct {
	// Auth finds credentials; nil means anonymous.
	Auth *Keychain
	// Transport sends the requests; nil means http.DefaultTransport.
	Transport http.RoundTripper
	// Stall is how long a request may make no progress (no byte sent or
	// received, no response) before it is given up; 0 means 60s.
	Stall time.Duration
	// UserAgent is sent with every request.
	UserAgent string
	// Jobs are the blobs sent at once; 0 means 4.
	Jobs int

	count *pushCount
}

func (r *Registry) stall() time.Duration {
	if r.Stall > 0 {
		return r.Stall
	}
	return 60 * time.Second
}

// options are go-containerregistry's remote options for one repository.
func (r *Registry) options(ctx context.Context, repo name.Repository) []remote.Option {
	rt := r.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	g := &guard{rt: rt, stall: r.stall(), count: r.count}
	opts := []remote.Option{remote.WithContext(ctx), remote.WithTransport(g), remote.WithJobs(max(1, r.Jobs))}
	if r.Jobs == 0 {
		opts[2] = remote.WithJobs(4)
	}
	if r.UserAgent != "" {
		opts = append(opts, remote.WithUserAgent(r.UserAgent))
	}
	auth := authn.Anonymous
	if r.Auth != nil {
		a, err := r.Auth.Resolve(repo)
		if err == nil {
			auth = a
		} else {
			opts = append(opts, remote.WithAuth(failingAuth{err}))
			return opts
		}
	}
	return append(opts, remote.WithAuth(auth))
}

// failingAuth reports why credentials could not be read, when a registry
// asks for them.
type failingAuth struct{ err error }

func (f failingAuth) Authorization() (*authn.AuthConfig, error) { return nil, f.err }

// ErrPlainHTTP is wrapped by a request refused for going to another
// machine over plain HTTP.
var ErrPlainHTTP = errors.New("plain HTTP is used only for registries on this machine (localhost, 127.0.0.1, ::1); use https")

// RegistryError is what a registry did that cudaenv refuses.
type RegistryError struct {
	Host string
	Why  string
}

func (e *RegistryError) Error() string { return "registry " + e.Host + " " + e.Why }

// guard is the transport every registry request goes through: it refuses
// plain HTTP to other machines, gives up on a request that makes no
// progress for stall (waiting for headers, sending or receiving), caps
// manifests at maxManifest, and refuses a registry that answers with
// another digest than the one asked for or sent.
type guard struct {
	rt    http.RoundTripper
	stall time.Duration
	count *pushCount
}

func (g *guard) RoundTrip(req *http.Request) (*http.Response, error) {
	host := req.URL.Hostname()
	if req.URL.Scheme != "https" && !isLoopback(host) {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, fmt.Errorf("%s: %w", req.URL.Host, ErrPlainHTTP)
	}
	ctx, cancel := context.WithCancelCause(req.Context())
	w := &watchdog{stall: g.stall, cancel: cancel, host: req.URL.Host}
	w.timer = time.AfterFunc(g.stall, w.fire)
	kind := classify(req)
	var sent *sentBody
	if req.Body != nil && req.Body != http.NoBody {
		sent = &sentBody{r: req.Body, w: w}
		if strings.Contains(req.URL.Path, "/blobs/uploads/") {
			sent.count = g.count
		}
		if kind == manifestPut {
			sent.h = sha256.New()
		}
		req = req.Clone(ctx)
		req.Body = sent
	} else {
		req = req.WithContext(ctx)
	}
	resp, err := g.rt.RoundTrip(req)
	if err != nil {
		w.stop()
		if c := context.Cause(ctx); c != nil && !errors.Is(c, context.Canceled) {
			err = c
		}
		cancel(nil)
		return nil, err
	}
	w.progress()
	if err := g.check(req, kind, resp, sent); err != nil {
		resp.Body.Close()
		w.stop()
		cancel(nil)
		return nil, err
	}
	limit := int64(-1)
	if kind == manifestGet {
		limit = maxManifest
	}
	resp.Body = &guardedBody{rc: resp.Body, w: w, cancel: cancel, limit: limit, host: req.URL.Host, ctx: ctx}
	return resp, nil
}

type requestKind int

const (
	other requestKind = iota
	manifestGet
	manifestPut
	blobHead
	blobCommit
	blobMount
)

func classify(req *http.Request) requestKind {
	p := req.URL.Path
	switch {
	case strings.Contains(p, "/manifests/") && (req.Method == http.MethodGet || req.Method == http.MethodHead):
		return manifestGet
	case strings.Contains(p, "/manifests/") && req.Method == http.MethodPut:
		return manifestPut
	case strings.Contains(p, "/blobs/uploads/") && req.Method == http.MethodPut && req.URL.Query().Get("digest") != "":
		return blobCommit
	case strings.HasSuffix(p, "/blobs/uploads/") && req.Method == http.MethodPost && req.URL.Query().Get("mount") != "":
		return blobMount
	case strings.Contains(p, "/blobs/sha256:") && req.Method == http.MethodHead:
		return blobHead
	}
	return other
}

// check holds a registry's answer to what was asked: the digest it says
// it stored or has must be the one sent or asked for.
func (g *guard) check(req *http.Request, kind requestKind, resp *http.Response, sent *sentBody) error {
	got := resp.Header.Get("Docker-Content-Digest")
	ok := resp.StatusCode/100 == 2
	lie := func(want string) error {
		return &RegistryError{Host: req.URL.Host, Why: fmt.Sprintf("answered %s %s with digest %s; refusing a registry that does not keep what it is given", req.Method, req.URL.Path, got)}
	}
	switch kind {
	case manifestPut:
		if ok && sent != nil && got != "" {
			// The whole body was sent (a PUT's is read before the answer).
			if want := "sha256:" + hex.EncodeToString(sent.h.Sum(nil)); got != want {
				return lie(want)
			}
		}
		if ok {
			g.count.manifest()
		}
	case blobCommit:
		want := req.URL.Query().Get("digest")
		if ok && got != "" && got != want {
			return lie(want)
		}
		if ok {
			g.count.uploaded(want)
		}
	case blobHead:
		want := req.URL.Path[strings.LastIndex(req.URL.Path, "/")+1:]
		if ok && got != "" && got != want {
			return lie(want)
		}
		if ok {
			g.count.had(want)
		}
	case blobMount:
		if resp.StatusCode == http.StatusCreated {
			want := req.URL.Query().Get("mount")
			if got != "" && got != want {
				return lie(want)
			}
			g.count.mounted(want)
		}
	}
	return nil
}

// watchdog cancels a request that makes no progress for stall.
type watchdog struct {
	stall  time.Duration
	cancel context.CancelCauseFunc
	host   string
	mu     sync.Mutex
	timer  *time.Timer
	done   bool
}

func (w *watchdog) fire() {
	w.cancel(&RegistryError{Host: w.host, Why: fmt.Sprintf("sent or took nothing for %s; giving up", w.stall)})
}

func (w *watchdog) progress() {
	w.mu.Lock()
	if !w.done {
		w.timer.Reset(w.stall)
	}
	w.mu.Unlock()
}

func (w *watchdog) stop() {
	w.mu.Lock()
	w.done = true
	w.timer.Stop()
	w.mu.Unlock()
}

// sentBody is a request body whose reads count as progress (and, for a
// blob's upload, as bytes sent).
type sentBody struct {
	r     io.ReadCloser
	w     *watchdog
	count *pushCount
	h     interface {
		io.Writer
		Sum([]byte) []byte
	}
}

func (s *sentBody) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if n > 0 {
		s.w.progress()
		s.count.sent(n)
		if s.h != nil {
			s.h.Write(p[:n])
		}
	}
	return n, err
}

func (s *sentBody) Close() error { return s.r.Close() }

// guardedBody is a response body read under the watchdog, cut off at
// limit bytes (< 0: none); closing it ends the request.
type guardedBody struct {
	rc     io.ReadCloser
	w      *watchdog
	cancel context.CancelCauseFunc
	ctx    context.Context
	limit  int64
	n      int64
	host   string
}

func (b *guardedBody) Read(p []byte) (int, error) {
	if b.limit >= 0 && int64(len(p)) > b.limit-b.n+1 {
		p = p[:b.limit-b.n+1]
	}
	n, err := b.rc.Read(p)
	b.n += int64(n)
	if n > 0 {
		b.w.progress()
	}
	if b.limit >= 0 && b.n > b.limit {
		return n, &RegistryError{Host: b.host, Why: fmt.Sprintf("sent a manifest larger than %d MiB; refusing it", b.limit>>20)}
	}
	if err != nil && !errors.Is(err, io.EOF) {
		if c := context.Cause(b.ctx); c != nil && !errors.Is(c, context.Canceled) {
			err = c
		}
	}
	return n, err
}

func (b *guardedBody) Close() error {
	b.w.stop()
	err := b.rc.Close()
	b.cancel(nil)
	return err
}

// plain is err without the request wrapping go's HTTP client adds to a
// refusal of cudaenv's own (Put "http://…": …), which already names the
// registry.
func plain(err error) error {
	var re *RegistryError
	if errors.As(err, &re) {
		return re
	}
	if errors.Is(err, ErrPlainHTTP) {
		var ue *url.Error
		if errors.As(err, &ue) {
			return ue.Err
		}
	}
	return err
}

// isLoopback reports whether host is this machine: localhost, 127/8, ::1.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// pushCount counts what a push did with each blob.
type pushCount struct {
	mu                         sync.Mutex
	uploadedSet, hadSet, mount map[string]bool
	manifests                  int
	bytes                      int64
}

func (c *pushCount) sent(n int) {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.bytes += int64(n)
	c.mu.Unlock()
}

func newPushCount() *pushCount {
	return &pushCount{uploadedSet: map[string]bool{}, hadSet: map[string]bool{}, mount: map[string]bool{}}
}

func (c *pushCount) add(m map[string]bool, d string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	m[d] = true
	c.mu.Unlock()
}

func (c *pushCount) uploaded(d string) {
	if c != nil {
		c.add(c.uploadedSet, d)
	}
}

func (c *pushCount) had(d string) {
	if c != nil {
		c.add(c.hadSet, d)
	}
}

func (c *pushCount) mounted(d string) {
	if c != nil {
		c.add(c.mount, d)
	}
}

func (c *pushCount) manifest() {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.manifests++
	c.mu.Unlock()
}
