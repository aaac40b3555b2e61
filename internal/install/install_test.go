package install

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cudaenv/cudaenv/fetch"
	"github.com/cudaenv/cudaenv/fetch/fetchtest"
	"github.com/cudaenv/cudaenv/fetch/pypi"
	"github.com/cudaenv/cudaenv/fetch/pypi/pypitest"
	"github.com/cudaenv/cudaenv/internal/dirs"
	"github.com/cudaenv/cudaenv/internal/version"
	"github.com/cudaenv/cudaenv/store"
)

// recorder is a Reporter that keeps every event and counts the progress
// sinks it hands out.
type recorder struct {
	mu        sync.Mutex
	events    []Event
	downloads []string          // labels, one per Progress call
	onStart   func()            // run by every progress sink's Start
	sink      map[string]*count // by label
}

type count struct {
	mu         sync.Mutex
	total      int64
	components int
	done       []string
	finished   bool
}

func (c *count) Start(total int64, n int) { c.total, c.components = total, n }
func (c *count) Add(int64)                {}
func (c *count) ComponentDone(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.done = append(c.done, id)
}
func (c *count) Finish() { c.finished = true }

func (r *recorder) Event(e Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) Progress(label string) Progress {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.downloads = append(r.downloads, label)
	if r.sink == nil {
		r.sink = map[string]*count{}
	}
	c := &count{}
	r.sink[label] = c
	if r.onStart != nil {
		return startHook{c, r.onStart}
	}
	return c
}

type startHook struct {
	*count
	f func()
}

func (s startHook) Start(total int64, n int) { s.count.Start(total, n); s.f() }

// results are the Result events, in order.
func (r *recorder) results() []Result {
	var out []Result
	for _, e := range r.events {
		if res, ok := e.(Result); ok {
			out = append(out, res)
		}
	}
	return out
}

// world is a store, a cache and a mirror of NVIDIA's server (real
// manifests, generated archives), in folders whose names need quoting.
type world struct {
	mirror *fetchtest.Mirror
	store  *store.Store
	cache  string
	rec    *recorder
	opts   Options
	rehash int
}

func newWorld(t *testing.T) *world {
	t.Helper()
	root := filepath.Join(t.TempDir(), "home with 'quotes' and $dollar")
	w := &world{mirror: fetchtest.NewMirror(t, fetchtest.Options{}), rec: &recorder{}}
	w.store = store.New(dirs.Dirs{Root: filepath.Join(root, "root"), Cache: filepath.Join(root, "cache")})
	w.cache = filepath.Join(root, "cache")
	// An index with no projects: no test asks the real PyPI.
	empty := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(empty.Close)
	w.opts = Options{
		Store: w.store, CacheDir: w.cache, Mirror: w.mirror.URL(),
		// An index with no projects: no test asks the real PyPI (an
		// unreachable NVIDIA asks it too).
		PyPIIndex: empty.URL + "/simple/",
		GOOS:      "linux", GOARCH: "amd64",
		Reporter: w.rec,
		Changed:  func() { w.rehash++ },
	}
	return w
}

