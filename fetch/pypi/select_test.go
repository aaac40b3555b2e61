package pypi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func pageOf(project string, files ...File) *Page {
	for i := range files {
		if files[i].URL == "" {
			files[i].URL = "https://files.example/" + files[i].Filename
		}
	}
	return &Page{Project: project, URL: "https://idx.example/simple/" + project + "/", Files: files}
}

func TestSelectWheelPicksTheWheelForThePlatform(t *testing.T) {
	const p = "nvidia-cuda-nvcc"
	page := pageOf(p,
		File{Filename: "nvidia-cuda-nvcc-0.0.1.dev5.tar.gz", SHA256: hashA},
		File{Filename: "nvidia_cuda_nvcc-13.0.48-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl", SHA256: hashA},
		File{Filename: "nvidia_cuda_nvcc-13.0.48-py3-none-manylinux_2_27_x86_64.whl", SHA256: hashA},
		File{Filename: "nvidia_cuda_nvcc-13.0.48-py3-none-musllinux_1_2_x86_64.whl", SHA256: hashA},
		File{Filename: "nvidia_cuda_nvcc-13.0.48-py3-none-manylinux2014_aarch64.manylinux_2_17_aarch64.whl", SHA256: hashA},
		File{Filename: "nvidia_cuda_nvcc-13.0.48-py3-none-win_amd64.whl", SHA256: hashA},
		File{Filename: "nvidia_cuda_nvcc-13.0.88-py3-none-manylinux_2_28_x86_64.whl", SHA256: hashA},
		File{Filename: "other_project-13.0.48-py3-none-manylinux_2_28_x86_64.whl", SHA256: hashA},
	)
	tests := []struct {
		name, platform, want string
	}{
		{"linux-x86_64 takes the newest manylinux of the version", LinuxX86_64, "nvidia_cuda_nvcc-13.0.48-py3-none-manylinux_2_27_x86_64.whl"},
		{"linux-sbsa takes aarch64", LinuxSBSA, "nvidia_cuda_nvcc-13.0.48-py3-none-manylinux2014_aarch64.manylinux_2_17_aarch64.whl"},
		{"windows-x86_64 takes win_amd64", WindowsX86_64, "nvidia_cuda_nvcc-13.0.48-py3-none-win_amd64.whl"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := SelectWheel(page, "13.0.48", tt.platform)
			if err != nil {
				t.Fatal(err)
			}
			if f.Filename != tt.want {
				t.Fatalf("got %s, want %s", f.Filename, tt.want)
			}
		})
	}
}

func TestSelectWheelTakesAnyOnlyWhenNothingElseFits(t *testing.T) {
	page := pageOf("p",
		File{Filename: "p-1.0-py3-none-any.whl", SHA256: hashA},
		File{Filename: "p-1.0-py3-none-manylinux1_x86_64.whl", SHA256: hashA},
	)
	if f, _ := SelectWheel(page, "1.0", LinuxX86_64); !strings.Contains(f.Filename, "manylinux1") {
		t.Fatalf("linux got %s", f.Filename)
	}
	if f, _ := SelectWheel(page, "1.0", WindowsX86_64); f.Filename != "p-1.0-py3-none-any.whl" {
		t.Fatalf("windows got %s", f.Filename)
	}
}

func TestSelectWheelPrefersTheExactVersionOverAPostRelease(t *testing.T) {
	page := pageOf("nvidia-cuda-cccl-cu12",
		File{Filename: "nvidia_cuda_cccl_cu12-12.4.127-py3-none-manylinux2014_x86_64.whl", SHA256: hashA},
		File{Filename: "nvidia_cuda_cccl_cu12-12.4.127.post1-py3-none-manylinux2014_x86_64.whl", SHA256: hashA},
		File{Filename: "nvidia_cuda_cccl_cu12-12.4.127.post1-py3-none-manylinux2014_aarch64.whl", SHA256: hashA},
		File{Filename: "nvidia_cuda_cccl_cu12-12.4.127.post2-py3-none-manylinux2014_aarch64.whl", SHA256: hashA},
	)
	if f, _ := SelectWheel(page, "12.4.127", LinuxX86_64); f.Filename != "nvidia_cuda_cccl_cu12-12.4.127-py3-none-manylinux2014_x86_64.whl" {
		t.Fatalf("x86_64 got %s", f.Filename)
	}
	if f, _ := SelectWheel(page, "12.4.127", LinuxSBSA); f.Filename != "nvidia_cuda_cccl_cu12-12.4.127.post2-py3-none-manylinux2014_aarch64.whl" {
		t.Fatalf("aarch64 got %s", f.Filename)
	}
}

