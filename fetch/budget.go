package fetch

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Budget is the time one command may lose to failed attempts at small
// documents (release listings, manifests, PyPI project pages) and the
// waits before their retries, all documents together: however the
// stalls fall (a listing that stalls twice and then answers, then a
// manifest that stalls; a dozen project pages six at a time), the command
// gives up by itself once they have cost it the budget. An attempt that
// succeeds gives its time back (it is bounded only by what is left when
// it starts), and time spent on archives does not count, so a command
// that downloads for an hour between two documents still has its budget.
// Attempts at the same time cost their overlap once. A Budget is safe
// for concurrent use.
type Budget struct {
	total time.Duration
	mu    sync.Mutex
	lost  []span             // failed attempts and retry waits, merged
	open  map[*span]struct{} // attempts under way: counted as lost until they succeed
}

type span struct{ from, to time.Time }

// NewBudget returns a budget of total; <= 0 means DocumentBudget.
func NewBudget(total time.Duration) *Budget {
	if total <= 0 {
		total = DocumentBudget
	}
	return &Budget{total: total, open: map[*span]struct{}{}}
}

// Total is the budget's size.
func (b *Budget) Total() time.Duration { return b.total }

// Left is what is left of the budget now, attempts under way counted as
// lost.
func (b *Budget) Left() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.left(time.Now())
}

func (b *Budget) left(now time.Time) time.Duration {
	spans := slices.Clone(b.lost)
	for s := range b.open {
		spans = append(spans, span{s.from, now})
	}
	return b.total - measure(spans)
}

// Begin starts an attempt (or a wait before a retry): it returns what is
// left of the budget, which bounds the attempt, and the function that
// ends it, told whether it failed (a failed attempt's time is lost for
// good, a successful one's is given back).
func (b *Budget) Begin() (left time.Duration, end func(failed bool)) {
	now := time.Now()
	s := &span{from: now}
	b.mu.Lock()
	left = b.left(now)
	b.open[s] = struct{}{}
	b.mu.Unlock()
	var once sync.Once
	return left, func(failed bool) {
		once.Do(func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			delete(b.open, s)
			if failed {
				b.lost = merge(append(b.lost, span{s.from, time.Now()}))
			}
		})
	}
}

// Wait sleeps d (a retry's wait), or until ctx is done, and counts it as
// lost.
func (b *Budget) Wait(ctx context.Context, d time.Duration) error {
	_, end := b.Begin()
	defer end(true)
	return sleep(ctx, d)
}

// merge sorts spans and joins those that overlap.
func merge(spans []span) []span {
	slices.SortFunc(spans, func(a, b span) int { return a.from.Compare(b.from) })
	var out []span
	for _, s := range spans {
		if n := len(out); n > 0 && !s.from.After(out[n-1].to) {
			if s.to.After(out[n-1].to) {
				out[n-1].to = s.to
			}
			continue
		}
		out = append(out, s)
	}
	return out
}

// measure is the length of the union of spans.
func measure(spans []span) time.Duration {
	var d time.Duration
	for _, s := range merge(spans) {
		d += s.to.Sub(s.from)
	}
	return d
}
