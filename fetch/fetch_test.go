package fetch_test

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cudaenv/cudaenv/fetch"
	"github.com/cudaenv/cudaenv/fetch/fetchtest"
)

// manifests are the repository's copies of NVIDIA's (SOURCES.md there).
const manifests = "../testdata/nvidia/manifests"

func newMirror(t *testing.T, opts fetchtest.Options) *fetchtest.Mirror {
	t.Helper()
	if opts.ManifestDir == "" && !opts.Synthetic {
		if _, err := os.Stat(manifests); err != nil {
			opts.Synthetic = true
		} else {
			opts.ManifestDir = manifests
		}
	}
	return fetchtest.NewMirror(t, opts)
}

func newClient(t *testing.T, m *fetchtest.Mirror) *fetch.Client {
	return &fetch.Client{
		Base:       m.URL(),
		CacheDir:   t.TempDir(),
		RetryDelay: time.Millisecond,
		Jobs:       4,
	}
}

// selectFrom gets a manifest through the client and selects from it.
func selectFrom(t *testing.T, c *fetch.Client, p fetch.Product, version string, sel fetch.Selection) []fetch.Artifact {
	t.Helper()
	m, err := c.Manifest(t.Context(), p, version)
	if err != nil {
		t.Fatal(err)
	}
	arts, err := m.Select(sel)
	if err != nil {
		t.Fatal(err)
	}
	return arts
}

func minimal124(t *testing.T, c *fetch.Client) []fetch.Artifact {
	return selectFrom(t, c, fetch.CUDA, "12.4.1", fetch.Selection{Platform: "linux-x86_64", Profile: "minimal"})
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type countingProgress struct {
	mu    sync.Mutex
	total int64
	added atomic.Int64
	comps []string
	done  int
}

func (p *countingProgress) Start(total int64, n int) { p.total = total }
func (p *countingProgress) Add(n int64)              { p.added.Add(n) }
func (p *countingProgress) ComponentDone(id string) {
	p.mu.Lock()
	p.comps = append(p.comps, id)
	p.mu.Unlock()
}
func (p *countingProgress) Finish() { p.done++ }

func TestFetchInstallsAWorkingTreeFromTheMirror(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("linux layout")
	}
	m := newMirror(t, fetchtest.Options{})
	c := newClient(t, m)
	prog := &countingProgress{}
	c.Progress = prog
	arts := selectFrom(t, c, fetch.CUDA, "12.4.1", fetch.Selection{Platform: "linux-x86_64", Profile: "default"})
	dest := filepath.Join(t.TempDir(), "12.4.1")
	res, err := c.Fetch(t.Context(), arts, dest)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Components) != len(arts) || res.Platform != "linux-x86_64" {
		t.Fatalf("result %+v", res)
	}
	for i, ic := range res.Components {
		if ic.ID != arts[i].Component || ic.SHA256 != arts[i].SHA256 || ic.Size != arts[i].Size || ic.Version == "" || ic.License == "" {
			t.Errorf("component %d: %+v", i, ic)
		}
	}
	out, err := exec.Command(filepath.Join(dest, "bin", "nvcc"), "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "Cuda compilation tools, release 12.4, V12.4.131") {
		t.Errorf("nvcc says %q", out)
	}
	for _, p := range []string{"include/cuda_runtime.h", "lib/libcudart.so", "lib/libcudart.so.12", "lib64/libcudart.so.12",
		"targets/x86_64-linux/include/cuda_runtime.h", "targets/x86_64-linux/lib/libcudart.so", "include/thrust/version.h", "LICENSE"} {
		if _, err := os.Stat(filepath.Join(dest, p)); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	if l, err := os.Readlink(filepath.Join(dest, "lib", "libcudart.so.12")); err != nil || l != "libcudart.so.12.4.127" {
		t.Errorf("symlink libcudart.so.12 → %q, %v", l, err)
	}
	if st, err := os.Stat(filepath.Join(dest, "bin", "nvcc")); err != nil || st.Mode().Perm()&0o111 == 0 {
		t.Errorf("nvcc mode %v", st.Mode())
	}
	// Overlapping LICENSE files: the last archive in the list wins.
	last := arts[len(arts)-1]
	if got := readFile(t, filepath.Join(dest, "LICENSE")); !strings.Contains(got, last.Component) {
		t.Errorf("LICENSE is from %q, want the last archive (%s)", got, last.Component)
	}
	var total int64
	for _, a := range arts {
		total += a.Size
	}
	if prog.total != total || prog.added.Load() != total || len(prog.comps) != len(arts) || prog.done != 1 {
		t.Errorf("progress total %d added %d comps %d finish %d; want %d, %d", prog.total, prog.added.Load(), len(prog.comps), prog.done, total, len(arts))
	}
	// No temporary files are left in the tree.
	filepath.Walk(dest, func(p string, info os.FileInfo, err error) error {
		if strings.HasPrefix(filepath.Base(p), ".cudaenv-") {
			t.Errorf("leftover %s", p)
		}
		return nil
	})
	if n := m.ArchiveRequests(""); n != len(arts) {
		t.Errorf("%d archive requests for %d archives", n, len(arts))
	}
}

