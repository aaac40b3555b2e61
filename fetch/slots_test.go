package fetch

import (
	"context"
	"testing"
	"time"

	"github.com/cudaenv/cudaenv/internal/testwait"
)

func TestSlotsServeTheLargestWaitingArchiveFirst(t *testing.T) {
	s := NewSlots(1, 1)
	ctx := context.Background()
	hold, err := s.unpack(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan int64, 3)
	for _, size := range []int64{5, 700, 40} {
		go func() {
			done, err := s.unpack(ctx, size)
			if err != nil {
				t.Error(err)
				return
			}
			got <- size
			done()
		}()
		// Each waiter queued before the next arrives.
		testwait.Until(t, "the waiter's queueing", func() bool {
			s.unpacks.mu.Lock()
			n := s.unpacks.waiting.Len()
			s.unpacks.mu.Unlock()
			return n > 0 && (size != 700 || n == 2) && (size != 40 || n == 3)
		})
	}
	hold()
	hold() // a second release of the same slot frees nothing more
	var order []int64
	for range 3 {
		select {
		case n := <-got:
			order = append(order, n)
		case <-testwait.After(t):
			t.Fatalf("slots handed out %v, then nothing", order)
		}
	}
	if order[0] != 700 || order[1] != 40 || order[2] != 5 {
		t.Errorf("slots went to %v; want the largest first: [700 40 5]", order)
	}
	// Every slot back: one more taker gets it at once.
	done, err := s.unpack(testwait.Context(t), 1)
	if err != nil {
		t.Fatalf("no slot free after every release: %v", err)
	}
	done()
	s.unpacks.mu.Lock()
	free := s.unpacks.free
	s.unpacks.mu.Unlock()
	if free != 1 {
		t.Errorf("%d slots free after every release; want 1", free)
	}
}

func TestSlotsAWaiterWhoseContextEndsLeavesTheQueue(t *testing.T) {
	s := NewSlots(1, 1)
	hold, _ := s.download(context.Background(), 1)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := s.download(ctx, 100)
		errc <- err
	}()
	for {
		s.downloads.mu.Lock()
		n := s.downloads.waiting.Len()
		s.downloads.mu.Unlock()
		if n == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("a cancelled wait for a slot succeeded")
	}
	hold()
	done, err := s.download(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	done()
	s.downloads.mu.Lock()
	defer s.downloads.mu.Unlock()
	if s.downloads.free != 1 || s.downloads.waiting.Len() != 0 {
		t.Errorf("free %d, waiting %d; want 1 free, none waiting", s.downloads.free, s.downloads.waiting.Len())
	}
}

func TestNilSlotsLimitNothing(t *testing.T) {
	var s *Slots
	for range 100 {
		if _, err := s.download(context.Background(), 1); err != nil {
			t.Fatal(err)
		}
	}
}