func (w *world) installer(t *testing.T, edit ...func(*Options)) *Installer {
	t.Helper()
	o := w.opts
	for _, f := range edit {
		f(&o)
	}
	in, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func spec(t *testing.T, s string) version.Spec {
	t.Helper()
	sp, err := version.ParseSpec(s)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

func componentsOf(p *Plan) []string {
	var ids []string
	for _, a := range p.Artifacts {
		ids = append(ids, a.Component)
	}
	slices.Sort(ids)
	return ids
}

func TestPlanPicksTheNewestMatchingRelease(t *testing.T) {
	w := newWorld(t)
	in := w.installer(t)
	tests := []struct {
		name, spec    string
		target        Target
		wantName      string
		wantLabel     string
		wantComps     []string // nil: not checked
		wantProfile   string
		wantCUDAMajor int
	}{
		{name: "a major.minor takes its newest patch", spec: "12.4", target: Target{Platform: "linux-x86_64", Profile: "minimal"},
			wantName: "12.4.1", wantLabel: "CUDA 12.4.1", wantComps: []string{"cuda_cccl", "cuda_cudart", "cuda_nvcc"}, wantProfile: "minimal"},
		{name: "a full version takes exactly that release", spec: "12.4.0", target: Target{Platform: "linux-x86_64", Profile: "minimal"},
			wantName: "12.4.0", wantLabel: "CUDA 12.4.0", wantProfile: "minimal"},
		{name: "components replace the profile in the receipt", spec: "12.4", target: Target{Platform: "linux-x86_64", Profile: "default", Components: []string{"libcublas"}},
			wantName: "12.4.1", wantLabel: "CUDA 12.4.1", wantComps: []string{"libcublas"}, wantProfile: ""},
		{name: "cuDNN takes the build for the CUDA major and its four-part version", spec: "cudnn@9.5", target: Target{Platform: "linux-x86_64", Profile: "full", CUDAMajor: 12},
			wantName: "9.5.1.17-cuda12", wantLabel: "cuDNN 9.5.1.17-cuda12", wantProfile: "full", wantCUDAMajor: 12},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.target.Source = "nvidia"
			p, err := in.Plan(context.Background(), spec(t, tt.spec), tt.target)
			if err != nil {
				t.Fatal(err)
			}
			if p.Name != tt.wantName || p.Label != tt.wantLabel || p.CUDAMajor != tt.wantCUDAMajor {
				t.Errorf("plan = %s %q (CUDA major %d), want %s %q (%d)", p.Name, p.Label, p.CUDAMajor, tt.wantName, tt.wantLabel, tt.wantCUDAMajor)
			}
			if tt.wantComps != nil && !reflect.DeepEqual(componentsOf(p), tt.wantComps) {
				t.Errorf("components = %v, want %v", componentsOf(p), tt.wantComps)
			}
			r := p.Receipt
			if r.Source != "nvidia" || r.URL != w.mirror.URL() || r.Platform != "linux-x86_64" || r.Profile != tt.wantProfile || len(r.ManifestSHA256) != 64 {
				t.Errorf("receipt = %+v", r)
			}
		})
	}
}

