package install

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
)

// pipeline carries out one command's plans at once (CUDA, cuDNN, NCCL, …):
// each Apply starts as soon as its plan is ready, while the next version
// is planned, and all of them share the Installer's download and
// unpacking slots (fetch.Slots), so the largest archive of any product
// goes first and no core idles while one big wheel inflates. What they
// report reaches the Reporter in the order a one-after-another install
// would have had (ordered). The first failure cancels the others; each
// Apply stages into its own folder and commits atomically, so what had
// committed stays installed and the rest leaves nothing behind.
type pipeline struct {
	in     *Installer
	ctx    context.Context
	cancel context.CancelFunc
	force  bool
	out    *ordered
	wg     sync.WaitGroup

	changed sync.Mutex // Options.Changed, one at a time

	mu        sync.Mutex
	jobs      []*job
	last      map[string]*job // per store entry: the job that installs it last
	failed    bool            // an Apply failed: the others are cancelled
	cancelled bool            // a failure cancelled another job
}

// job is one version of the command: its plan and its Apply.
type job struct {
	out  *outSlot
	done chan struct{}
	res  Result
	ok   bool
	err  error
	// own: err is this job's failure, not the cancellation another's
	// failure (or an interrupt) brought about.
	own bool
}

func (in *Installer) newPipeline(ctx context.Context, force bool) *pipeline {
	ctx, cancel := context.WithCancel(ctx)
	return &pipeline{in: in, ctx: ctx, cancel: cancel, force: force, out: &ordered{rep: in.opts.Reporter}, last: map[string]*job{}}
}

// sub is the Installer a job plans and applies with: its events go to the
// job's place in the order, and Options.Changed runs one at a time.
func (pp *pipeline) sub(j *job) *Installer {
	sub := *pp.in
	sub.opts.Reporter = j.out
	if ch := pp.in.opts.Changed; ch != nil {
		sub.opts.Changed = func() {
			pp.changed.Lock()
			defer pp.changed.Unlock()
			ch()
		}
	}
	return &sub
}

// plan plans the next version with f and starts applying it. It returns
// false, and the caller returns wait's answer, when f failed or another
// job already has: a plan that fails leaves the jobs before it to finish,
// as a one-after-another install would have.
func (pp *pipeline) plan(f func(ctx context.Context, in *Installer) (*Plan, error)) (*Plan, bool) {
	pp.mu.Lock()
	if pp.failed {
		pp.mu.Unlock()
		return nil, false
	}
	j := &job{out: pp.out.slot(), done: make(chan struct{})}
	pp.jobs = append(pp.jobs, j)
	pp.mu.Unlock()
	sub := pp.sub(j)
	pl, err := f(pp.ctx, sub)
	pp.in.fellBack = pp.in.fellBack || sub.fellBack // reported once per command
	if err != nil {
		pp.finish(j, Result{}, err, false)
		return nil, false
	}
	key := string(pl.Kind) + "/" + pl.Name
	pp.mu.Lock()
	prev := pp.last[key]
	pp.last[key] = j
	cuda := pp.last["cuda/"+pl.useWith]
	pp.mu.Unlock()
	if cuda != nil {
		// A library's hint names the CUDA of the same command; if that
		// one failed, it names the major instead (the CUDA job is ahead
		// in the order, so its end is known when the hint is said).
		j.out.adjust = func(e Event) Event {
			if r, ok := e.(Result); ok && !cuda.ok {
				if rest, ok := strings.CutPrefix(r.Use, pl.useWith+" "); ok {
					r.Use = strconv.Itoa(pl.CUDAMajor) + " " + rest
				}
				return r
			}
			return e
		}
	}
	pp.wg.Add(1)
	go func() {
		defer pp.wg.Done()
		if prev != nil {
			// The same entry twice (12.4 12.4.1): one after the other, as
			// the store's lock would have it anyway.
			select {
			case <-prev.done:
			case <-pp.ctx.Done():
				pp.finish(j, Result{}, &interrupted{pl.Label}, true)
				return
			}
		}
		res, err := sub.Apply(pp.ctx, pl, pp.force)
		pp.finish(j, res, err, true)
	}()
	return pl, true
}

// finish records how a job ended; a failure of its own cancels the other
// jobs when it is an Apply's.
func (pp *pipeline) finish(j *job, res Result, err error, applying bool) {
	pp.mu.Lock()
	if err == nil {
		j.res, j.ok = res, true
	} else {
		j.err = err
		j.own = !(errors.Is(err, context.Canceled) && pp.ctx.Err() != nil)
		if j.own && applying {
			pp.failed = true
			pp.cancel()
		}
		if !j.own {
			pp.cancelled = true
		}
	}
	pp.mu.Unlock()
	// A job that another's failure cancelled says nothing more: a
	// one-after-another install would not have started it.
	j.out.close(err != nil && !j.own)
	close(j.done)
}

