package pypi

// Checks against the real PyPI. They are skipped unless CUDAENV_E2E_PYPI=1;
// no other test touches the network. CUDAENV_PYPI_INDEX points them at a
// mirror. With CUDAENV_E2E_PYPI_RECORD=1 they also rewrite
// testdata/real_layouts.txt, the file lists of the real wheels (read from
// each wheel's zip directory with HTTP range requests, without downloading
// the wheel), which layout_test.go checks EntryPath against.
//
//	CUDAENV_E2E_PYPI=1 go test -run E2E -v ./fetch/pypi/

import (
	"archive/zip"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

func e2eIndex(t *testing.T) *Index {
	t.Helper()
	if os.Getenv("CUDAENV_E2E_PYPI") != "1" {
		t.Skip("set CUDAENV_E2E_PYPI=1 to check against the real index")
	}
	ix, err := NewIndex(os.Getenv("CUDAENV_PYPI_INDEX"), WithUserAgent("cudaenv-e2e-test"))
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

func TestE2EPinnedWheelsResolveOnTheRealIndex(t *testing.T) {
	ix := e2eIndex(t)
	reqs := []Requirement{
		{Component: "cuda_nvcc", Project: "nvidia-cuda-nvcc", Version: "13.0.48"},
		{Component: "cuda_cudart", Project: "nvidia-cuda-runtime-cu12", Version: "12.4.127"},
		{Component: "cudnn", Project: "nvidia-cudnn-cu12", Version: "9.5.1.17"},
		{Component: "cudnn", Project: "nvidia-cudnn-cu13", Version: "9.12.0.46"},
	}
	for _, accept := range []string{acceptHeader, "text/html"} {
		ix.accept = accept
		for _, platform := range []string{LinuxX86_64, LinuxSBSA, WindowsX86_64} {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			res, err := ix.Resolve(ctx, platform, reqs)
			cancel()
			if err != nil {
				t.Fatalf("accept %q, %s: %v", accept, platform, err)
			}
			for _, a := range res.Artifacts {
				t.Logf("accept %-40q %-15s %s  sha256=%s size=%d", accept, platform, a.Filename, a.SHA256[:12], a.Size)
			}
		}
	}
}

func TestE2EEveryCatalogWheelExistsOnTheRealIndex(t *testing.T) {
	ix := e2eIndex(t)
	for _, version := range []string{"11.8.0", "12.4.1", "12.9.0", "13.0.0"} {
		rel, ok := CatalogRelease(version)
		if !ok {
			t.Fatalf("no catalog release %s", version)
		}
		for _, platform := range []string{LinuxX86_64, LinuxSBSA, WindowsX86_64} {
			reqs, err := Plan(rel, platform, Selection{Profile: ProfileDefault})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			res, err := ix.Resolve(ctx, platform, reqs)
			cancel()
			if err != nil {
				t.Errorf("CUDA %s %s: %v", version, platform, err)
				continue
			}
			for _, a := range res.Artifacts {
				t.Logf("CUDA %s %-15s ok      %-20s %s (%d bytes)", version, platform, a.Component, a.Filename, a.Size)
			}
			for _, s := range res.Skipped {
				t.Logf("CUDA %s %-15s MISSING %-20s %v", version, platform, s.Requirement.Component, s.Reason)
			}
		}
	}
}

func TestE2ERecordRealLayouts(t *testing.T) {
	ix := e2eIndex(t)
	if os.Getenv("CUDAENV_E2E_PYPI_RECORD") != "1" {
		t.Skip("set CUDAENV_E2E_PYPI_RECORD=1 to rewrite testdata/real_layouts.txt")
	}
	var lines []string
	for _, c := range []struct{ version, platform string }{
		{"12.4.1", LinuxX86_64}, {"13.0.0", LinuxX86_64}, {"13.0.0", LinuxSBSA}, {"13.0.0", WindowsX86_64}, {"12.4.1", WindowsX86_64},
	} {
		rel, _ := CatalogRelease(c.version)
		reqs, err := Plan(rel, c.platform, Selection{Profile: ProfileDefault})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		res, err := ix.Resolve(ctx, c.platform, reqs)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		for _, a := range res.Artifacts {
			if c.platform != LinuxX86_64 && a.Component != "cuda_cudart" && a.Component != "cuda_nvcc" && a.Component != "libnvvm" {
				continue
			}
			entries, err := listRemoteZip(ctx, a.URL, a.Size)
			if err != nil {
				cancel()
				t.Fatalf("%s: %v", a.Filename, err)
			}
			for _, e := range entries {
				lines = append(lines, a.Filename+"\t"+e)
			}
			t.Logf("%s: %d entries", a.Filename, len(entries))
		}
		cancel()
	}
	header := "# Entries of NVIDIA's real wheels (file name, mode, size, entry), read from\n" +
		"# the zip directories on the real index by TestE2ERecordRealLayouts.\n" +
		"# Include trees deeper than include/<dir>/ are cut to their first 3 entries.\n"
	if err := os.WriteFile(filepath.Join("testdata", "real_layouts.txt"), []byte(header+strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// listRemoteZip reads a remote zip's directory with range requests and
// returns "mode\tsize\tname" lines, with deep include trees cut short.
func listRemoteZip(ctx context.Context, url string, size int64) ([]string, error) {
	ra := &rangeReader{ctx: ctx, url: url, size: size}
	zr, err := zip.NewReader(ra, size)
	if err != nil {
		return nil, err
	}
	perDir := map[string]int{}
	var out []string
	for _, f := range zr.File {
		name := f.Name
		if i := strings.Index(name, "/include/"); i >= 0 {
			rest := name[i+len("/include/"):]
			if parts := strings.Split(rest, "/"); len(parts) > 2 {
				key := name[:i] + "/include/" + parts[0] + "/" + parts[1]
				perDir[key]++
				if perDir[key] > 3 {
					continue
				}
			}
		}
		out = append(out, fmt.Sprintf("%v\t%d\t%s", f.Mode(), f.UncompressedSize64, name))
	}
	sort.Strings(out)
	return out, nil
}

// rangeReader is an io.ReaderAt over HTTP range requests that keeps the last
// MiB of the file, where a zip's directory lives, in memory.
type rangeReader struct {
	ctx  context.Context
	url  string
	size int64
	tail []byte
	off  int64
}

func (r *rangeReader) ReadAt(p []byte, off int64) (int, error) {
	if r.tail == nil {
		r.off = max(0, r.size-1<<20)
		b, err := r.get(r.off, r.size-1)
		if err != nil {
			return 0, err
		}
		r.tail = b
	}
	if off >= r.off {
		n := copy(p, r.tail[min(off-r.off, int64(len(r.tail))):])
		if n < len(p) {
			return n, io.EOF
		}
		return n, nil
	}
	b, err := r.get(off, off+int64(len(p))-1)
	if err != nil {
		return 0, err
	}
	return copy(p, b), nil
}

func (r *rangeReader) get(from, to int64) ([]byte, error) {
	req, err := http.NewRequestWithContext(r.ctx, http.MethodGet, r.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Range", fmt.Sprintf("bytes=%d-%d", from, to))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent {
		return nil, fmt.Errorf("range request: %s", resp.Status)
	}
	return io.ReadAll(resp.Body)
}

// TestE2EListWheel logs the entries of real wheels without downloading
// them: CUDAENV_E2E_PYPI_LIST="nvidia-cuda-nvcc==13.0.48 nvidia-nvvm==13.0.48"
// (linux-x86_64).
func TestE2EListWheel(t *testing.T) {
	ix := e2eIndex(t)
	specs := strings.Fields(os.Getenv("CUDAENV_E2E_PYPI_LIST"))
	if len(specs) == 0 {
		t.Skip("set CUDAENV_E2E_PYPI_LIST to project==version pairs")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, spec := range specs {
		project, version, ok := strings.Cut(spec, "==")
		if !ok {
			t.Fatalf("%q is not project==version", spec)
		}
		res, err := ix.Resolve(ctx, LinuxX86_64, []Requirement{{Component: project, Project: project, Version: version}})
		if err != nil {
			t.Fatal(err)
		}
		a := res.Artifacts[0]
		entries, err := listRemoteZip(ctx, a.URL, a.Size)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s:\n%s", a.Filename, strings.Join(entries, "\n"))
	}
}
