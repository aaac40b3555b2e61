package fetch

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// Result describes what Fetch installed.
type Result struct {
	Platform   string
	Components []InstalledComponent // in the order of Fetch's artifacts
}

// InstalledComponent is one artifact merged into the tree.
type InstalledComponent struct {
	ID           string
	Name         string
	Version      string
	Variant      string
	Platform     string
	License      string
	RelativePath string
	SHA256       string // of the archive
	Size         int64  // of the archive
}

// Fetch downloads the artifacts in parallel (Jobs), verifies each for size
// and sha256 before any of it is extracted, keeps verified archives in
// CacheDir/archives/<sha256>, and extracts them into dest (created if
// needed) while other downloads continue (Unpackers at once, largest
// first). Each archive's top folder is stripped and the trees are merged;
// where archives overlap, the one later in arts wins. Entries that could
// escape dest (.., absolute paths, links leading outside, device files,
// names cudaenv writes itself such as receipt.json) fail the whole Fetch,
// as do archives that unpack to far more than their size. For linux
// platforms LinkLinuxLayout runs last; then the whole tree is walked once
// and a symlink that resolves outside dest, or dangles, fails the Fetch.
//
// A cached archive is re-hashed before it is used; a partial download
// (CacheDir/archives/<sha256>.part) is resumed with an HTTP Range request.
// Fetches sharing a CacheDir, in this process or others, take turns on
// each archive (CacheDir/archives/<sha256>.lock): the second waits and
// reuses what the first downloaded. On error dest holds an unspecified
// part of the tree and should be discarded; failures of this machine (a
// full disk) are *LocalError, and no error carries credentials.
func (c *Client) Fetch(ctx context.Context, arts []Artifact, dest string) (res *Result, err error) {
	defer func() { err = RedactError(err) }()
	if len(arts) == 0 {
		return nil, errors.New("fetch: no artifacts")
	}
	platform := ""
	for i := range arts {
		a := &arts[i]
		if err := a.check(); err != nil {
			return nil, fmt.Errorf("fetch: %w", err)
		}
		if a.Platform == "source" || a.Platform == "linux-all" || a.Platform == "" {
			continue
		}
		if platform != "" && platform != a.Platform {
			return nil, fmt.Errorf("fetch: artifacts for two platforms (%s, %s)", platform, a.Platform)
		}
		platform = a.Platform
	}
	dest, err = filepath.Abs(dest)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return nil, fmt.Errorf("fetch: %w", localize(err, inDest))
	}

	archiveDir := ""
	if c.CacheDir != "" {
		if !c.Offline {
			// Best effort: a read-only cache holding every archive still works.
			_ = markCache(c.CacheDir)
		} else {
			sweepOnce(c.CacheDir) // what killed bundle imports left
		}
		if archiveDir, err = CacheFolder(c.CacheDir, "archives"); err != nil {
			return nil, fmt.Errorf("fetch: %w", err)
		}
	} else {
		if c.Offline {
			return nil, fmt.Errorf("%w: no cache directory; run without --offline", ErrOffline)
		}
		archiveDir, err = os.MkdirTemp("", "cudaenv-fetch-")
		if err != nil {
			return nil, fmt.Errorf("fetch: %w", localize(err, inCache))
		}
		defer os.RemoveAll(archiveDir)
	}

	if c.Offline {
		var missing []string
		for i := range arts {
			st, err := os.Stat(filepath.Join(archiveDir, arts[i].SHA256))
			if err != nil || st.Size() != arts[i].Size {
				missing = append(missing, arts[i].label())
			}
		}
		if len(missing) > 0 {
			verb := "is"
			if len(missing) > 1 {
				verb = "are"
			}
			return nil, fmt.Errorf("%w: %s %s not in the cache; run without --offline", ErrOffline, strings.Join(missing, ", "), verb)
		}
	}

	prog := c.Progress
	if prog != nil {
		var total int64
		for i := range arts {
			total += arts[i].Size
		}
		prog.Start(total, len(arts))
		defer prog.Finish()
	}

	parent := ctx
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		errOnce  sync.Once
		firstErr error
	)
	fail := func(err error) {
		errOnce.Do(func() { firstErr = err; cancel(err) })
	}

	// Largest first: the longest decode starts earliest.
	order := make([]int, len(arts))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return arts[order[i]].Size > arts[order[j]].Size })

	m, err := newMerger(dest)
	if err != nil {
		return nil, fmt.Errorf("fetch: %w", err)
	}
	defer m.close()
	if c.CacheDir != "" && !c.NoUnpackedCache && runtime.GOOS == "linux" {
		// NVIDIA's archives are unpacked once, into the cache of unpacked
		// trees, and cloned or linked from there (wheels do it in their
		// Unpack and Reuse).
		m.cache = NewUnpackedCache(c.CacheDir, c.Notice)
		m.cache.OwnFiles = c.OwnFiles
	}
	// Whether the install succeeds or not, the cache's files it placed
	// (and a failed one's trees, discarded, then leave) stay vouched for.
	defer m.recordPlaced()

	ready := &readyQueue{arts: arts, signal: make(chan struct{}, len(arts))}
	obtain := &obtainer{c: c, dir: archiveDir, prog: prog, done: map[string]*obtained{}, shared: c.CacheDir != ""}

	var dlWG, exWG sync.WaitGroup
	todo := make(chan int, len(arts))
	for _, i := range order {
		todo <- i
	}
	close(todo)
	var remaining atomic.Int64
	remaining.Store(int64(len(arts)))
	allDone := make(chan struct{})
	for w := 0; w < min(c.jobs(), len(arts)); w++ {
		dlWG.Add(1)
		go func() {
			defer dlWG.Done()
			for i := range todo {
				if ctx.Err() != nil {
					return
				}
				if a := &arts[i]; a.Reuse != nil || m.reusable(a) {
					// Placing from the cache may hash files: an unpacker's work.
					done, err := c.Slots.unpack(ctx, a.Size)
					if err != nil {
						return
					}
					var ok bool
					if a.Reuse != nil {
						ok, err = a.Reuse(ctx, dest)
					} else {
						ok, err = m.reuse(ctx, a, i)
					}
					done()
					if err != nil {
						if ctx.Err() == nil {
							fail(fmt.Errorf("extract %s: %w (%s)", a.label(), localize(err, inDest), filepath.Base(a.RelativePath)))
						}
						return
					}
					if ok {
						cached(prog, a.Size)
						if prog != nil {
							prog.ComponentDone(a.Component)
						}
						if remaining.Add(-1) == 0 {
							close(allDone)
						}
						continue
					}
				}
				done, err := c.Slots.download(ctx, arts[i].Size)
				if err != nil {
					return
				}
				p, err := obtain.get(ctx, &arts[i])
				done()
				if err != nil {
					fail(err)
					return
				}
				ready.push(i, p)
			}
		}()
	}
	for w := 0; w < min(c.unpackers(), len(arts)); w++ {
		exWG.Add(1)
		go func() {
			defer exWG.Done()
			u := newUnpacker()
			for {
				select {
				case <-ctx.Done():
					return
				case <-ready.signal:
				}
				i, p := ready.pop()
				a := &arts[i]
				done, err := c.Slots.unpack(ctx, a.Size)
				if err != nil {
					return
				}
				if pp, ok := prog.(PhaseProgress); ok {
					pp.Unpacking(a.Component)
				}
				beforeExtract(p)
				err = m.extract(ctx, u, p, a, i, obtain.verified.unchanged)
				var gone *archiveGoneError
				if errors.As(err, &gone) && ctx.Err() == nil {
					// A cache prune removed it since: fetched again, once.
					c.notice("%s: its archive was removed from the cache while this install ran (cache prune?); downloading it again", a.label())
					if p, err = obtain.again(ctx, a); err == nil {
						err = m.extract(ctx, u, p, a, i, obtain.verified.unchanged)
					}
				}
				done()
				if err != nil {
					if ctx.Err() == nil {
						fail(fmt.Errorf("extract %s: %w (%s)", a.label(), localize(err, inDest), filepath.Base(a.RelativePath)))
					}
					return
				}
				if prog != nil {
					prog.ComponentDone(a.Component)
				}
				if remaining.Add(-1) == 0 {
					close(allDone)
				}
			}
		}()
	}
	select {
	case <-allDone:
	case <-ctx.Done():
	}
	cancel(nil)
	dlWG.Wait()
	exWG.Wait()
	if firstErr != nil {
		return nil, withSpaceNeeded(firstErr, arts, archiveDir)
	}
	select {
	case <-allDone:
	default:
		if err := parent.Err(); err != nil {
			return nil, err
		}
		return nil, context.Canceled
	}

	if rank, err := m.finish(platform); err != nil {
		if rank >= 0 {
			a := &arts[rank]
			return nil, fmt.Errorf("extract %s: %w (%s)", a.label(), err, filepath.Base(a.RelativePath))
		}
		return nil, err
	}
	res = &Result{Platform: platform}
	for i := range arts {
		a := &arts[i]
		res.Components = append(res.Components, InstalledComponent{
			ID: a.Component, Name: a.Name, Version: a.Version, Variant: a.Variant, Platform: a.Platform,
			License: a.License, RelativePath: a.RelativePath, SHA256: a.SHA256, Size: a.Size,
		})
	}
	return res, nil
}

