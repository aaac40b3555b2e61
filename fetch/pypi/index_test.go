package pypi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const (
	hashA = "64403288fa2136ee8e467cdb9c152427eb0b4b5a3f35fb9d9a25b11e5c2f2ae4"
	hashB = "d529c52d30c403cbf6fb45e4b1efd0bba2bea8a2ae8288e7e40a6e1b4c4a7d4f"
)

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestParsePageReadsJSONAndHTMLAlike(t *testing.T) {
	page := mustURL(t, "https://mirror.example/pypi/simple/nvidia-cuda-runtime-cu12/")
	jsonBody := `{"meta":{"api-version":"1.1"},"name":"nvidia-cuda-runtime-cu12","files":[
	 {"filename":"nvidia_cuda_runtime_cu12-12.4.127-py3-none-manylinux2014_x86_64.whl","url":"../../packages/ab/nvidia_cuda_runtime_cu12-12.4.127-py3-none-manylinux2014_x86_64.whl","hashes":{"sha256":"` + strings.ToUpper(hashA) + `","md5":"00"},"size":883737,"yanked":false,"requires-python":">=3"},
	 {"filename":"nvidia_cuda_runtime_cu12-12.4.99-py3-none-win_amd64.whl","url":"https://files.example/x/nvidia_cuda_runtime_cu12-12.4.99-py3-none-win_amd64.whl","hashes":{},"yanked":"broken build"}]}`
	htmlBody := `<!DOCTYPE html><html><head><meta name="pypi:repository-version" content="1.1"><title>Links</title></head><body>
	<!-- <a href="commented-out.whl">no</a> -->
	<h1>Links for nvidia-cuda-runtime-cu12</h1>
	<a href="../../packages/ab/nvidia_cuda_runtime_cu12-12.4.127-py3-none-manylinux2014_x86_64.whl#sha256=` + hashA + `" data-requires-python="&gt;=3">nvidia_cuda_runtime_cu12-12.4.127-py3-none-manylinux2014_x86_64.whl</a><br/>
	<A HREF='https://files.example/x/nvidia_cuda_runtime_cu12-12.4.99-py3-none-win_amd64.whl#md5=00' data-yanked="">nvidia_cuda_runtime_cu12-12.4.99-py3-none-win_amd64.whl</A><br/>
	</body></html>`
	want := []File{
		{Filename: "nvidia_cuda_runtime_cu12-12.4.127-py3-none-manylinux2014_x86_64.whl",
			URL:    "https://mirror.example/pypi/packages/ab/nvidia_cuda_runtime_cu12-12.4.127-py3-none-manylinux2014_x86_64.whl",
			SHA256: hashA, Size: 883737, RequiresPython: ">=3"},
		{Filename: "nvidia_cuda_runtime_cu12-12.4.99-py3-none-win_amd64.whl",
			URL:    "https://files.example/x/nvidia_cuda_runtime_cu12-12.4.99-py3-none-win_amd64.whl",
			Yanked: true},
	}
	tests := []struct {
		name, contentType, body string
		sizeKnown               bool
	}{
		{"PEP 691 JSON", mediaJSON, jsonBody, true},
		{"PEP 691 JSON sniffed without a content type", "", jsonBody, true},
		{"PEP 503 HTML as text/html", "text/html; charset=utf-8", htmlBody, false},
		{"PEP 691 HTML media type", mediaHTML, htmlBody, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParsePage(tt.contentType, []byte(tt.body), page)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("got %d files: %+v", len(got), got)
			}
			for i := range want {
				w := want[i]
				if !tt.sizeKnown {
					w.Size = 0
				}
				if got[i] != w {
					t.Errorf("file %d:\n got %+v\nwant %+v", i, got[i], w)
				}
			}
		})
	}
}