// wait waits for every job and returns the results of those that
// succeeded, in order, and the error to print: the first job's own
// failure, else (interrupted) the first job's error.
func (pp *pipeline) wait() ([]Result, error) {
	pp.wg.Wait()
	pp.cancel()
	var results []Result
	var own, any error
	for _, j := range pp.jobs {
		if j.ok {
			results = append(results, j.res)
		}
		if j.err != nil && any == nil {
			any = j.err
		}
		if j.err != nil && j.own && own == nil {
			own = j.err
		}
	}
	if pp.cancelled && own != nil {
		// What the cancelled jobs had staged was hidden at once, to be
		// deleted by the next command; nothing of theirs is left here.
		pp.in.opts.Store.CleanStaging()
	}
	if own != nil {
		return results, own
	}
	return results, any
}

// ordered passes a Reporter the events and progress of installs running
// at once in the order they would have had one after another: the first
// unfinished install's go through as they happen, a later one's are held
// until every install before it has finished.
type ordered struct {
	rep   Reporter // nil hears nothing
	mu    sync.Mutex
	slots []*outSlot
	head  int // the first unfinished slot
}

// outSlot is one install's place in the order; it is the Reporter that
// install reports to.
type outSlot struct {
	o       *ordered
	idx     int
	held    []func()
	lastAdd *int64 // the held Add the next Add joins, nil after anything else
	closed  bool
	discard bool
	// adjust, when set, rewrites an event as it is passed on.
	adjust func(Event) Event
}

func (o *ordered) slot() *outSlot {
	o.mu.Lock()
	defer o.mu.Unlock()
	s := &outSlot{o: o, idx: len(o.slots)}
	o.slots = append(o.slots, s)
	return s
}

// do runs f now if the slot is first in line, else holds it.
func (s *outSlot) do(f func()) {
	s.o.mu.Lock()
	defer s.o.mu.Unlock()
	if s.idx == s.o.head {
		f()
		return
	}
	s.held, s.lastAdd = append(s.held, f), nil
}

// add is do for a Progress.Add: held ones are summed, so a bar that
// appears later starts where the download has got to. They reach it as
// bytes already present (fetch.PhaseProgress's Cached, where the
// Progress has it), not as bytes downloaded in the instant it appeared,
// which would show a rate of terabytes a second.
func (s *outSlot) add(op *orderedProgress, n int64) {
	s.o.mu.Lock()
	defer s.o.mu.Unlock()
	if s.idx != s.o.head && s.lastAdd != nil {
		*s.lastAdd += n
		return
	}
	v := &n
	if s.idx == s.o.head {
		op.call(func(p Progress) { p.Add(*v) })()
		return
	}
	s.held, s.lastAdd = append(s.held, op.call(func(p Progress) { present(p, *v) })), v
}

// present reports n bytes already present: Cached where p has it.
func present(p Progress, n int64) {
	if pp, ok := p.(interface{ Cached(int64) }); ok {
		pp.Cached(n)
	} else {
		p.Add(n)
	}
}

// close ends the slot; discard drops what it still holds. The next slots
// in line then say what they hold.
func (s *outSlot) close(discard bool) {
	o := s.o
	o.mu.Lock()
	defer o.mu.Unlock()
	s.closed = true
	if discard {
		s.held, s.discard = nil, true
	}
	for o.head < len(o.slots) && o.slots[o.head].closed {
		o.head++
		if o.head < len(o.slots) {
			n := o.slots[o.head]
			if !n.discard {
				for _, f := range n.held {
					f()
				}
			}
			n.held, n.lastAdd = nil, nil
		}
	}
}

func (s *outSlot) Event(e Event) {
	if s.o.rep != nil {
		s.do(func() {
			if s.adjust != nil {
				e = s.adjust(e)
			}
			s.o.rep.Event(e)
		})
	}
}

func (s *outSlot) Progress(label string) Progress {
	if s.o.rep == nil {
		return nil
	}
	return &orderedProgress{s: s, label: label}
}

// orderedProgress is a Progress whose calls keep their slot's place; the
// Reporter is asked for the real one when the first of them is passed on.
type orderedProgress struct {
	s     *outSlot
	label string
	p     Progress // nil when the Reporter gave none
	asked bool
}

// to passes a call on in the slot's order.
func (op *orderedProgress) to(f func(p Progress)) { op.s.do(op.call(f)) }

// call is f on the real Progress, run in order (under ordered.mu).
func (op *orderedProgress) call(f func(p Progress)) func() {
	return func() {
		if !op.asked {
			op.p, op.asked = op.s.o.rep.Progress(op.label), true
		}
		if op.p != nil {
			f(op.p)
		}
	}
}

func (op *orderedProgress) Start(total int64, components int) {
	op.to(func(p Progress) { p.Start(total, components) })
}
func (op *orderedProgress) Add(n int64) { op.s.add(op, n) }
func (op *orderedProgress) ComponentDone(id string) {
	op.to(func(p Progress) { p.ComponentDone(id) })
}
func (op *orderedProgress) Finish() { op.to(func(p Progress) { p.Finish() }) }

// Cached and Unpacking pass on fetch.PhaseProgress where the Progress
// has it; Cached bytes are Added where it does not, as fetch does.
func (op *orderedProgress) Cached(n int64) {
	op.to(func(p Progress) { present(p, n) })
}

func (op *orderedProgress) Unpacking(id string) {
	op.to(func(p Progress) {
		if pp, ok := p.(interface{ Unpacking(string) }); ok {
			pp.Unpacking(id)
		}
	})
}
