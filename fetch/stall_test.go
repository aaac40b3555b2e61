package fetch_test

// Small documents that stall (issue #19): the release listing and the
// manifests get a short stall limit and one budget for all their
// attempts, so an install gives up by itself within a minute; archives
// keep their longer limits.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cudaenv/cudaenv/fetch"
	"github.com/cudaenv/cudaenv/internal/testwait"
)

// stallingServer answers every request with its headers (or, when
// headers is false, with nothing) and then sends nothing until the
// client goes away.
func stallingServer(t *testing.T, headers bool) (*httptest.Server, *atomic.Int32) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if headers {
			w.Header().Set("Content-Length", "100000")
			w.WriteHeader(http.StatusOK)
			w.Write([]byte("<a href='redistrib_12."))
			w.(http.Flusher).Flush()
		}
		select {
		case <-r.Context().Done():
		case <-testwait.After(t):
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func TestASmallDocumentThatStallsIsGivenUpOnWithinItsBudget(t *testing.T) {
	listing := func(ctx context.Context, c *fetch.Client) error {
		_, err := c.Releases(ctx, fetch.CUDA, true)
		return err
	}
	manifest := func(ctx context.Context, c *fetch.Client) error {
		_, err := c.Manifest(ctx, fetch.CUDA, "12.4.1")
		return err
	}
	tests := []struct {
		desc    string
		get     func(context.Context, *fetch.Client) error
		headers bool
		retries int
		stall   time.Duration
		budget  time.Duration
		// what is told: one line per retry, then the error. With each,
		// every line matches it, as many as the budget had room for: how
		// many depends on how late a busy machine's timers fire, what
		// does not is that the stalls together stay within the budget.
		lines []string
		each  string
		err   string
	}{
		{"a release listing that stalls after its headers is retried as often as Retries says", listing, true, 2, 100 * time.Millisecond, 10 * time.Second,
			[]string{
				`^list cuda releases: no data for 100ms; retrying in 1ms \(attempt 2 of at most 3; [0-9.]+m?s left for metadata\)$`,
				`^list cuda releases: no data for 100ms; retrying in 2ms \(attempt 3 of at most 3; [0-9.]+m?s left for metadata\)$`,
			}, "", `^list cuda releases: no data for 100ms: http://127\.0\.0\.1:\d+/cuda/redist/$`},
		{"a manifest that stalls after its headers is given up on when the budget has no room for another attempt", manifest, true, 10, 200 * time.Millisecond, 500 * time.Millisecond,
			nil, `^get cuda 12\.4\.1 manifest: no data for 200ms; retrying in 1ms \(attempt [23] of at most 11; [0-9.]+m?s left for metadata\)$`,
			`^get cuda 12\.4\.1 manifest: no data for 200ms \(gave up after [12] attempts in \d+ms\): http://127\.0\.0\.1:\d+/cuda/redist/redistrib_12\.4\.1\.json$`},
		{"a listing whose headers never come waits no longer than the stall limit for them", listing, false, 1, 100 * time.Millisecond, 10 * time.Second,
			[]string{`^list cuda releases: cannot reach 127\.0\.0\.1:\d+: no response headers within 100ms; retrying in 1ms \(attempt 2 of at most 2; [0-9.]+m?s left for metadata\)$`}, "",
			`^list cuda releases: cannot reach 127\.0\.0\.1:\d+: no response headers within 100ms$`},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			t.Parallel()
			srv, hits := stallingServer(t, tt.headers)
			var n notices
			c := &fetch.Client{Base: srv.URL, CacheDir: t.TempDir(), Retries: tt.retries, RetryDelay: time.Millisecond,
				DocumentStall: tt.stall, DocumentBudget: tt.budget, Notice: n.add}
			err := tt.get(t.Context(), c)
			if err == nil || !regexp.MustCompile(tt.err).MatchString(err.Error()) {
				t.Fatalf("err = %v, want %s", err, tt.err)
			}
			var te *fetch.TimeoutError
			if !errors.As(err, &te) || !fetch.Unreachable(err) {
				t.Errorf("a stalled server is a timeout, and unreachable: %v", err)
			}
			want := tt.lines
			if tt.each != "" {
				for range n.lines {
					want = append(want, tt.each)
				}
				if got := time.Duration(hits.Load()) * tt.stall; got > tt.budget {
					t.Errorf("%d stalled requests of %v: more than the budget of %v", hits.Load(), tt.stall, tt.budget)
				}
				if !strings.Contains(err.Error(), fmt.Sprintf("gave up after %d attempts", len(n.lines)+1)) {
					t.Errorf("%d retries said, and %v", len(n.lines), err)
				}
			}
			if len(n.lines) != len(want) {
				t.Fatalf("%d lines, want %d:\n%s", len(n.lines), len(want), n.String())
			}
			for i, re := range want {
				if !regexp.MustCompile(re).MatchString(n.lines[i]) {
					t.Errorf("line %d = %q, want %s", i+1, n.lines[i], re)
				}
			}
			if int(hits.Load()) != len(want)+1 {
				t.Errorf("%d requests, want %d", hits.Load(), len(want)+1)
			}
		})
	}
}

