package install

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cudaenv/cudaenv/fetch/pypi/pypitest"
	"github.com/cudaenv/cudaenv/internal/testwait"
	"github.com/cudaenv/cudaenv/store"
)

// frontIndex serves ix through a proxy that runs hold for each wheel
// download before passing it on; hold runs in the server's goroutine and
// may block (until the client gives up, or at most until the test's
// deadline, testwait.Limit: a regression fails the test then instead of
// hanging).
func frontIndex(t *testing.T, ix *pypitest.Index, hold func(r *http.Request)) string {
	t.Helper()
	target, err := url.Parse(strings.TrimSuffix(ix.URL(), "/simple/"))
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/files/") {
			hold(r)
			if r.Context().Err() != nil {
				return
			}
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/simple/"
}

func isCudnnWheel(r *http.Request) bool {
	return strings.HasPrefix(path.Base(r.URL.Path), "nvidia_cudnn")
}

// signal is a channel closed once; waits for it end at the test's limit.
type signal struct {
	once  sync.Once
	c     chan struct{}
	limit time.Time
}

func newSignal(t *testing.T) *signal {
	return &signal{c: make(chan struct{}), limit: testwait.Limit(t)}
}
func (s *signal) fire() { s.once.Do(func() { close(s.c) }) }
func (s *signal) fired() bool {
	select {
	case <-s.c:
		return true
	default:
		return false
	}
}

// firedSoon reports whether s fires before the test's limit: the server
// sees a client give up a request only after the client has moved on.
func (s *signal) firedSoon() bool {
	select {
	case <-s.c:
		return true
	case <-time.After(time.Until(s.limit)):
		return false
	}
}

// wait blocks until s fires, the request is given up or the test's limit
// passes.
func (s *signal) wait(r *http.Request) {
	select {
	case <-s.c:
	case <-r.Context().Done():
	case <-time.After(time.Until(s.limit)):
	}
}

// callLog is a Reporter that writes down, in one list, what a user would
// see: each event and each progress call, by entry.
type callLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *callLog) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, s)
}

func (l *callLog) Event(e Event) {
	switch e := e.(type) {
	case Result:
		l.add("result " + e.Label)
	default:
		l.add(fmt.Sprintf("%T", e))
	}
}

func (l *callLog) Progress(label string) Progress { return &logSink{l, label} }

func (l *callLog) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

type logSink struct {
	l     *callLog
	label string
}

func (s *logSink) Start(_ int64, n int)    { s.l.add(fmt.Sprintf("%s: start, %d components", s.label, n)) }
func (s *logSink) Add(int64)               {}
func (s *logSink) ComponentDone(id string) { s.l.add(s.label + ": done") }
func (s *logSink) Finish()                 { s.l.add(s.label + ": finish") }