func TestFetchInstallsCUDA13AndCUDNN(t *testing.T) {
	m := newMirror(t, fetchtest.Options{})
	c := newClient(t, m)
	dest := t.TempDir()
	arts := selectFrom(t, c, fetch.CUDA, "13.0.0", fetch.Selection{Platform: "linux-sbsa", Profile: "minimal"})
	if _, err := c.Fetch(t.Context(), arts, dest); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"include/crt/host_config.h", "nvvm/bin/cicc", "include/cccl/thrust/version.h", "targets/sbsa-linux/lib"} {
		if _, err := os.Stat(filepath.Join(dest, p)); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	dn := selectFrom(t, c, fetch.CUDNN, "9.5.1", fetch.Selection{Platform: "linux-sbsa", Components: []string{"cudnn"}, CUDAMajor: 12})
	ddest := t.TempDir()
	if _, err := c.Fetch(t.Context(), dn, ddest); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(ddest, "share/cudnn/variant")); got != "cuda12\n" {
		t.Errorf("variant file %q", got)
	}
	if _, err := os.Stat(filepath.Join(ddest, "include/cudnn_version.h")); err != nil {
		t.Error(err)
	}
}

func TestFetchExtractsWindowsZips(t *testing.T) {
	m := newMirror(t, fetchtest.Options{})
	c := newClient(t, m)
	arts := selectFrom(t, c, fetch.CUDA, "12.4.1", fetch.Selection{Platform: "windows-x86_64", Profile: "minimal"})
	dest := t.TempDir()
	if _, err := c.Fetch(t.Context(), arts, dest); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"bin/nvcc.exe", "lib/x64/libcudart.lib", "include/cuda_runtime.h"} {
		if _, err := os.Stat(filepath.Join(dest, p)); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(dest, "lib64")); err == nil {
		t.Error("linux links made for windows")
	}
}