func TestDocumentLimitsAreShortAndArchivesKeepTheirs(t *testing.T) {
	for _, tt := range []struct {
		desc          string
		c             fetch.Client
		header, stall time.Duration
	}{
		{"by default, 15s for headers and for a pause", fetch.Client{}, 15 * time.Second, 15 * time.Second},
		{"shorter transfer limits stay shorter", fetch.Client{HeaderTimeout: time.Second, StallTimeout: 2 * time.Second}, time.Second, 2 * time.Second},
		{"DocumentStall replaces longer ones", fetch.Client{StallTimeout: time.Minute, DocumentStall: 3 * time.Second}, 3 * time.Second, 3 * time.Second},
	} {
		l := tt.c.DocumentLimits()
		if l.Header != tt.header || l.Stall != tt.stall || l.Total <= 0 {
			t.Errorf("%s: header %v, stall %v, total %v; want %v, %v and a total", tt.desc, l.Header, l.Stall, l.Total, tt.header, tt.stall)
		}
	}

	// An archive that pauses for longer than a document may is still
	// downloaded: only StallTimeout applies to it.
	body := []byte(strings.Repeat("archive bytes ", 1000))
	sum := sha256.Sum256(body)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "14000")
		w.WriteHeader(http.StatusOK)
		w.Write(body[:7000])
		w.(http.Flusher).Flush()
		time.Sleep(400 * time.Millisecond)
		w.Write(body[7000:])
	}))
	defer srv.Close()
	c := &fetch.Client{CacheDir: t.TempDir(), Retries: -1, DocumentStall: 100 * time.Millisecond, StallTimeout: 5 * time.Second}
	a := fetch.Artifact{Component: "cuda_nvcc", Version: "12.4.131", Platform: "linux-x86_64",
		RelativePath: "cuda_nvcc/linux-x86_64/cuda_nvcc-linux-x86_64-12.4.131-archive.tar.xz",
		SHA256:       hex.EncodeToString(sum[:]), Size: int64(len(body)), URL: srv.URL + "/cuda/redist/cuda_nvcc.tar.xz"}
	if _, err := c.Obtain(t.Context(), []fetch.Artifact{a}); err != nil {
		t.Fatalf("an archive that paused for 400ms: %v", err)
	}
}

// One budget for a command's documents (#19): a listing that stalls twice
// and then answers, and then a manifest that stalls, are given up on once
// their stalls together spent the budget, not each its own.
func TestDocumentsSharingABudgetStallNoLongerTogetherThanIt(t *testing.T) {
	var listingHits, stalled atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/cuda/redist/" && listingHits.Add(1) > 2 {
			w.Write([]byte("<a href='redistrib_12.4.1.json'>redistrib_12.4.1.json</a>\n"))
			return
		}
		stalled.Add(1)
		w.Header().Set("Content-Length", "100000")
		w.WriteHeader(http.StatusOK)
		w.Write([]byte("{"))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-testwait.After(t):
		}
	}))
	defer srv.Close()
	// The budget leaves room for the listing's two stalls on a loaded
	// machine, where a stall limit's timer fires late.
	const stall, budget = 100 * time.Millisecond, 900 * time.Millisecond
	var n notices
	c := &fetch.Client{Base: srv.URL, CacheDir: t.TempDir(), Retries: 10, RetryDelay: time.Millisecond,
		DocumentStall: stall, Budget: fetch.NewBudget(budget), Notice: n.add}
	if _, err := c.Releases(t.Context(), fetch.CUDA, true); err != nil {
		t.Fatalf("a listing that answers on its third attempt: %v", err)
	}
	_, err := c.Manifest(t.Context(), fetch.CUDA, "12.4.1")
	if err == nil || !fetch.Unreachable(err) || !regexp.MustCompile(`^get cuda 12\.4\.1 manifest: (no data for 100ms|not done within [0-9.]+m?s) \(gave up after \d+ attempts in \d+ms\): `).MatchString(err.Error()) {
		t.Fatalf("err = %v\n%s", err, n.String())
	}
	// Each stalled request loses a stall limit's worth: together no more
	// than the budget (each document on its own budget would stall 2+9
	// times).
	if got, most := int(stalled.Load()), int(budget/stall); got > most {
		t.Errorf("%d stalled requests, want at most %d:\n%s", got, most, n.String())
	}
	for _, l := range n.lines {
		if !regexp.MustCompile(`; retrying in \d+ms \(attempt \d+ of at most 11; [0-9.]+m?s left for metadata\)$`).MatchString(l) {
			t.Errorf("retry line %q", l)
		}
	}

	// Once the budget is spent, a document is not even asked for (what
	// little is left may still go to one short attempt).
	before := stalled.Load()
	for i := 0; ; i++ {
		_, err = c.Manifest(t.Context(), fetch.CUDA, "12.4.1")
		if err == nil || !fetch.Unreachable(err) {
			t.Fatalf("err = %v", err)
		}
		if strings.Contains(err.Error(), "not tried: stalled or failed requests spent the 900ms this command allows for metadata") {
			break
		}
		if i == 1 {
			t.Fatalf("still tried after the budget was spent: %v", err)
		}
	}
	if stalled.Load() > before+1 {
		t.Errorf("asked the server %d times after the budget was spent", stalled.Load()-before)
	}
}