// leftovers lists what installs left in the store's kind folders besides
// entries: staging, trash, asides.
func leftovers(t *testing.T, st *store.Store) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(st.Dirs.Root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if rel, _ := filepath.Rel(st.Dirs.Root, p); strings.Count(rel, string(filepath.Separator)) > 1 {
			return fs.SkipDir
		}
		if n := d.Name(); strings.HasPrefix(n, ".stage-") || strings.HasPrefix(n, ".trash-") || strings.HasPrefix(n, ".old-") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

var cudaAndCudnn = Request{Args: []string{"12.4", "cudnn@9.5"}, Source: "pypi", Components: []string{"cuda_cudart", "libcublas"}}

// A one-after-another install fetches cuDNN only once CUDA is in place;
// here CUDA's first wheel is held until cuDNN's has been asked for, so the
// install gets through (in time) only when both are in flight at once. What
// it reports stays in the one-after-another order.
func TestInstallFetchesCUDAAndCuDNNAtOnceAndReportsInOrder(t *testing.T) {
	w := newWorld(t)
	cudnnAsked, cudaHeld := newSignal(t), newSignal(t)
	overlapped := newSignal(t)
	url := frontIndex(t, pypitest.New(t), func(r *http.Request) {
		if isCudnnWheel(r) {
			cudnnAsked.fire()
			return
		}
		if cudaHeld.fired() {
			return
		}
		cudaHeld.fire()
		cudnnAsked.wait(r)
		if cudnnAsked.fired() {
			overlapped.fire()
		}
	})
	log := &callLog{}
	in := w.installer(t, func(o *Options) { o.PyPIIndex, o.Reporter, o.Jobs = url, log, 4 })
	res, err := in.Install(context.Background(), cudaAndCudnn)
	if err != nil {
		t.Fatal(err)
	}
	if !overlapped.fired() {
		t.Errorf("CUDA's wheel download was held until the test's deadline and cuDNN's was not asked for meanwhile: the installs ran one after another")
	}
	var labels []string
	for _, r := range res {
		labels = append(labels, r.Label)
	}
	if !slices.Equal(labels, []string{"CUDA 12.4.1", "cuDNN 9.5.1.17-cuda12"}) || res[1].Use != "12.4.1 cudnn@9.5.1.17" {
		t.Errorf("results %v (cuDNN's use: %q)", labels, res[len(res)-1].Use)
	}
	for _, f := range []string{"cuda/12.4.1/lib/libcudart.so.12", "cudnn/9.5.1.17-cuda12/lib/libcudnn.so.9"} {
		if _, err := os.Stat(filepath.Join(w.store.Dirs.Root, f)); err != nil {
			t.Error(err)
		}
	}
	want := strings.Join([]string{
		"CUDA 12.4.1: start, 2 components", "CUDA 12.4.1: done", "CUDA 12.4.1: done", "CUDA 12.4.1: finish", "result CUDA 12.4.1",
		"cuDNN 9.5.1.17-cuda12: start, 1 components", "cuDNN 9.5.1.17-cuda12: done", "cuDNN 9.5.1.17-cuda12: finish", "result cuDNN 9.5.1.17-cuda12",
	}, "\n")
	if got := log.text(); got != want {
		t.Errorf("reported:\n%s\nwant:\n%s", got, want)
	}
	if w.rehash != 2 {
		t.Errorf("the after-change hook ran %d times; want 2", w.rehash)
	}
}

// The first product to fail cancels the others: its error is the one
// returned, the cancelled ones say nothing, and the store has no entry of
// theirs and nothing half-written.
func TestInstallFailureCancelsTheOtherProducts(t *testing.T) {
	for _, tc := range []struct {
		name, broken string
		// hold runs for every wheel download but the broken product's.
		heldUntilCancelled func(r *http.Request) bool
		wantErr            string
		installed          []string
	}{
		{
			name:    "CUDA failing cancels cuDNN's download",
			broken:  "nvidia-cublas-cu12",
			wantErr: "install CUDA 12.4.1: ",
			// cuDNN's download is held until the install gives it up.
			heldUntilCancelled: isCudnnWheel,
		},
		{
			name:               "cuDNN failing cancels CUDA's download",
			broken:             "nvidia-cudnn-cu12",
			wantErr:            "install cuDNN 9.5.1.17-cuda12: ",
			heldUntilCancelled: func(r *http.Request) bool { return !isCudnnWheel(r) },
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			ix := pypitest.New(t, pypitest.WrongHash(tc.broken))
			heldAsked, gaveUp := newSignal(t), newSignal(t)
			brokenPrefix := strings.ReplaceAll(tc.broken, "-", "_") + "-"
			url := frontIndex(t, ix, func(r *http.Request) {
				if strings.HasPrefix(path.Base(r.URL.Path), brokenPrefix) {
					// Fail only once the other download is in flight.
					heldAsked.wait(r)
					return
				}
				if tc.heldUntilCancelled(r) {
					heldAsked.fire()
					select {
					case <-r.Context().Done():
						gaveUp.fire()
					case <-testwait.After(t):
					}
				}
			})
			log := &callLog{}
			in := w.installer(t, func(o *Options) { o.PyPIIndex, o.Reporter, o.Jobs = url, log, 4 })
			res, err := in.Install(context.Background(), cudaAndCudnn)
			if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "sha256") || strings.Contains(err.Error(), "interrupted") {
				t.Fatalf("err = %v; want %s… sha256 …", err, tc.wantErr)
			}
			if len(res) != 0 {
				t.Errorf("results %+v; want none", res)
			}
			if !gaveUp.firedSoon() {
				t.Error("the other product's download was not given up when the first failed")
			}
			for _, e := range []struct {
				k    store.Kind
				name string
			}{{store.CUDA, "12.4.1"}, {store.Cudnn, "9.5.1.17-cuda12"}} {
				if _, ok := w.store.Get(e.k, e.name); ok {
					t.Errorf("%s %s is installed", e.k, e.name)
				}
			}
			if l := leftovers(t, w.store); len(l) > 0 {
				t.Errorf("left in the store: %v", l)
			}
			if got := log.text(); strings.Contains(got, "result") {
				t.Errorf("reported a result:\n%s", got)
			}
			if w.rehash != 0 {
				t.Errorf("the after-change hook ran %d times; want 0", w.rehash)
			}
		})
	}
}

