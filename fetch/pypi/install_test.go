package pypi_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/cudaenv/cudaenv/fetch/pypi"
	"github.com/cudaenv/cudaenv/fetch/pypi/pypitest"
)

// install plans, resolves, downloads and extracts like the CLI will, with
// pypitest's download helper standing in for the fetch package.
func install(t *testing.T, idx *pypitest.Index, release, platform string, sel pypi.Selection) (string, pypi.Resolution) {
	t.Helper()
	rel, ok := pypi.CatalogRelease(release)
	if !ok {
		t.Fatalf("no catalog release %s", release)
	}
	reqs, err := pypi.Plan(rel, platform, sel)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := pypi.NewIndex(idx.URL(), pypi.WithHTTPClient(idx.Client()))
	if err != nil {
		t.Fatal(err)
	}
	res, err := ix.Resolve(context.Background(), platform, reqs)
	if err != nil {
		t.Fatal(err)
	}
	dest := t.TempDir()
	for _, a := range res.Artifacts {
		data := pypitest.Download(t, idx.Client(), a.URL, a.SHA256)
		if a.Size != 0 && a.Size != int64(len(data)) {
			t.Fatalf("%s: size %d, index said %d", a.Filename, len(data), a.Size)
		}
		if err := pypi.ExtractWheel(bytes.NewReader(data), int64(len(data)), dest); err != nil {
			t.Fatalf("%s: %v", a.Filename, err)
		}
	}
	return dest, res
}

func assertTree(t *testing.T, dest string, present, absent []string) {
	t.Helper()
	for _, p := range present {
		if _, err := os.Stat(filepath.Join(dest, p)); err != nil {
			t.Errorf("missing %s", p)
		}
	}
	for _, p := range absent {
		if _, err := os.Lstat(filepath.Join(dest, p)); err == nil {
			t.Errorf("unexpected %s", p)
		}
	}
}

func TestInstallCUDA13MinimalFromTheIndexGivesARedistTree(t *testing.T) {
	for _, html := range []bool{false, true} {
		name := "json index"
		var opts []pypitest.Option
		if html {
			name = "html-only index"
			opts = append(opts, pypitest.HTMLOnly())
		}
		t.Run(name, func(t *testing.T) {
			idx := pypitest.New(t, append(opts, pypitest.Releases("13.0.0"))...)
			dest, res := install(t, idx, "13.0.0", pypi.LinuxX86_64, pypi.Selection{Profile: pypi.ProfileMinimal})
			if len(res.Artifacts) != 5 || len(res.Skipped) != 0 {
				t.Fatalf("resolution = %+v", res)
			}
			for _, a := range res.Artifacts {
				if a.Size == 0 {
					t.Errorf("%s: size unknown", a.Filename)
				}
			}
			// JSON pages carry sizes; for HTML pages Resolve asks the file
			// server once (HEAD), and then the download comes.
			want := 1
			if html {
				want = 2
			}
			if got := idx.Hits("/files/" + res.Artifacts[0].Filename); got != want {
				t.Errorf("file requests = %d, want %d", got, want)
			}
			assertTree(t, dest,
				[]string{"bin/nvcc", "bin/ptxas", "bin/nvcc.profile", "nvvm/bin/cicc", "nvvm/lib64/libnvvm.so.4",
					"nvvm/libdevice/libdevice.10.bc", "lib/libcudart.so.13", "lib/libcudart.so", "lib/libcudart_static.a",
					"include/cuda_runtime.h", "include/crt/host_config.h", "include/cccl/cuda/std/version"},
				[]string{"nvidia", ".metadata", "nvidia_cuda_nvcc-13.0.48.dist-info"})
			if runtime.GOOS != "windows" {
				out, err := exec.Command(filepath.Join(dest, "bin/nvcc"), "--version").Output()
				if err != nil {
					t.Fatalf("run nvcc: %v", err)
				}
				if !strings.Contains(string(out), "Cuda compilation tools, release 13.0, V13.0.48") {
					t.Fatalf("nvcc --version = %q", out)
				}
			}
			if idx.Hits("/simple/nvidia-cuda-nvcc/") != 1 {
				t.Errorf("nvcc page fetched %d times", idx.Hits("/simple/nvidia-cuda-nvcc/"))
			}
		})
	}
}

func TestInstallCUDA12LibrariesFromTheIndex(t *testing.T) {
	idx := pypitest.New(t, pypitest.Releases("12.4.1"))
	dest, _ := install(t, idx, "12.4.1", pypi.LinuxX86_64, pypi.Selection{Components: []string{"cuda_cudart", "libcublas", "cuda_nvcc"}})
	assertTree(t, dest,
		[]string{"lib/libcudart.so.12", "include/cuda_runtime.h", "lib/libcublas.so.12", "bin/ptxas", "nvvm/lib64/libnvvm.so"},
		[]string{"bin/nvcc", "nvidia", "__init__.py", "lib/__init__.py"})
}

func TestInstallCUDA12DefaultSkipsWhatTheIndexLacks(t *testing.T) {
	idx := pypitest.New(t, pypitest.Releases("12.4.1"), pypitest.Missing("nvidia-cufile-cu12"))
	_, res := install(t, idx, "12.4.1", pypi.LinuxX86_64, pypi.Selection{Profile: pypi.ProfileDefault})
	if len(res.Skipped) != 1 || res.Skipped[0].Requirement.Component != "libcufile" || !errors.Is(res.Skipped[0].Reason, pypi.ErrProjectNotFound) {
		t.Fatalf("skipped = %+v", res.Skipped)
	}
	if len(res.Artifacts) < 15 {
		t.Fatalf("only %d artifacts", len(res.Artifacts))
	}
}