// Obtain puts a verified copy of each artifact in CacheDir/archives,
// downloading (in parallel, Jobs) only what the cache lacks, and returns
// the archives' paths by sha256. Nothing is extracted: offline bundles
// carry the archives themselves. CacheDir must be set.
func (c *Client) Obtain(ctx context.Context, arts []Artifact) (map[string]string, error) {
	if c.CacheDir == "" {
		return nil, errors.New("fetch: no cache directory to keep the archives in")
	}
	for i := range arts {
		if err := arts[i].check(); err != nil {
			return nil, fmt.Errorf("fetch: %w", err)
		}
	}
	dir, err := CacheFolder(c.CacheDir, "archives")
	if err != nil {
		return nil, fmt.Errorf("fetch: %w", err)
	}
	prog := c.Progress
	if prog != nil {
		var total int64
		for i := range arts {
			total += arts[i].Size
		}
		prog.Start(total, len(arts))
		defer prog.Finish()
	}
	ctx, cancel := context.WithCancelCause(ctx) // the cause: see download
	defer cancel(nil)
	o := &obtainer{c: c, dir: dir, prog: prog, done: map[string]*obtained{}}
	todo := make(chan int, len(arts))
	for i := range arts {
		todo <- i
	}
	close(todo)
	var (
		wg      sync.WaitGroup
		errOnce sync.Once
		first   error
	)
	for w := 0; w < min(c.jobs(), len(arts)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range todo {
				if ctx.Err() != nil {
					return
				}
				if _, err := o.get(ctx, &arts[i]); err != nil {
					errOnce.Do(func() { first = err; cancel(err) })
					return
				}
				if prog != nil {
					prog.ComponentDone(arts[i].Component)
				}
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return nil, withSpaceNeeded(first, arts, dir)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	paths := make(map[string]string, len(arts))
	for sum, e := range o.done {
		paths[sum] = e.path
	}
	return paths, nil
}

// obtainer gets each distinct archive once, from the cache or the network.
type obtainer struct {
	c      *Client
	dir    string
	prog   Progress
	shared bool // dir is a cache other processes may use at once
	mu     sync.Mutex
	done   map[string]*obtained

	verified verifiedFiles // the archives it has checked
}

type obtained struct {
	once sync.Once
	path string
	err  error
}

func (o *obtainer) get(ctx context.Context, a *Artifact) (string, error) {
	o.mu.Lock()
	e := o.done[a.SHA256]
	if e == nil {
		e = &obtained{}
		o.done[a.SHA256] = e
	}
	o.mu.Unlock()
	e.once.Do(func() { e.path, e.err = o.obtain(ctx, a) })
	return e.path, e.err
}

// beforeExtract is a test hook: a test removes the archive there, as a
// cache prune between its download and its extraction does.
var beforeExtract = func(string) {}

// again obtains an archive whose copy went missing since get.
func (o *obtainer) again(ctx context.Context, a *Artifact) (string, error) {
	if _, err := CacheFolder(filepath.Dir(o.dir), filepath.Base(o.dir)); o.shared && err != nil {
		return "", fmt.Errorf("cache %s: %w", a.label(), err)
	}
	return o.obtain(ctx, a)
}

func (o *obtainer) obtain(ctx context.Context, a *Artifact) (string, error) {
	if o.shared && !o.c.Offline {
		unlock, err := lockArchive(ctx, o.dir, a.SHA256, func() {
			o.c.notice("%s: waiting for another download of the same archive to finish", a.label())
		})
		switch {
		case err == nil:
			defer unlock()
		case ctx.Err() != nil:
			return "", ctx.Err()
		case isReadOnly(err) || errors.Is(err, fs.ErrPermission):
			// A cache this user cannot write: nothing can be downloaded
			// into it either, but archives already there can be used.
		default:
			return "", fmt.Errorf("cache %s: %w", a.label(), localize(err, inCache))
		}
	}
	p, err := cachedArchive(o.dir, a, &o.verified)
	if err != nil {
		return "", fmt.Errorf("cache %s: %w", a.label(), localize(err, inCache))
	}
	if p != "" {
		cached(o.prog, a.Size)
		return p, nil
	}
	if o.c.Offline {
		return "", fmt.Errorf("%w: %s is not in the cache; run without --offline", ErrOffline, a.label())
	}
	if a.URL == "" {
		return "", fmt.Errorf("download %s: artifact has no URL (get it from Client.Manifest)", a.label())
	}
	return o.c.download(ctx, a, o.dir, o.prog, &o.verified)
}

// readyQueue hands verified archives to the unpackers, largest first.
type readyQueue struct {
	arts   []Artifact
	mu     sync.Mutex
	items  readyHeap
	signal chan struct{} // one token per pushed item
}

type readyItem struct {
	idx  int
	path string
	size int64
}

type readyHeap []readyItem

func (h readyHeap) Len() int           { return len(h) }
func (h readyHeap) Less(i, j int) bool { return h[i].size > h[j].size }
func (h readyHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *readyHeap) Push(x any)        { *h = append(*h, x.(readyItem)) }
func (h *readyHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func (q *readyQueue) push(i int, p string) {
	q.mu.Lock()
	heap.Push(&q.items, readyItem{i, p, q.arts[i].Size})
	q.mu.Unlock()
	q.signal <- struct{}{}
}

func (q *readyQueue) pop() (int, string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	it := heap.Pop(&q.items).(readyItem)
	return it.idx, it.path
}