// A library that fails after CUDA was installed leaves CUDA installed and
// reported, as a one-after-another install did.
func TestInstallLibraryFailingAfterCUDALeavesCUDAInstalled(t *testing.T) {
	w := newWorld(t)
	ix := pypitest.New(t, pypitest.WrongHash("nvidia-cudnn-cu12"))
	url := frontIndex(t, ix, func(r *http.Request) {
		if !isCudnnWheel(r) {
			return
		}
		for limit := testwait.Limit(t); time.Now().Before(limit) && r.Context().Err() == nil; time.Sleep(5 * time.Millisecond) {
			if _, ok := w.store.Get(store.CUDA, "12.4.1"); ok {
				return
			}
		}
	})
	log := &callLog{}
	in := w.installer(t, func(o *Options) { o.PyPIIndex, o.Reporter, o.Jobs = url, log, 4 })
	res, err := in.Install(context.Background(), cudaAndCudnn)
	if err == nil || !strings.HasPrefix(err.Error(), "install cuDNN 9.5.1.17-cuda12: ") || !strings.Contains(err.Error(), "sha256") {
		t.Fatalf("err = %v", err)
	}
	if len(res) != 1 || res[0].Label != "CUDA 12.4.1" || res[0].Outcome != Installed {
		t.Fatalf("results %+v; want CUDA 12.4.1 installed", res)
	}
	if _, err := os.Stat(filepath.Join(res[0].Entry.Dir, "lib", "libcudart.so.12")); err != nil {
		t.Error(err)
	}
	if _, ok := w.store.Get(store.Cudnn, "9.5.1.17-cuda12"); ok {
		t.Error("cuDNN is installed")
	}
	if l := leftovers(t, w.store); len(l) > 0 {
		t.Errorf("left in the store: %v", l)
	}
	got := log.text()
	if !strings.HasPrefix(got, "CUDA 12.4.1: start") || !strings.Contains(got, "result CUDA 12.4.1\ncuDNN 9.5.1.17-cuda12: start") || strings.Contains(got, "result cuDNN") {
		t.Errorf("reported:\n%s", got)
	}
}