func TestParsePageHonoursTheHTMLBaseTag(t *testing.T) {
	body := `<html><head><base href="https://cdn.example/wheels/"></head><body>
	<a href="p-1.0-py3-none-any.whl#sha256=` + hashA + `">p-1.0-py3-none-any.whl</a></body></html>`
	got, err := ParsePage("text/html", []byte(body), mustURL(t, "https://idx.example/simple/p/"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].URL != "https://cdn.example/wheels/p-1.0-py3-none-any.whl" {
		t.Fatalf("got %+v", got)
	}
}

func TestParsePageDropsLinksThatAreNotHTTP(t *testing.T) {
	body := `<a href="javascript:alert(1)">x-1.0-py3-none-any.whl</a><a href="file:///etc/passwd">y-1.0-py3-none-any.whl</a>`
	got, err := ParsePage("text/html", []byte(body), mustURL(t, "https://idx.example/simple/x/"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Fatalf("got %+v", got)
	}
}

func TestParsePageRefusesAnUnknownJSONMajorVersion(t *testing.T) {
	_, err := ParsePage(mediaJSON, []byte(`{"meta":{"api-version":"2.0"},"files":[]}`), mustURL(t, "https://idx.example/simple/x/"))
	if err == nil || !strings.Contains(err.Error(), "api-version") {
		t.Fatalf("err = %v", err)
	}
}

func TestNewIndexChecksTheURL(t *testing.T) {
	tests := []struct {
		name, in, want string
		ok             bool
	}{
		{"empty means PyPI", "", DefaultIndex, true},
		{"a slash is added", "https://mirror.example/simple", "https://mirror.example/simple/", true},
		{"http is fine for a LAN mirror", "http://10.0.0.1:8080/simple/", "http://10.0.0.1:8080/simple/", true},
		{"ftp is refused", "ftp://mirror.example/simple/", "", false},
		{"no host is refused", "https:///simple/", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ix, err := NewIndex(tt.in)
			if (err == nil) != tt.ok {
				t.Fatalf("err = %v", err)
			}
			if err == nil && ix.URL() != tt.want {
				t.Fatalf("URL() = %q, want %q", ix.URL(), tt.want)
			}
		})
	}
}

func TestProjectNegotiatesJSONAndFallsBackToHTML(t *testing.T) {
	var gotAccept atomic.Value
	htmlOnly := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAccept.Store(r.Header.Get("Accept"))
		if r.URL.Path != "/simple/nvidia-cuda-nvcc/" {
			http.NotFound(w, r)
			return
		}
		if !htmlOnly && strings.Contains(r.Header.Get("Accept"), mediaJSON) {
			w.Header().Set("Content-Type", mediaJSON)
			fmt.Fprintf(w, `{"meta":{"api-version":"1.0"},"files":[{"filename":"nvidia_cuda_nvcc-13.0.48-py3-none-any.whl","url":"/f/n.whl","hashes":{"sha256":"%s"}}]}`, hashB)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<a href="/f/n.whl#sha256=%s">nvidia_cuda_nvcc-13.0.48-py3-none-any.whl</a>`, hashB)
	}))
	defer srv.Close()
	ix, err := NewIndex(srv.URL + "/simple/")
	if err != nil {
		t.Fatal(err)
	}
	for _, html := range []bool{false, true} {
		htmlOnly = html
		page, err := ix.Project(context.Background(), "NVIDIA_CUDA.nvcc")
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Files) != 1 || page.Files[0].URL != srv.URL+"/f/n.whl" || page.Files[0].SHA256 != hashB {
			t.Fatalf("html=%v: page = %+v", html, page)
		}
	}
	if a := gotAccept.Load().(string); !strings.HasPrefix(a, mediaJSON) {
		t.Fatalf("Accept = %q, want JSON first", a)
	}
}

func TestProjectResolvesRelativeLinksAgainstTheRedirectedPage(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/simple/p/", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/other/index/p/", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/other/index/p/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<a href="../../files/p-1.0-py3-none-any.whl#sha256=%s">p-1.0-py3-none-any.whl</a>`, hashA)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	ix, _ := NewIndex(srv.URL + "/simple/")
	page, err := ix.Project(context.Background(), "p")
	if err != nil {
		t.Fatal(err)
	}
	if want := srv.URL + "/other/files/p-1.0-py3-none-any.whl"; page.Files[0].URL != want {
		t.Fatalf("URL = %s, want %s", page.Files[0].URL, want)
	}
}

func TestProjectRetriesServerErrorsButNotMissingProjects(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		switch {
		case strings.Contains(r.URL.Path, "missing"):
			http.NotFound(w, r)
		case n == 1:
			http.Error(w, "busy", http.StatusServiceUnavailable)
		default:
			w.Header().Set("Content-Type", mediaJSON)
			fmt.Fprint(w, `{"meta":{"api-version":"1.1"},"files":[]}`)
		}
	}))
	defer srv.Close()
	ix, _ := NewIndex(srv.URL+"/simple/", WithRetries(2, time.Millisecond))
	if _, err := ix.Project(context.Background(), "flaky"); err != nil {
		t.Fatalf("after one 503: %v", err)
	}
	if calls.Load() != 2 {
		t.Fatalf("calls = %d, want 2", calls.Load())
	}
	calls.Store(10)
	_, err := ix.Project(context.Background(), "missing")
	if !errors.Is(err, ErrProjectNotFound) {
		t.Fatalf("err = %v, want ErrProjectNotFound", err)
	}
	if calls.Load() != 11 {
		t.Fatalf("a 404 was retried: %d calls", calls.Load()-10)
	}
}

func TestProjectGivesUpAfterTheRetries(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.Error(w, "down", http.StatusBadGateway)
	}))
	defer srv.Close()
	ix, _ := NewIndex(srv.URL+"/simple/", WithRetries(2, time.Millisecond))
	_, err := ix.Project(context.Background(), "p")
	if err == nil || !strings.Contains(err.Error(), "502") {
		t.Fatalf("err = %v", err)
	}
	if calls.Load() != 3 {
		t.Fatalf("calls = %d, want 3", calls.Load())
	}
}

func TestIndexKeepsMirrorPasswordsOutOfMessages(t *testing.T) {
	var auth atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, _ := r.BasicAuth()
		auth.Store(u + ":" + p)
		http.NotFound(w, r)
	}))
	defer srv.Close()
	base := strings.Replace(srv.URL, "http://", "http://student:s3cret@", 1) + "/simple/"
	ix, err := NewIndex(base)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(ix.URL(), "s3cret") {
		t.Errorf("URL() = %s", ix.URL())
	}
	_, err = ix.Project(context.Background(), "p")
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("err = %v", err)
	}
	if got := auth.Load(); got != "student:s3cret" {
		t.Errorf("the server got credentials %v", got)
	}
}
