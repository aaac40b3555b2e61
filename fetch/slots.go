package fetch

import (
	"container/heap"
	"context"
	"sync"
)

// Slots share the downloads and the unpacking of several Fetches that run
// at once (one command installing CUDA and cuDNN together): at most so
// many of each go on at a time, and a slot that comes free goes to the
// largest archive waiting for one, whichever Fetch it belongs to, so the
// longest decode across all of them starts first.
type Slots struct {
	downloads, unpacks slotQueue
}

// NewSlots returns Slots for that many downloads and unpackers at once;
// <= 0 means the Client's defaults (see Client.Jobs, Client.Unpackers).
func NewSlots(downloads, unpackers int) *Slots {
	c := &Client{Jobs: downloads, Unpackers: unpackers}
	s := &Slots{}
	s.downloads.free, s.unpacks.free = c.jobs(), c.unpackers()
	return s
}

// download waits for a download slot for an archive of size bytes and
// returns its release; nil Slots limit nothing.
func (s *Slots) download(ctx context.Context, size int64) (func(), error) {
	if s == nil {
		return func() {}, nil
	}
	return s.downloads.acquire(ctx, size)
}

// unpack waits for an unpacking slot, as download does.
func (s *Slots) unpack(ctx context.Context, size int64) (func(), error) {
	if s == nil {
		return func() {}, nil
	}
	return s.unpacks.acquire(ctx, size)
}

// slotQueue is a counting semaphore whose waiters are served largest
// first (first come among equals).
type slotQueue struct {
	mu      sync.Mutex
	free    int
	seq     int
	waiting slotWaiters
}

type slotWaiter struct {
	size    int64
	seq     int
	ready   chan struct{}
	granted bool
	index   int // in the heap; -1 once out of it
}

func (q *slotQueue) acquire(ctx context.Context, size int64) (func(), error) {
	q.mu.Lock()
	if q.free > 0 && q.waiting.Len() == 0 {
		q.free--
		q.mu.Unlock()
		return q.releaser(), nil
	}
	q.seq++
	w := &slotWaiter{size: size, seq: q.seq, ready: make(chan struct{})}
	heap.Push(&q.waiting, w)
	q.mu.Unlock()
	select {
	case <-w.ready:
		return q.releaser(), nil
	case <-ctx.Done():
		q.mu.Lock()
		granted := w.granted
		if !granted {
			heap.Remove(&q.waiting, w.index)
		}
		q.mu.Unlock()
		if granted {
			q.release() // handed over as the context ended: pass it on
		}
		return nil, ctx.Err()
	}
}

// releaser returns a release that works once, however often it is called.
func (q *slotQueue) releaser() func() {
	var once sync.Once
	return func() { once.Do(q.release) }
}

func (q *slotQueue) release() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.waiting.Len() > 0 {
		w := heap.Pop(&q.waiting).(*slotWaiter)
		w.granted = true
		close(w.ready)
		return
	}
	q.free++
}

type slotWaiters []*slotWaiter

func (h slotWaiters) Len() int { return len(h) }
func (h slotWaiters) Less(i, j int) bool {
	if h[i].size != h[j].size {
		return h[i].size > h[j].size
	}
	return h[i].seq < h[j].seq
}
func (h slotWaiters) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *slotWaiters) Push(x any) {
	w := x.(*slotWaiter)
	w.index = len(*h)
	*h = append(*h, w)
}
func (h *slotWaiters) Pop() any {
	old := *h
	w := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	w.index = -1
	return w
}