func TestFetchReinstallsFromTheCacheWithoutRequests(t *testing.T) {
	m := newMirror(t, fetchtest.Options{})
	c := newClient(t, m)
	arts := minimal124(t, c)
	if _, err := c.Fetch(t.Context(), arts, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	m.ResetCounts()
	for _, offline := range []bool{false, true} {
		c.Offline = offline
		dest := t.TempDir()
		if _, err := c.Fetch(t.Context(), arts, dest); err != nil {
			t.Fatalf("offline=%v: %v", offline, err)
		}
		if _, err := os.Stat(filepath.Join(dest, "bin", "nvcc")); err != nil {
			t.Error(err)
		}
	}
	if n := len(m.Requests()); n != 0 {
		t.Errorf("reinstall made requests: %v", m.Requests())
	}
	// The manifest is cached too: offline Manifest works.
	if _, err := c.Manifest(t.Context(), fetch.CUDA, "12.4.1"); err != nil {
		t.Errorf("offline manifest: %v", err)
	}
	if len(m.Requests()) != 0 {
		t.Errorf("offline manifest made requests: %v", m.Requests())
	}
}

func TestFetchOfflineWithoutCacheNamesWhatIsMissing(t *testing.T) {
	m := newMirror(t, fetchtest.Options{})
	c := newClient(t, m)
	arts := minimal124(t, c)
	c.Offline = true
	m.ResetCounts()
	_, err := c.Fetch(t.Context(), arts, t.TempDir())
	if !errors.Is(err, fetch.ErrOffline) {
		t.Fatalf("got %v, want ErrOffline", err)
	}
	for _, want := range []string{"offline: ", "cuda_nvcc 12.4.131", "not in the cache; run without --offline"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if len(m.Requests()) != 0 {
		t.Errorf("offline made requests: %v", m.Requests())
	}
	if _, err := c.Manifest(t.Context(), fetch.CUDA, "12.0.0"); !errors.Is(err, fetch.ErrOffline) {
		t.Errorf("uncached offline manifest: %v", err)
	}
}

func TestFetchFaults(t *testing.T) {
	cases := []struct {
		name  string
		fault fetchtest.Fault
		// check runs after Fetch; err is its result.
		check func(t *testing.T, m *fetchtest.Mirror, err error)
	}{
		{
			name:  "a connection dropped mid-archive resumes with Range",
			fault: fetchtest.Fault{DropAfter: 1000},
			check: func(t *testing.T, m *fetchtest.Mirror, err error) {
				if err != nil {
					t.Fatal(err)
				}
				if m.RangeRequests("cuda_nvcc") != 1 || m.ArchiveRequests("cuda_nvcc") != 2 {
					t.Errorf("requests %d, range requests %d; want 2 and 1", m.ArchiveRequests("cuda_nvcc"), m.RangeRequests("cuda_nvcc"))
				}
			},
		},
		{
			name:  "connections dropped three times in a row still finish",
			fault: fetchtest.Fault{DropAfter: 700, DropTimes: 3},
			check: func(t *testing.T, m *fetchtest.Mirror, err error) {
				if err != nil {
					t.Fatal(err)
				}
				if m.RangeRequests("cuda_nvcc") != 3 {
					t.Errorf("range requests %d, want 3", m.RangeRequests("cuda_nvcc"))
				}
			},
		},
		{
			name:  "a server that ignores Range restarts cleanly from zero",
			fault: fetchtest.Fault{DropAfter: 1000, IgnoreRange: true},
			check: func(t *testing.T, m *fetchtest.Mirror, err error) {
				if err != nil {
					t.Fatal(err)
				}
				if m.ArchiveRequests("cuda_nvcc") != 2 {
					t.Errorf("requests %d", m.ArchiveRequests("cuda_nvcc"))
				}
			},
		},
		{
			name:  "500 then success is retried",
			fault: fetchtest.Fault{Fail: 2},
			check: func(t *testing.T, m *fetchtest.Mirror, err error) {
				if err != nil {
					t.Fatal(err)
				}
				if m.ArchiveRequests("cuda_nvcc") != 3 {
					t.Errorf("requests %d, want 3", m.ArchiveRequests("cuda_nvcc"))
				}
			},
		},
		{
			name:  "500 forever gives up after the retries",
			fault: fetchtest.Fault{Fail: 1000},
			check: func(t *testing.T, m *fetchtest.Mirror, err error) {
				if err == nil || !strings.Contains(err.Error(), "500") || !strings.Contains(err.Error(), "cuda_nvcc") {
					t.Fatalf("got %v", err)
				}
				if n := m.ArchiveRequests("cuda_nvcc"); n != 5 {
					t.Errorf("requests %d, want 1+4 retries", n)
				}
			},
		},
		{
			name:  "404 fails at once naming component and URL",
			fault: fetchtest.Fault{NotFound: true},
			check: func(t *testing.T, m *fetchtest.Mirror, err error) {
				if err == nil || !strings.Contains(err.Error(), "cuda_nvcc 12.4.131") || !strings.Contains(err.Error(), "404") ||
					!strings.Contains(err.Error(), m.URL()+"/cuda/redist/cuda_nvcc/linux-x86_64/cuda_nvcc-linux-x86_64-12.4.131-archive.tar.xz") {
					t.Fatalf("got %v", err)
				}
				if n := m.ArchiveRequests("cuda_nvcc"); n != 1 {
					t.Errorf("requests %d, want 1", n)
				}
			},
		},
		{
			name:  "a wrong sha256 fails at once",
			fault: fetchtest.Fault{WrongSHA256: true},
			check: func(t *testing.T, m *fetchtest.Mirror, err error) {
				if err == nil || !strings.HasPrefix(err.Error(), "verify cuda_nvcc: sha256 mismatch (want ") || !strings.Contains(err.Error(), "cuda_nvcc-linux-x86_64-12.4.131-archive.tar.xz") {
					t.Fatalf("got %v", err)
				}
				if n := m.ArchiveRequests("cuda_nvcc"); n != 1 {
					t.Errorf("requests %d, want 1", n)
				}
			},
		},
		{
			name:  "a wrong size fails at once",
			fault: fetchtest.Fault{WrongSize: true},
			check: func(t *testing.T, m *fetchtest.Mirror, err error) {
				if err == nil || !strings.Contains(err.Error(), "size mismatch") || !strings.Contains(err.Error(), "cuda_nvcc") {
					t.Fatalf("got %v", err)
				}
				if n := m.ArchiveRequests("cuda_nvcc"); n != 1 {
					t.Errorf("requests %d, want 1", n)
				}
			},
		},
		{
			name:  "a truncated archive fails as a size mismatch",
			fault: fetchtest.Fault{Truncate: 100},
			check: func(t *testing.T, m *fetchtest.Mirror, err error) {
				if err == nil || !strings.Contains(err.Error(), "size mismatch") {
					t.Fatalf("got %v", err)
				}
			},
		},
		{
			name:  "a corrupt archive that matches its manifest fails in extraction",
			fault: fetchtest.Fault{CorruptArchive: true},
			check: func(t *testing.T, m *fetchtest.Mirror, err error) {
				if err == nil || !strings.HasPrefix(err.Error(), "extract cuda_nvcc 12.4.131") {
					t.Fatalf("got %v", err)
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := newMirror(t, fetchtest.Options{Faults: map[string]fetchtest.Fault{"cuda_nvcc": tc.fault}, Sizes: map[string]int64{"cuda_nvcc": 64 << 10}})
			c := newClient(t, m)
			arts := minimal124(t, c)
			m.ResetCounts()
			dest := t.TempDir()
			_, err := c.Fetch(t.Context(), arts, dest)
			tc.check(t, m, err)
			if err == nil {
				if _, err := os.Stat(filepath.Join(dest, "lib", "cuda_nvcc.payload")); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

func TestFetchResumesAPartialDownloadLeftByAnEarlierRun(t *testing.T) {
	m := newMirror(t, fetchtest.Options{Sizes: map[string]int64{"cuda_nvcc": 64 << 10}})
	c := newClient(t, m)
	arts := minimal124(t, c)
	var nvcc fetch.Artifact
	for _, a := range arts {
		if a.Component == "cuda_nvcc" {
			nvcc = a
		}
	}
	data, err := m.Archive("cuda", nvcc.RelativePath)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(c.CacheDir, "archives")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, nvcc.SHA256+".part"), data[:len(data)/3], 0o644)
	m.ResetCounts()
	if _, err := c.Fetch(t.Context(), []fetch.Artifact{nvcc}, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if m.RangeRequests("cuda_nvcc") != 1 || m.ArchiveRequests("cuda_nvcc") != 1 {
		t.Errorf("requests %d, range %d", m.ArchiveRequests("cuda_nvcc"), m.RangeRequests("cuda_nvcc"))
	}
	if _, err := os.Stat(filepath.Join(dir, nvcc.SHA256+".part")); !errors.Is(err, os.ErrNotExist) {
		t.Error("part file left behind")
	}

	// The archive is what these runs are about, not its unpacked tree,
	// which would be reused without it.
	forgetUnpacked := func() { os.RemoveAll(filepath.Join(c.CacheDir, fetch.UnpackedFolder)) }
	t.Run("a part file with foreign bytes restarts once and verifies", func(t *testing.T) {
		forgetUnpacked()
		os.Remove(filepath.Join(dir, nvcc.SHA256))
		os.WriteFile(filepath.Join(dir, nvcc.SHA256+".part"), []byte("garbage that is not the archive"), 0o644)
		m.ResetCounts()
		if _, err := c.Fetch(t.Context(), []fetch.Artifact{nvcc}, t.TempDir()); err != nil {
			t.Fatal(err)
		}
		if m.ArchiveRequests("cuda_nvcc") != 2 {
			t.Errorf("requests %d, want 2 (resume, then clean)", m.ArchiveRequests("cuda_nvcc"))
		}
	})
	t.Run("a corrupted cache entry is downloaded again", func(t *testing.T) {
		forgetUnpacked()
		p := filepath.Join(dir, nvcc.SHA256)
		b, _ := os.ReadFile(p)
		b[len(b)/2] ^= 0xff
		os.WriteFile(p, b, 0o644)
		m.ResetCounts()
		if _, err := c.Fetch(t.Context(), []fetch.Artifact{nvcc}, t.TempDir()); err != nil {
			t.Fatal(err)
		}
		if m.ArchiveRequests("cuda_nvcc") != 1 {
			t.Errorf("requests %d, want 1", m.ArchiveRequests("cuda_nvcc"))
		}
	})
}

func TestFetchRefusesHostileArchives(t *testing.T) {
	cases := []struct {
		name    string
		entries []fetchtest.Entry
		want    string
	}{
		{"zip-slip with ..", []fetchtest.Entry{{Name: "../../evil", Raw: true, Body: "x"}}, "escapes"},
		{"zip-slip inside the top folder", []fetchtest.Entry{{Name: "lib/../../../evil", Body: "x"}}, "escapes"},
		{"an absolute path", []fetchtest.Entry{{Name: "/tmp/evil", Raw: true, Body: "x"}}, "absolute"},
		{"a symlink pointing outside", []fetchtest.Entry{{Name: "lib/escape", Type: tar.TypeSymlink, Link: "../../../../etc"}}, "outside"},
		{"an absolute symlink", []fetchtest.Entry{{Name: "lib/escape", Type: tar.TypeSymlink, Link: "/etc/passwd"}}, "relative"},
		{"writing through a symlink", []fetchtest.Entry{
			{Name: "lib/d", Type: tar.TypeSymlink, Link: "."},
			{Name: "lib/d/evil", Body: "x"}}, "through symlink"},
		{"a symlink chain that resolves outside", []fetchtest.Entry{
			{Name: "x", Type: tar.TypeSymlink, Link: "."},
			{Name: "k", Type: tar.TypeSymlink, Link: "x/.."}}, "resolves outside"},
		{"a hard link to outside", []fetchtest.Entry{{Name: "lib/h", Type: tar.TypeLink, Link: "../../etc/passwd"}}, "hard link"},
		{"a hard link to a file outside the top folder", []fetchtest.Entry{{Name: "lib/h", Type: tar.TypeLink, Link: "/etc/passwd"}}, "absolute"},
		{"a fifo", []fetchtest.Entry{{Name: "fifo", Type: tar.TypeFifo}}, "fifo"},
		{"a character device", []fetchtest.Entry{{Name: "null", Type: tar.TypeChar}}, "character device"},
		{"an entry outside the top folder", []fetchtest.Entry{{Name: "other-top/x", Raw: true, Body: "x"}}, "outside the archive's top folder"},
		{"a backslash name", []fetchtest.Entry{{Name: `lib\..\..\evil`, Body: "x"}}, "backslash"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := newMirror(t, fetchtest.Options{Faults: map[string]fetchtest.Fault{"cuda_cudart": {Extra: tc.entries}}})
			c := newClient(t, m)
			arts := minimal124(t, c)
			root := t.TempDir()
			dest := filepath.Join(root, "a", "b", "dest")
			_, err := c.Fetch(t.Context(), arts, dest)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
			if !strings.Contains(err.Error(), "cuda_cudart") {
				t.Errorf("error does not name the component: %v", err)
			}
			filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
				if info != nil && info.Name() == "evil" {
					t.Errorf("%s was written", p)
				}
				return nil
			})
		})
	}
	t.Run("a hostile zip is refused too", func(t *testing.T) {
		m := newMirror(t, fetchtest.Options{Faults: map[string]fetchtest.Fault{"cuda_cudart": {Extra: []fetchtest.Entry{{Name: "../../evil", Raw: true, Body: "x"}}}}})
		c := newClient(t, m)
		arts := selectFrom(t, c, fetch.CUDA, "12.4.1", fetch.Selection{Platform: "windows-x86_64", Profile: "minimal"})
		if _, err := c.Fetch(t.Context(), arts, t.TempDir()); err == nil || !strings.Contains(err.Error(), "escapes") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("symlinks and hard links inside the tree are kept", func(t *testing.T) {
		m := newMirror(t, fetchtest.Options{Faults: map[string]fetchtest.Fault{"cuda_cudart": {Extra: []fetchtest.Entry{
			{Name: "lib/sub/up", Type: tar.TypeSymlink, Link: "../libcudart.so"},
			{Name: "include/copy.h", Type: tar.TypeLink, Link: "cuda_cudart-linux-x86_64-12.4.127-archive/include/cuda_runtime.h"},
		}}}})
		c := newClient(t, m)
		dest := t.TempDir()
		if _, err := c.Fetch(t.Context(), minimal124(t, c), dest); err != nil {
			t.Fatal(err)
		}
		if readFile(t, filepath.Join(dest, "include/copy.h")) != readFile(t, filepath.Join(dest, "include/cuda_runtime.h")) {
			t.Error("hard link content differs")
		}
		if _, err := os.Stat(filepath.Join(dest, "lib/sub/up")); err != nil {
			t.Error(err)
		}
	})
}

func TestFetchDownloadsEachArchiveOnceWhenListedTwice(t *testing.T) {
	m := newMirror(t, fetchtest.Options{})
	c := newClient(t, m)
	arts := minimal124(t, c)
	arts = append(arts, arts...)
	m.ResetCounts()
	if _, err := c.Fetch(t.Context(), arts, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if n := m.ArchiveRequests(""); n != len(arts)/2 {
		t.Errorf("%d requests for %d archives", n, len(arts)/2)
	}
}

func TestFetchStopsWhenCancelled(t *testing.T) {
	m := newMirror(t, fetchtest.Options{})
	c := newClient(t, m)
	arts := minimal124(t, c)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := c.Fetch(ctx, arts, t.TempDir()); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v", err)
	}
}

func TestFetchWorksFromAFileMirror(t *testing.T) {
	m := newMirror(t, fetchtest.Options{})
	// Lay the mirror out on disk.
	root := t.TempDir()
	hc := newClient(t, m)
	arts := minimal124(t, hc)
	raw, err := m.Manifest("cuda", "12.4.1")
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(root, "cuda", "redist"), 0o755)
	os.WriteFile(filepath.Join(root, "cuda", "redist", "redistrib_12.4.1.json"), raw, 0o644)
	for _, a := range arts {
		data, _ := m.Archive("cuda", a.RelativePath)
		p := filepath.Join(root, "cuda", "redist", filepath.FromSlash(a.RelativePath))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, data, 0o644)
	}
	c := &fetch.Client{Base: "file://" + filepath.ToSlash(root), CacheDir: t.TempDir()}
	vs, err := c.Releases(t.Context(), fetch.CUDA, false)
	if err != nil || strings.Join(vs, ",") != "12.4.1" {
		t.Fatalf("releases %v, %v", vs, err)
	}
	farts := selectFrom(t, c, fetch.CUDA, "12.4.1", fetch.Selection{Platform: "linux-x86_64", Profile: "minimal"})
	if !strings.HasPrefix(farts[0].URL, "file://") {
		t.Errorf("URL %s", farts[0].URL)
	}
	dest := t.TempDir()
	if _, err := c.Fetch(t.Context(), farts, dest); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dest, "bin", "nvcc")); err != nil {
		t.Error(err)
	}
	t.Run("a missing file is a 404-like error", func(t *testing.T) {
		os.Remove(filepath.Join(root, "cuda", "redist", filepath.FromSlash(farts[0].RelativePath)))
		c.CacheDir = t.TempDir()
		if _, err := c.Fetch(t.Context(), farts[:1], t.TempDir()); err == nil || !strings.Contains(err.Error(), "404") {
			t.Errorf("got %v", err)
		}
	})
}

func TestAnUnpackHookReplacesTheBuiltInExtraction(t *testing.T) {
	m := fetchtest.NewMirror(t, fetchtest.Options{Synthetic: true})
	c := &fetch.Client{Base: m.URL(), CacheDir: t.TempDir()}
	man, err := c.Manifest(context.Background(), fetch.CUDA, "12.4.1")
	if err != nil {
		t.Fatal(err)
	}
	arts, err := man.Select(fetch.Selection{Platform: "linux-x86_64", Components: []string{"cuda_cudart"}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	arts[0].Unpack = func(_ context.Context, f *os.File, _ int64, dest string) error {
		data, err := io.ReadAll(f)
		if err != nil {
			return err
		}
		if fmt.Sprintf("%x", sha256.Sum256(data)) != arts[0].SHA256 {
			return fmt.Errorf("handed an unverified archive")
		}
		got = append(got, dest)
		return os.WriteFile(filepath.Join(dest, "unpacked-by-hook"), nil, 0o644)
	}
	dest := filepath.Join(t.TempDir(), "tree")
	if _, err := c.Fetch(context.Background(), arts, dest); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("hook called %d times", len(got))
	}
	if _, err := os.Stat(filepath.Join(dest, "unpacked-by-hook")); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(dest, "include", "cuda_runtime.h")); err == nil {
		t.Error("the built-in extraction ran too")
	}
}