func TestSelectWheelPrefersNotYanked(t *testing.T) {
	page := pageOf("p",
		File{Filename: "p-1.0-py3-none-manylinux2014_x86_64.whl", SHA256: hashA, Yanked: true},
		File{Filename: "p-1.0-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl", SHA256: hashA},
	)
	if f, _ := SelectWheel(page, "1.0", LinuxX86_64); f.Yanked {
		t.Fatalf("got the yanked %s", f.Filename)
	}
}

// As on the real index: nvidia-cuda-cccl-cu12 12.4.127 is yanked ("Broken
// release": no nv/target, which cuda_fp16.h includes) and 12.4.127.post1 is
// the fixed upload.
func TestSelectWheelTakesTheFixedPostReleaseOfAYankedWheel(t *testing.T) {
	page := pageOf("nvidia-cuda-cccl-cu12",
		File{Filename: "nvidia_cuda_cccl_cu12-12.4.127-py3-none-manylinux2014_x86_64.whl", SHA256: hashA, Yanked: true},
		File{Filename: "nvidia_cuda_cccl_cu12-12.4.127.post1-py3-none-manylinux2014_x86_64.whl", SHA256: hashA},
		File{Filename: "nvidia_cuda_cccl_cu12-12.4.99-py3-none-manylinux2014_x86_64.whl", SHA256: hashA},
	)
	if f, _ := SelectWheel(page, "12.4.127", LinuxX86_64); f.Filename != "nvidia_cuda_cccl_cu12-12.4.127.post1-py3-none-manylinux2014_x86_64.whl" {
		t.Fatalf("got %s", f.Filename)
	}
	// With no fix uploaded, the yanked file is still what ==12.4.127 means.
	page.Files = page.Files[:1]
	if f, err := SelectWheel(page, "12.4.127", LinuxX86_64); err != nil || !f.Yanked {
		t.Fatalf("got %+v, %v", f, err)
	}
}

func TestSelectWheelRefusesAWheelWithoutSHA256(t *testing.T) {
	page := pageOf("p", File{Filename: "p-1.0-py3-none-manylinux2014_x86_64.whl"})
	_, err := SelectWheel(page, "1.0", LinuxX86_64)
	var missing *MissingHashError
	if !errors.As(err, &missing) || !strings.Contains(err.Error(), "no sha256") {
		t.Fatalf("err = %v", err)
	}
}

func TestSelectWheelNamesTheVersionsThatExist(t *testing.T) {
	page := pageOf("nvidia-cufile-cu12",
		File{Filename: "nvidia_cufile_cu12-1.11.1.6-py3-none-manylinux2014_x86_64.whl", SHA256: hashA},
		File{Filename: "nvidia_cufile_cu12-1.13.0.11-py3-none-manylinux2014_x86_64.whl", SHA256: hashA},
		File{Filename: "nvidia_cufile_cu12-1.14.0.30-py3-none-manylinux_2_27_aarch64.whl", SHA256: hashA},
	)
	_, err := SelectWheel(page, "1.9.1.3", LinuxX86_64)
	var nw *NoWheelError
	if !errors.As(err, &nw) {
		t.Fatalf("err = %v", err)
	}
	if got := strings.Join(nw.Versions, " "); got != "1.11.1.6 1.13.0.11" {
		t.Fatalf("versions = %q", got)
	}
	if !strings.Contains(err.Error(), "no wheel of nvidia-cufile-cu12==1.9.1.3 for linux-x86_64") {
		t.Fatalf("message = %q", err)
	}
}

