package pypi_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cudaenv/cudaenv/fetch"
	"github.com/cudaenv/cudaenv/fetch/pypi"
	"github.com/cudaenv/cudaenv/internal/testwait"
)

// A project page that stalls after its headers is retried as WithRetries
// says, one line each, and then given up on with the stall named.
func TestAProjectPageThatStallsAfterItsHeadersIsGivenUpOn(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/vnd.pypi.simple.v1+json")
		w.Header().Set("Content-Length", "100000")
		w.WriteHeader(http.StatusOK)
		w.Write([]byte(`{"meta": {"api-version": "1.1"}, "files": [`))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-testwait.After(t):
		}
	}))
	defer srv.Close()
	var mu sync.Mutex
	var lines []string
	ix, err := pypi.NewIndex(srv.URL+"/simple/",
		pypi.WithLimits(fetch.Limits{Header: 100 * time.Millisecond, Stall: 100 * time.Millisecond, Total: 5 * time.Second}),
		pypi.WithRetries(2, time.Millisecond),
		pypi.WithNotice(func(l string) { mu.Lock(); lines = append(lines, l); mu.Unlock() }))
	if err != nil {
		t.Fatal(err)
	}
	_, err = ix.Project(context.Background(), "nvidia-cuda-runtime-cu12")
	page := `http://127\.0\.0\.1:\d+/simple/nvidia-cuda-runtime-cu12/`
	if err == nil || !regexp.MustCompile(`^read `+page+`: no data for 100ms$`).MatchString(err.Error()) {
		t.Fatalf("err = %v", err)
	}
	var te *fetch.TimeoutError
	if !errors.As(err, &te) {
		t.Errorf("not a timeout: %v", err)
	}
	want := []string{
		`^read ` + page + `: no data for 100ms; retrying in 1ms \(attempt 2 of 3\)$`,
		`^read ` + page + `: no data for 100ms; retrying in 2ms \(attempt 3 of 3\)$`,
	}
	if len(lines) != len(want) || hits.Load() != 3 {
		t.Fatalf("%d requests and %d lines, want 3 and %d: %q", hits.Load(), len(lines), len(want), lines)
	}
	for i, re := range want {
		if !regexp.MustCompile(re).MatchString(lines[i]) {
			t.Errorf("line %d = %q, want %s", i+1, lines[i], re)
		}
	}
}

// Project pages read six at a time share one budget (#19): a dozen pages
// that stall cost the budget once, not two rounds of it.
func TestProjectPagesSharingABudgetStallNoLongerTogetherThanIt(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/vnd.pypi.simple.v1+json")
		w.WriteHeader(http.StatusOK)
		w.Write([]byte(`{"meta": {"api-version": "1.1"}, "files": [`))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-testwait.After(t):
		}
	}))
	defer srv.Close()
	const stall, budget, pages, atOnce = 100 * time.Millisecond, 450 * time.Millisecond, 12, 6
	ix, err := pypi.NewIndex(srv.URL+"/simple/",
		pypi.WithLimits(fetch.Limits{Header: stall, Stall: stall, Total: 5 * time.Second}),
		pypi.WithRetries(10, time.Millisecond), pypi.WithBudget(fetch.NewBudget(budget)))
	if err != nil {
		t.Fatal(err)
	}
	slots := make(chan struct{}, atOnce)
	var wg sync.WaitGroup
	errs := make([]error, pages)
	for i := range pages {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			_, errs[i] = ix.Project(context.Background(), fmt.Sprintf("nvidia-page-%d", i))
		}()
	}
	wg.Wait()
	for _, err := range errs {
		var te *fetch.TimeoutError
		if !errors.As(err, &te) {
			t.Errorf("not a timeout: %v", err)
		}
	}
	// Each of the six at a time makes at most budget/stall attempts that
	// stall fully and one cut short by what is left; each page on its own
	// budget would make 4 (and 10 retries allow 11).
	if got, most := int(hits.Load()), atOnce*(int(budget/stall)+1); got > most {
		t.Errorf("%d requests, want at most %d", got, most)
	}
}
