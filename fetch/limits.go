package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Limits bound one HTTP exchange, so that a server that says nothing, or
// next to nothing, is given up on (and retried) instead of hanging forever.
// Zero fields take the defaults.
type Limits struct {
	// Header is how long to wait for the response headers; 0 means 30s.
	Header time.Duration
	// Stall is how long the body may send nothing; 0 means 60s.
	Stall time.Duration
	// MinSpeed is the floor in bytes per second, averaged over Window;
	// 0 means 1024, < 0 means no floor.
	MinSpeed int64
	// Window is the span MinSpeed is measured over; 0 means 60s.
	Window time.Duration
	// Total bounds the whole exchange, body included; 0 means no bound.
	Total time.Duration
}

// Small documents (release listings, manifests, PyPI project pages) are a
// few hundred KiB at most: a server that sends nothing of one for 15s is
// not about to (pip gives up after 15s, uv after 30s), and install should
// give up by itself within a minute, not after five stalled minutes.
// Archives keep the longer defaults above.
const (
	// DocumentStall bounds the wait for a document's response headers and
	// any pause in its body.
	DocumentStall = 15 * time.Second
	// DocumentBudget is the default Budget: what a command may lose to
	// stalled or failed attempts at all its documents together (or at
	// one, for a Client without a Budget); a retry that could not get a
	// DocumentStall's worth of time in it is not made.
	DocumentBudget = 50 * time.Second
)

func (l Limits) withDefaults() Limits {
	if l.Header <= 0 {
		l.Header = 30 * time.Second
	}
	if l.Stall <= 0 {
		l.Stall = 60 * time.Second
	}
	if l.MinSpeed == 0 {
		l.MinSpeed = 1024
	}
	if l.Window <= 0 {
		l.Window = 60 * time.Second
	}
	return l
}

// Do sends req with hc within the limits. The body of the response it
// returns enforces them while it is read; closing it stops the timers.
// A failure caused by a limit is (or wraps) a *TimeoutError.
func (l Limits) Do(hc *http.Client, req *http.Request) (*http.Response, error) {
	l = l.withDefaults()
	ctx, cancel := context.WithCancelCause(req.Context())
	g := &guard{l: l, ctx: ctx, cancel: cancel}
	if l.Total > 0 {
		g.total = time.AfterFunc(l.Total, func() {
			cancel(&TimeoutError{"not done within " + seconds(l.Total)})
		})
	}
	header := time.AfterFunc(l.Header, func() {
		cancel(&TimeoutError{"no response headers within " + seconds(l.Header)})
	})
	resp, err := hc.Do(req.WithContext(ctx))
	header.Stop()
	if err != nil {
		err = g.why(err)
		g.stop()
		if req.Context().Err() == nil { // not the caller's own cancel
			err = &NetError{Host: req.URL.Host, Err: err}
		}
		return nil, err
	}
	g.stall = time.AfterFunc(l.Stall, func() {
		cancel(&TimeoutError{"no data for " + seconds(l.Stall)})
	})
	if l.MinSpeed > 0 {
		need := int64(float64(l.MinSpeed) * l.Window.Seconds())
		g.mu.Lock()
		g.window = time.AfterFunc(l.Window, func() { g.checkSpeed(need) })
		g.mu.Unlock()
	}
	resp.Body = &guardedBody{rc: resp.Body, g: g}
	return resp, nil
}

// guard holds one exchange's timers; each cancels the request with a
// *TimeoutError as the cause.
type guard struct {
	l       Limits
	ctx     context.Context
	cancel  context.CancelCauseFunc
	total   *time.Timer
	stall   *time.Timer
	mu      sync.Mutex // guards window (its own callback re-arms it) and stopped
	window  *time.Timer
	stopped bool
	got     atomic.Int64 // bytes since the window began
}

func (g *guard) checkSpeed(need int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped {
		return
	}
	if got := g.got.Swap(0); got < need {
		g.cancel(&TimeoutError{fmt.Sprintf("slower than %d bytes/s for %s", g.l.MinSpeed, seconds(g.l.Window))})
		return
	}
	g.window.Reset(g.l.Window)
}

// why replaces the error of a request a limit cut short by that limit.
func (g *guard) why(err error) error {
	var te *TimeoutError
	if cause := context.Cause(g.ctx); errors.As(cause, &te) {
		return te
	}
	return err
}

func (g *guard) stop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.stopped = true
	for _, t := range []*time.Timer{g.total, g.stall, g.window} {
		if t != nil {
			t.Stop()
		}
	}
	g.cancel(nil)
}

type guardedBody struct {
	rc io.ReadCloser
	g  *guard
}

func (b *guardedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		b.g.stall.Reset(b.g.l.Stall)
		b.g.got.Add(int64(n))
	}
	if err != nil && err != io.EOF {
		err = b.g.why(err)
	}
	return n, err
}

func (b *guardedBody) Close() error {
	err := b.rc.Close()
	b.g.stop()
	return err
}