func TestInstallOnWindowsUsesTheWindowsWheels(t *testing.T) {
	idx := pypitest.New(t, pypitest.Releases("13.0.0"))
	dest, _ := install(t, idx, "13.0.0", pypi.WindowsX86_64, pypi.Selection{Profile: pypi.ProfileMinimal})
	assertTree(t, dest, []string{"bin/nvcc.exe", "bin/x64/cudart64_13.dll", "lib/x64/cudart.lib", "nvvm/bin/cicc.exe"}, []string{"bin/nvcc"})
}

func TestIndexRefusesWheelsWithoutHashes(t *testing.T) {
	idx := pypitest.New(t, pypitest.Releases("13.0.0"), pypitest.WithoutHash("nvidia-cuda-crt"))
	ix, _ := pypi.NewIndex(idx.URL(), pypi.WithHTTPClient(idx.Client()))
	rel, _ := pypi.CatalogRelease("13.0.0")
	reqs, _ := pypi.Plan(rel, pypi.LinuxX86_64, pypi.Selection{Profile: pypi.ProfileMinimal})
	_, err := ix.Resolve(context.Background(), pypi.LinuxX86_64, reqs)
	var missing *pypi.MissingHashError
	if !errors.As(err, &missing) || missing.Project != "nvidia-cuda-crt" {
		t.Fatalf("err = %v", err)
	}
}

func TestIndexListsTheWrongHashWhenAskedTo(t *testing.T) {
	idx := pypitest.New(t, pypitest.Releases("13.0.0"), pypitest.WrongHash("nvidia-cuda-runtime"))
	ix, _ := pypi.NewIndex(idx.URL(), pypi.WithHTTPClient(idx.Client()))
	res, err := ix.Resolve(context.Background(), pypi.LinuxX86_64, []pypi.Requirement{{Component: "cuda_cudart", Project: "nvidia-cuda-runtime", Version: "13.0.48"}})
	if err != nil {
		t.Fatal(err)
	}
	wh, ok := idx.Wheel(res.Artifacts[0].Filename)
	if !ok || wh.SHA256 == res.Artifacts[0].SHA256 {
		t.Fatalf("listed sha256 %s matches the served bytes", res.Artifacts[0].SHA256)
	}
}

func TestIndexServesRangesForResumingDownloads(t *testing.T) {
	idx := pypitest.New(t, pypitest.Releases("13.0.0"), pypitest.Platforms(pypi.LinuxX86_64))
	wheels := idx.Wheels("nvidia-cuda-runtime")
	if len(wheels) == 0 {
		t.Fatal("no wheels")
	}
	wh := wheels[0]
	req, _ := http.NewRequest(http.MethodGet, strings.TrimSuffix(idx.URL(), "simple/")+"files/"+wh.Filename, nil)
	req.Header.Set("Range", "bytes=10-")
	resp, err := idx.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(b.Bytes(), wh.Data[10:]) {
		t.Fatalf("status %s, %d bytes", resp.Status, b.Len())
	}
}

func TestIndexRedirectsUnnormalizedNames(t *testing.T) {
	idx := pypitest.New(t, pypitest.Releases("13.0.0"))
	resp, err := idx.Client().Get(idx.URL() + "NVIDIA_CUDA_NVCC/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Request.URL.Path != "/simple/nvidia-cuda-nvcc/" || resp.StatusCode != http.StatusOK {
		t.Fatalf("ended at %s with %s", resp.Request.URL.Path, resp.Status)
	}
}

func TestGeneratedWheelsAreTheSameEveryRun(t *testing.T) {
	a := pypitest.New(t, pypitest.Releases("12.4.1")).Wheels("nvidia-cuda-runtime-cu12")
	b := pypitest.New(t, pypitest.Releases("12.4.1")).Wheels("nvidia-cuda-runtime-cu12")
	if len(a) == 0 || len(a) != len(b) {
		t.Fatalf("%d and %d wheels", len(a), len(b))
	}
	for i := range a {
		if a[i].SHA256 != b[i].SHA256 {
			t.Errorf("%s differs between runs", a[i].Filename)
		}
	}
}

func TestInstallCudnnFromTheIndexForEachCUDAMajor(t *testing.T) {
	idx := pypitest.New(t, pypitest.Releases("13.0.0"), pypitest.Platforms(pypi.LinuxX86_64))
	ix, _ := pypi.NewIndex(idx.URL(), pypi.WithHTTPClient(idx.Client()))
	for _, major := range []int{12, 13} {
		rel, _ := pypi.LatestCatalogCudnn("9.12")
		req, err := pypi.PlanCudnn(rel, major, pypi.LinuxX86_64)
		if err != nil {
			t.Fatal(err)
		}
		res, err := ix.Resolve(context.Background(), pypi.LinuxX86_64, []pypi.Requirement{req})
		if err != nil {
			t.Fatal(err)
		}
		a := res.Artifacts[0]
		if want := fmt.Sprintf("nvidia_cudnn_cu%d-9.12.0.46-", major); !strings.HasPrefix(a.Filename, want) {
			t.Fatalf("wheel %s, want %s...", a.Filename, want)
		}
		dest := t.TempDir()
		data := pypitest.Download(t, idx.Client(), a.URL, a.SHA256)
		if err := pypi.ExtractWheel(bytes.NewReader(data), int64(len(data)), dest); err != nil {
			t.Fatal(err)
		}
		assertTree(t, dest, []string{"lib/libcudnn.so.9", "lib/libcudnn.so", "include/cudnn.h"}, []string{"nvidia", "lib/__init__.py"})
	}
}