// An install from a .cuda-version.lock fetches its products at once too.
func TestInstallLockedFetchesCUDAAndCuDNNAtOnce(t *testing.T) {
	w := newWorld(t)
	dir := project(t, "12.4 cudnn@9.5")
	ix := pypitest.New(t)
	in := w.installer(t, func(o *Options) { o.PyPIIndex = ix.URL() })
	if _, err := in.Lock(context.Background(), LockRequest{Here: Here{Dir: dir}, Source: "pypi", Components: []string{"cuda_cudart", "libcublas"}}); err != nil {
		t.Fatal(err)
	}
	cudnnAsked, cudaHeld, overlapped := newSignal(t), newSignal(t), newSignal(t)
	url := frontIndex(t, ix, func(r *http.Request) {
		if isCudnnWheel(r) {
			cudnnAsked.fire()
			return
		}
		if cudaHeld.fired() {
			return
		}
		cudaHeld.fire()
		cudnnAsked.wait(r)
		if cudnnAsked.fired() {
			overlapped.fire()
		}
	})
	log := &callLog{}
	fin, st, _ := w.fresh(t, func(o *Options) { o.PyPIIndex, o.Reporter, o.Jobs = url, log, 4 })
	res, err := fin.Install(context.Background(), Request{Here: Here{Dir: dir}, Locked: true})
	if err != nil {
		t.Fatal(err)
	}
	if !overlapped.fired() {
		t.Errorf("CUDA's wheel download was held until the test's deadline and cuDNN's was not asked for meanwhile: the installs ran one after another")
	}
	if len(res) != 2 || res[0].Label != "CUDA 12.4.1" || res[1].Label != "cuDNN 9.5.1.17-cuda12" {
		t.Fatalf("results %+v", res)
	}
	if _, ok := st.Get(store.Cudnn, "9.5.1.17-cuda12"); !ok {
		t.Error("cuDNN is not installed")
	}
	if got := log.text(); !strings.Contains(got, "CUDA 12.4.1: finish\nresult CUDA 12.4.1\ncuDNN 9.5.1.17-cuda12: start") || !strings.HasSuffix(got, "result cuDNN 9.5.1.17-cuda12") {
		t.Errorf("reported:\n%s", got)
	}
}

// phaseSink is a Progress with fetch.PhaseProgress's Cached: it writes
// down what each call says.
type phaseSink struct{ logSink }

func (s *phaseSink) Add(n int64)    { s.l.add(fmt.Sprintf("%s: add %d", s.label, n)) }
func (s *phaseSink) Cached(n int64) { s.l.add(fmt.Sprintf("%s: present %d", s.label, n)) }

type phaseLog struct{ callLog }

func (l *phaseLog) Progress(label string) Progress { return &phaseSink{logSink{&l.callLog, label}} }

// Bytes a later install downloaded while an earlier one's bar was shown
// reach its bar as already present when it appears, not as a download
// made in that instant (issue #36: "665 GB/s"); what it downloads after
// is a download.
func TestHeldProgressReachesItsBarAsBytesAlreadyPresent(t *testing.T) {
	log := &phaseLog{}
	o := &ordered{rep: log}
	first, second := o.slot(), o.slot()
	p1, p2 := first.Progress("CUDA 13.0.3"), second.Progress("cuDNN 9.19.0.56-cuda13")
	p1.Start(100, 1)
	p2.Start(70, 1)
	p2.Add(40)
	p2.Add(30)
	p1.Add(100)
	p1.ComponentDone("cuda_nvcc")
	p1.Finish()
	first.close(false)
	p2.Add(5)
	want := "CUDA 13.0.3: start, 1 components\nCUDA 13.0.3: add 100\nCUDA 13.0.3: done\nCUDA 13.0.3: finish\n" +
		"cuDNN 9.19.0.56-cuda13: start, 1 components\ncuDNN 9.19.0.56-cuda13: present 70\ncuDNN 9.19.0.56-cuda13: add 5"
	if got := log.text(); got != want {
		t.Errorf("calls:\n%s\nwant:\n%s", got, want)
	}
}

// A wheel skipped is said once a command, however many plans meet it: the
// pipeline's jobs plan with copies of the Installer (issue #36: "skipping
// libcufile" up to four times a run).
func TestASkippedWheelIsSaidOnceACommand(t *testing.T) {
	w := newWorld(t)
	in := w.installer(t)
	why := errors.New("no wheel for linux-sbsa")
	for range 3 {
		job := *in
		job.reportSkipped(&Plan{skipped: []SkippedWheel{{Component: "libcufile", Reason: why}, {Component: "libcufile", Reason: why}}})
	}
	in.reportSkipped(&Plan{skipped: []SkippedWheel{{Component: "libnvjpeg", Reason: why}}})
	var said []string
	for _, e := range w.rec.events {
		if s, ok := e.(SkippedWheel); ok {
			said = append(said, s.Component)
		}
	}
	if strings.Join(said, " ") != "libcufile libnvjpeg" {
		t.Errorf("said %q; want each once", said)
	}
}