func TestSelectWheelRefusesPlatformsWithoutWheels(t *testing.T) {
	_, err := SelectWheel(pageOf("p"), "1.0", "linux-aarch64")
	if err == nil || !strings.Contains(err.Error(), "linux-aarch64") {
		t.Fatalf("err = %v", err)
	}
}

func TestResolveSkipsOptionalMissesAndFailsOnRequiredOnes(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", mediaJSON)
		switch r.URL.Path {
		case "/simple/nvidia-cuda-runtime/":
			fmt.Fprintf(w, `{"meta":{"api-version":"1.1"},"files":[{"filename":"nvidia_cuda_runtime-13.0.48-py3-none-manylinux_2_17_x86_64.whl","url":"/f/rt.whl","hashes":{"sha256":"%s"},"size":42}]}`, hashA)
		case "/simple/nvidia-cuda-cuobjdump/":
			fmt.Fprint(w, `{"meta":{"api-version":"1.1"},"files":[]}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	ix, _ := NewIndex(srv.URL + "/simple/")
	reqs := []Requirement{
		{Component: "cuda_cudart", Project: "nvidia-cuda-runtime", Version: "13.0.48"},
		{Component: "cuda_cuobjdump", Project: "nvidia-cuda-cuobjdump", Version: "13.0.39", Optional: true},
		{Component: "cuda_gone", Project: "nvidia-cuda-gone", Version: "1", Optional: true},
	}
	res, err := ix.Resolve(context.Background(), LinuxX86_64, reqs)
	if err != nil {
		t.Fatal(err)
	}
	want := Artifact{Component: "cuda_cudart", Project: "nvidia-cuda-runtime", Version: "13.0.48", Platform: LinuxX86_64,
		Filename: "nvidia_cuda_runtime-13.0.48-py3-none-manylinux_2_17_x86_64.whl", RelativePath: "nvidia_cuda_runtime-13.0.48-py3-none-manylinux_2_17_x86_64.whl",
		SHA256: hashA, Size: 42, URL: srv.URL + "/f/rt.whl"}
	if len(res.Artifacts) != 1 || res.Artifacts[0] != want {
		t.Fatalf("artifacts = %+v", res.Artifacts)
	}
	if len(res.Skipped) != 2 || res.Skipped[0].Requirement.Component != "cuda_cuobjdump" || res.Skipped[1].Requirement.Component != "cuda_gone" {
		t.Fatalf("skipped = %+v", res.Skipped)
	}

	reqs[1].Optional, reqs[2].Optional = false, false
	_, err = ix.Resolve(context.Background(), LinuxX86_64, reqs)
	if err == nil || !strings.Contains(err.Error(), "resolve cuda_cuobjdump") || !strings.Contains(err.Error(), "resolve cuda_gone") {
		t.Fatalf("err = %v", err)
	}
}

func TestResolveAsksTheFileServerForSizesAnHTMLPageLacks(t *testing.T) {
	tests := []struct {
		name string
		file http.HandlerFunc
		want int64
	}{
		{"HEAD gives the length", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "1234")
		}, 1234},
		{"no HEAD but ranges", func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodHead {
				http.Error(w, "no", http.StatusMethodNotAllowed)
				return
			}
			w.Header().Set("Content-Range", "bytes 0-0/5678")
			w.WriteHeader(http.StatusPartialContent)
			w.Write([]byte("x"))
		}, 5678},
		{"neither says", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "no", http.StatusForbidden)
		}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mux := http.NewServeMux()
			mux.HandleFunc("/simple/p/", func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				fmt.Fprintf(w, `<a href="/f/p-1.0-py3-none-manylinux2014_x86_64.whl#sha256=%s">p-1.0-py3-none-manylinux2014_x86_64.whl</a>`, hashA)
			})
			mux.HandleFunc("/f/", tt.file)
			srv := httptest.NewServer(mux)
			defer srv.Close()
			ix, _ := NewIndex(srv.URL + "/simple/")
			res, err := ix.Resolve(context.Background(), LinuxX86_64, []Requirement{{Component: "c", Project: "p", Version: "1.0"}})
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Artifacts[0].Size; got != tt.want {
				t.Fatalf("size = %d, want %d", got, tt.want)
			}
		})
	}
}
