package fetch_test

import (
	"sync"
	"testing"
	"time"

	"github.com/cudaenv/cudaenv/fetch"
)

func TestABudgetCountsFailedTimeOnceAndGivesBackWhatSucceeded(t *testing.T) {
	const total = time.Hour
	b := fetch.NewBudget(total)
	_, end := b.Begin()
	time.Sleep(20 * time.Millisecond)
	end(false)
	if b.Left() != total {
		t.Errorf("a successful attempt cost %v", total-b.Left())
	}

	// Two failed attempts at the same time cost their overlap once: no
	// more than the time from the first start to the last end.
	start := time.Now()
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		_, end := b.Begin()
		go func() {
			defer wg.Done()
			time.Sleep(30 * time.Millisecond)
			end(true)
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if lost := total - b.Left(); lost < 30*time.Millisecond || lost > elapsed {
		t.Errorf("two overlapping failures of 30ms cost %v, want 30ms to %v", lost, elapsed)
	}

	// An attempt under way counts as lost while it runs.
	before := b.Left()
	_, end = b.Begin()
	time.Sleep(10 * time.Millisecond)
	if b.Left() >= before {
		t.Errorf("an attempt under way costs nothing yet")
	}
	end(false)
	if b.Left() != before {
		t.Errorf("a success under way was not given back: %v, want %v", b.Left(), before)
	}
	if fetch.NewBudget(0).Total() != fetch.DocumentBudget {
		t.Errorf("a zero budget is not the default")
	}
}