func TestPlanErrorsNameTheWayOut(t *testing.T) {
	w := newWorld(t)
	in := w.installer(t)
	tests := []struct {
		name, spec string
		target     Target
		want       string // a regexp-free substring
	}{
		{"an unknown release lists its major's releases", "12.7", Target{Platform: "linux-x86_64", Profile: "minimal"}, "install: no cuda release matches 12.7; available: 12.1.1, "},
		{"a cuDNN without a build for the major names the majors it has", "cudnn@9.12", Target{Platform: "linux-x86_64", Profile: "full", CUDAMajor: 11}, "no build for CUDA 11 (it has: 12, 13)"},
		{"an unknown major points at ls-remote", "99", Target{Platform: "linux-x86_64", Profile: "minimal"}, "install: no cuda release matches 99; see: cudaenv ls-remote cuda"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.target.Source = "nvidia"
			_, err := in.Plan(context.Background(), spec(t, tt.spec), tt.target)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestInstallCUDAAndCuDNNForItsMajor(t *testing.T) {
	w := newWorld(t)
	res, err := w.installer(t).Install(context.Background(), Request{Args: []string{"12.4", "cudnn@9.5"}, Profile: "minimal"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].Label != "CUDA 12.4.1" || res[1].Label != "cuDNN 9.5.1.17-cuda12" {
		t.Fatalf("results = %+v", res)
	}
	if res[0].Outcome != Installed || res[0].Components != 3 || res[0].Use != "12.4.1" || res[1].Use != "12.4.1 cudnn@9.5.1.17" {
		t.Errorf("results = %+v", res)
	}
	for _, r := range res {
		if _, err := os.Stat(filepath.Join(r.Entry.Dir, store.ReceiptName)); err != nil {
			t.Errorf("%s: no receipt: %v", r.Label, err)
		}
	}
	if _, err := os.Stat(filepath.Join(res[0].Entry.Dir, "bin", "nvcc")); err != nil {
		t.Errorf("no nvcc: %v", err)
	}
	if ent, ok := w.store.Get(store.Cudnn, "9.5.1.17-cuda12"); !ok || ent.Receipt.Profile != "full" || len(ent.Receipt.Licenses) == 0 {
		t.Errorf("cuDNN entry = %+v", ent)
	}
	if !reflect.DeepEqual(w.rec.results(), res) {
		t.Errorf("reported %+v, returned %+v", w.rec.results(), res)
	}
	if !reflect.DeepEqual(w.rec.downloads, []string{"CUDA 12.4.1", "cuDNN 9.5.1.17-cuda12"}) {
		t.Errorf("progress for %v", w.rec.downloads)
	}
	if c := w.rec.sink["CUDA 12.4.1"]; c.components != 3 || len(c.done) != 3 || !c.finished || c.total <= 0 {
		t.Errorf("progress of CUDA = %+v", c)
	}
	if w.rehash != 2 {
		t.Errorf("Changed ran %d times, want once per entry", w.rehash)
	}
}

func TestInstallAgainDownloadsNothing(t *testing.T) {
	w := newWorld(t)
	in := w.installer(t)
	req := Request{Args: []string{"12.4"}, Profile: "minimal"}
	if _, err := in.Install(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	w.mirror.ResetCounts()
	w.rehash = 0
	res, err := in.Install(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Outcome != AlreadyInstalled || res[0].Entry.Version.String() != "12.4.1" {
		t.Fatalf("results = %+v", res)
	}
	if n := w.mirror.ArchiveRequests("cuda_nvcc"); n != 0 {
		t.Errorf("nvcc downloaded %d times", n)
	}
	if w.rehash != 0 {
		t.Errorf("Changed ran %d times for a no-op", w.rehash)
	}

	// Force reinstalls (from the cache).
	res, err = in.Install(context.Background(), Request{Args: []string{"12.4"}, Profile: "minimal", Force: true})
	if err != nil || res[0].Outcome != Installed {
		t.Fatalf("forced: %+v, %v", res, err)
	}
}

func TestInstallAddsMissingComponents(t *testing.T) {
	w := newWorld(t)
	in := w.installer(t)
	if _, err := in.Install(context.Background(), Request{Args: []string{"12.4"}, Profile: "minimal"}); err != nil {
		t.Fatal(err)
	}
	w.mirror.ResetCounts()
	w.rec.events = nil
	res, err := in.Install(context.Background(), Request{Args: []string{"12.4"}, Components: []string{"libcublas", "cuda_nvcc"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []Event{Adding{Label: "CUDA 12.4.1", Missing: []string{"libcublas"}}}
	if len(w.rec.events) != 2 || !reflect.DeepEqual(w.rec.events[:1], want) {
		t.Fatalf("events = %+v, want %+v then the result", w.rec.events, want)
	}
	if res[0].Outcome != Installed || res[0].Components != 4 {
		t.Errorf("result = %+v, want 4 components installed", res[0])
	}
	if res[0].Entry.Receipt.Profile != "" {
		t.Errorf("receipt profile = %q, want none (no profile describes the union)", res[0].Entry.Receipt.Profile)
	}
	if n, m := w.mirror.ArchiveRequests("cuda_nvcc"), w.mirror.ArchiveRequests("libcublas"); n != 0 || m != 1 {
		t.Errorf("downloads: nvcc %d (want 0: cached), libcublas %d (want 1)", n, m)
	}
}

func TestMissingComponentsTreatsCCCLRenamesAsOne(t *testing.T) {
	have := store.Entry{Receipt: store.Receipt{Components: []store.Component{{ID: "cuda_cccl"}, {ID: "cuda_nvcc"}}}}
	arts := componentsAsArtifacts("cccl", "cuda_nvcc", "libcublas", "cuda_cudart")
	if got := missingComponents(have, arts); !reflect.DeepEqual(got, []string{"cuda_cudart", "libcublas"}) {
		t.Errorf("missing = %v", got)
	}
}

func TestInstallOfflineUsesTheCacheOnly(t *testing.T) {
	w := newWorld(t)
	if _, err := w.installer(t).Install(context.Background(), Request{Args: []string{"12.4"}, Profile: "minimal"}); err != nil {
		t.Fatal(err)
	}
	// A second store, the same cache, the server gone.
	w.mirror.Close()
	other := store.New(dirs.Dirs{Root: filepath.Join(t.TempDir(), "other root")})
	in := w.installer(t, func(o *Options) { o.Store, o.Offline = other, true })
	res, err := in.Install(context.Background(), Request{Args: []string{"12.4"}, Profile: "minimal"})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Outcome != Installed || res[0].Entry.Version.String() != "12.4.1" {
		t.Errorf("result = %+v", res[0])
	}
	// What the cache lacks is an error that says so.
	_, err = in.Install(context.Background(), Request{Args: []string{"12.4"}, Components: []string{"libcublas"}})
	if err == nil || !strings.Contains(err.Error(), "offline") {
		t.Errorf("err = %v, want the offline cache miss", err)
	}
}

func TestInstallFromPyPI(t *testing.T) {
	w := newWorld(t)
	ix := pypitest.New(t)
	in := w.installer(t, func(o *Options) { o.PyPIIndex = ix.URL() })
	p, err := in.Plan(context.Background(), spec(t, "13.0"), Target{Source: "pypi", Platform: "linux-x86_64", Profile: "minimal"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "13.0.3" || p.Receipt.Source != "pypi" || p.Receipt.URL != ix.URL() || p.Receipt.Profile != "minimal" {
		t.Errorf("plan = %s %+v", p.Name, p.Receipt)
	}
	for _, a := range p.Artifacts {
		if !strings.HasPrefix(a.URL, strings.TrimSuffix(ix.URL(), "simple/")) || a.Unpack == nil || len(a.SHA256) != 64 {
			t.Errorf("artifact %+v is not a verified wheel from the index", a)
		}
	}
	res, err := in.Install(context.Background(), Request{Args: []string{"12.4", "cudnn@9.5"}, Source: "pypi", Components: []string{"cuda_cudart", "libcublas"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].Label != "CUDA 12.4.1" || res[0].Components != 2 || res[1].Label != "cuDNN 9.5.1.17-cuda12" {
		t.Fatalf("results = %+v", res)
	}
	if !res[0].Entry.Receipt.LibrariesOnly {
		t.Errorf("CUDA 12.4.1 from wheels has no nvcc, but its receipt does not say libraries only")
	}
	if _, err := os.Stat(filepath.Join(res[1].Entry.Dir, "lib", "libcudnn.so.9")); err != nil {
		t.Errorf("cuDNN from wheels: %v", err)
	}
	if n := w.mirror.Requests(); len(n) != 0 {
		t.Errorf("NVIDIA's server was asked %v", n)
	}
	// CUDA 12 wheels carry no nvcc.
	_, err = in.Plan(context.Background(), spec(t, "12.4"), Target{Source: "pypi", Platform: "linux-x86_64", Profile: "minimal"})
	if err == nil || !strings.Contains(err.Error(), "wheels carry no nvcc") || strings.Contains(err.Error(), "--source nvidia") {
		t.Errorf("err = %v", err)
	}
	// Offline cannot use an index.
	_, err = w.installer(t, func(o *Options) { o.Offline = true }).Plan(context.Background(), spec(t, "13.0"), Target{Source: "pypi", Platform: "linux-x86_64", Profile: "minimal"})
	if err == nil || !strings.Contains(err.Error(), "run without --offline") {
		t.Errorf("err = %v", err)
	}
}

func TestAutoFallsBackToPyPIWhenNVIDIAIsUnreachable(t *testing.T) {
	w := newWorld(t)
	ix := pypitest.New(t)
	w.mirror.Close()
	in := w.installer(t, func(o *Options) { o.PyPIIndex = ix.URL() })
	p, err := in.Plan(context.Background(), spec(t, "13.0"), Target{Source: "auto", Platform: "linux-x86_64", Profile: "minimal"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Receipt.Source != "pypi" {
		t.Errorf("source = %s", p.Receipt.Source)
	}
	if len(w.rec.events) != 1 {
		t.Fatalf("events = %+v", w.rec.events)
	}
	if fb, ok := w.rec.events[0].(FallbackToPyPI); !ok || fb.Err == nil {
		t.Errorf("event = %+v, want FallbackToPyPI with the reason", w.rec.events[0])
	}
	// The nvidia source says where to turn instead: the PyPI index answers,
	// so how to make it the default.
	_, err = in.Plan(context.Background(), spec(t, "13.0"), Target{Source: "nvidia", Platform: "linux-x86_64", Profile: "minimal"})
	if err == nil || !strings.HasSuffix(err.Error(), "; the PyPI index can be reached: add --source pypi, or make PyPI the default: cudaenv config set source pypi (or CUDAENV_SOURCE=pypi)") {
		t.Errorf("err = %v", err)
	}
}

func TestSpecs(t *testing.T) {
	w := newWorld(t)
	dir := filepath.Join(t.TempDir(), "proj $x")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, ".cuda-version"), []byte("11.8 cudnn@9\n"), 0o644)
	empty := t.TempDir()
	in := w.installer(t, func(o *Options) { o.Driver = func(context.Context) string { return "550.54.15" } })
	tests := []struct {
		name    string
		req     Request
		want    string // the specs joined, or the error
		wantErr bool
	}{
		{name: "arguments are parsed", req: Request{Args: []string{"12.4", "cudnn@9.5"}}, want: "12.4 cudnn@9.5"},
		{name: "no arguments take what the directory selects", req: Request{Here: Here{Dir: dir}}, want: "11.8 cudnn@9"},
		{name: "no arguments and nothing selected is an error", req: Request{Here: Here{Dir: empty}}, wantErr: true,
			want: "install needs a version, e.g. cudaenv install 12.4 cudnn@9.5 (with none, it installs what .cuda-version selects, and nothing selects a version here)"},
		{name: "system is not installable", req: Request{Args: []string{"system"}}, wantErr: true, want: "install: system is not installable; name a version, e.g. cudaenv install 12.4"},
		{name: "for a torch release the index lacks: PyPI's build of it from the tables, and the cuDNN release nearest its pin", req: Request{For: []string{"torch==2.5.1"}}, want: "12.4.1 cudnn@9.2.1"},
		{name: "for and versions do not mix", req: Request{For: []string{"torch==2.5.1"}, Args: []string{"12.4"}}, wantErr: true, want: "install --for picks the versions itself; drop the version arguments"},
		{name: "for takes any requirement, and says what the index lacks", req: Request{For: []string{"numpy"}}, wantErr: true, want: "install --for: numpy at " + in.opts.PyPIIndex + "numpy/: project not found on the index; cudaenv's tables have no row for it either (see: cudaenv compat)"},
		{name: "for refuses what is not a requirement", req: Request{For: []string{"torch=="}}, wantErr: true, want: `install --for: requirement "torch==": cannot read version clause "=="`},
		{name: "for a torch the index lacks and the tables too says both", req: Request{For: []string{"torch==0.1.2"}}, wantErr: true, want: "install --for: torch at " + in.opts.PyPIIndex + "torch/: project not found on the index; cudaenv's tables have no row for it either (see: cudaenv compat)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w.rec.events = nil
			specs, err := in.Specs(context.Background(), tt.req)
			if tt.wantErr {
				if err == nil || err.Error() != tt.want {
					t.Fatalf("err = %v, want %s", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var words []string
			for _, s := range specs {
				words = append(words, s.String())
			}
			if got := strings.Join(words, " "); got != tt.want {
				t.Errorf("specs = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestForTorchReportsItsTargets(t *testing.T) {
	w := newWorld(t)
	in := w.installer(t, func(o *Options) { o.Driver = func(context.Context) string { return "550.54.15" } })
	specs, err := in.Specs(context.Background(), Request{For: []string{"torch==2.5.1"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(w.rec.events) != 2 {
		t.Fatalf("events = %+v, want a FrameworkFallback and FrameworkFromTables", w.rec.events)
	}
	if fb, ok := w.rec.events[0].(FrameworkFallback); !ok || fb.For != "torch 2.5.1" || !errors.Is(fb.Err, pypi.ErrProjectNotFound) {
		t.Errorf("first event = %+v, want the fallback to the tables", w.rec.events[0])
	}
	// PyPI's build of 2.5.1 (cu124), whatever the driver; the cuDNN
	// release nearest its pin that the mirror has.
	// The index (with no projects) lacks the NCCL it pins: left out, said.
	if ev, ok := w.rec.events[1].(FrameworkFromTables); !ok || ev.Variant != "cu124" || ev.CUDA != "12.4.1" || ev.Cudnn != "9.1.0.70" || ev.NCCL != "2.21.5" ||
		len(ev.LeftOut) != 1 || !strings.HasPrefix(ev.LeftOut[0], "NCCL 2.21.5 (") {
		t.Errorf("second event = %+v", w.rec.events[1])
	}
	if got, want := fmt.Sprint(specs), "[12.4.1 cudnn@9.2.1]"; got != want {
		t.Errorf("specs = %s, want %s", got, want)
	}
	// A release the PyPI table lacks (a pre-release) takes the build the
	// driver runs; a driver too old for every build is refused with the
	// way out.
	old := w.installer(t, func(o *Options) { o.Driver = func(context.Context) string { return "390.12" } })
	_, err = old.Specs(context.Background(), Request{For: []string{"torch==2.5.0a0"}})
	if err == nil || err.Error() != "install --for: driver 390.12 runs none of torch 2.5.0's CUDA builds; update the driver (see: cudaenv compat torch==2.5.0)" {
		t.Errorf("err = %v", err)
	}
}

func TestNearestRelease(t *testing.T) {
	releases := []string{"8.9.7", "9.0.0", "9.2.0", "9.2.1", "9.5.1", "9.6.0", "9.4-bad"}
	tests := []struct {
		name, want, got string
	}{
		{"the release of the very build wins", "9.2.0.82", "9.2.0"},
		{"else the same minor takes its newest patch", "9.2.3.4", "9.2.1"},
		{"else the nearest minor", "9.4.0", "9.5.1"},
		{"a newer minor, not the older one", "9.1.0.70", "9.2.1"},
		{"a newer minor even when an older one is nearer", "9.3.0.75", "9.5.1"},
		{"an older minor only when there is no newer one", "9.8.0.87", "9.6.0"},
		{"another major has none", "10.0", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := nearestRelease(version.MustParse(tt.want), releases)
			if got.String() != tt.got {
				t.Errorf("nearest to %s = %q, want %q", tt.want, got.String(), tt.got)
			}
		})
	}
}

func TestInstallRefusesBadRequestsBeforeAnyDownload(t *testing.T) {
	w := newWorld(t)
	in := w.installer(t)
	tests := []struct {
		name string
		req  Request
		want string
	}{
		{"an unknown profile", Request{Args: []string{"12.4"}, Profile: "huge"}, `install: unknown profile "huge"; use one of: minimal, extensions, default, full`},
		{"an unknown source", Request{Args: []string{"12.4"}, Source: "conda"}, `install: unknown source "conda"; use one of: nvidia, pypi, auto`},
		{"a malformed platform", Request{Args: []string{"12.4"}, Platform: "linux/x86_64"}, `install: "linux/x86_64" is not an NVIDIA platform key; use one like linux-x86_64, linux-sbsa, linux-aarch64 or windows-x86_64`},
		{"cuDNN with no CUDA major", Request{Args: []string{"cudnn@9.5"}, Here: Here{Dir: t.TempDir()}}, "install: cuDNN is built per CUDA major; install it with a CUDA version (cudaenv install 12.4 cudnn@9.5), select a CUDA version first, or pass --cuda-major 12"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w.mirror.ResetCounts()
			_, err := in.Install(context.Background(), tt.req)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("err = %v, want %s", err, tt.want)
			}
			if n := w.mirror.Requests(); len(n) != 0 {
				t.Errorf("asked the server: %v", n)
			}
		})
	}
	if _, err := New(Options{Mirror: "ftp://example.invalid"}); err == nil || !strings.Contains(err.Error(), "use an http://, https:// or file:// URL") {
		t.Errorf("New with an ftp mirror: %v", err)
	}
}

func TestCuDNNAloneTakesTheMajorTheDirectorySelects(t *testing.T) {
	w := newWorld(t)
	in := w.installer(t)
	if _, err := in.Install(context.Background(), Request{Args: []string{"12.4"}, Profile: "minimal"}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, ".cuda-version"), []byte("12.4\n"), 0o644)
	res, err := in.Install(context.Background(), Request{Args: []string{"cudnn@9.5"}, Here: Here{Dir: dir}})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Label != "cuDNN 9.5.1.17-cuda12" {
		t.Errorf("result = %+v", res[0])
	}
	// --cuda-major wins over the directory.
	res, err = in.Install(context.Background(), Request{Args: []string{"cudnn@9.12"}, Here: Here{Dir: dir}, CUDAMajor: 13})
	if err != nil || !strings.HasSuffix(res[0].Label, "-cuda13") {
		t.Errorf("result = %+v, %v", res, err)
	}
}

func TestAnInterruptedInstallLeavesNothing(t *testing.T) {
	w := newWorld(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w.rec.onStart = cancel // interrupted as the download starts
	_, err := w.installer(t).Install(ctx, Request{Args: []string{"12.4"}, Profile: "minimal"})
	if err == nil || err.Error() != "install CUDA 12.4.1: interrupted; nothing was installed" {
		t.Fatalf("err = %v", err)
	}
	if _, ok := w.store.Get(store.CUDA, "12.4.1"); ok {
		t.Error("an entry was left")
	}
	if w.rehash != 0 {
		t.Error("Changed ran for an install that did not happen")
	}
	ents, _ := os.ReadDir(w.store.Dirs.Staging())
	if len(ents) != 0 {
		t.Errorf("staging holds %d folders", len(ents))
	}
}

func TestReleasesMarkInstalledOnes(t *testing.T) {
	w := newWorld(t)
	in := w.installer(t)
	if _, err := in.Install(context.Background(), Request{Args: []string{"12.4", "cudnn@9.5"}, Profile: "minimal"}); err != nil {
		t.Fatal(err)
	}
	got, err := in.Releases(context.Background(), version.CUDA, version.MustParse("12.4"), "")
	if err != nil {
		t.Fatal(err)
	}
	if want := []Remote{{Release: "12.4.0"}, {Release: "12.4.1", Installed: true}}; !reflect.DeepEqual(got, want) {
		t.Errorf("cuda 12.4 = %+v, want %+v", got, want)
	}
	cudnn, err := in.Releases(context.Background(), version.Cudnn, version.MustParse("9.5"), "")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(cudnn, Remote{Release: "9.5.1", Installed: true}) {
		t.Errorf("cudnn 9.5 = %+v, want 9.5.1 marked (installed as 9.5.1.17)", cudnn)
	}

	// Completion reads the cached indexes, newest first, without a server.
	w.mirror.Close()
	vs := CachedReleases(w.cache, version.CUDA)
	if len(vs) < 2 || version.Compare(vs[0], vs[1]) <= 0 {
		t.Errorf("cached cuda releases = %v, want newest first", vs)
	}
	if !slices.ContainsFunc(vs, func(v version.Version) bool { return v.String() == "12.4.1" }) {
		t.Errorf("cached cuda releases lack 12.4.1: %v", vs)
	}
	if got := CachedReleases(t.TempDir(), version.Cudnn); len(got) != 0 {
		t.Errorf("an empty cache lists %v", got)
	}
}

func componentsAsArtifacts(ids ...string) []fetch.Artifact {
	out := make([]fetch.Artifact, len(ids))
	for i, id := range ids {
		out[i].Component = id
	}
	return out
}
