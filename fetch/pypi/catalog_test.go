package pypi

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/cudaenv/cudaenv/fetch/pypi/internal/catalog"
)

func TestGeneratedCatalogIsUpToDate(t *testing.T) {
	want, err := catalog.Render(os.DirFS("catalog/manifests"), "pypi", "catalog/manifests")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("catalog_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("catalog_gen.go is stale: run go generate ./fetch/pypi")
	}
}

func TestCatalogVersionsAreTheManifestComponentVersions(t *testing.T) {
	tests := []struct {
		name, release, component, version string
	}{
		{"runtime of 12.4.1 is 12.4.127", "12.4.1", "cuda_cudart", "12.4.127"},
		{"nvcc of 12.4.1 is 12.4.131", "12.4.1", "cuda_nvcc", "12.4.131"},
		{"cublas of 12.4.1 is 12.4.5.8", "12.4.1", "libcublas", "12.4.5.8"},
		{"cublas of 11.8.0 is 11.11.3.6", "11.8.0", "libcublas", "11.11.3.6"},
		{"nvcc of 13.0.0 is 13.0.48", "13.0.0", "cuda_nvcc", "13.0.48"},
		{"cccl of 13.0.0 is 13.0.50", "13.0.0", "cuda_cccl", "13.0.50"},
		{"crt of 13.0.0 is 13.0.48", "13.0.0", "cuda_crt", "13.0.48"},
		{"nvvm of 13.0.0 is 13.0.48", "13.0.0", "libnvvm", "13.0.48"},
		{"cccl answers to its 13.3 name", "13.0.0", "cccl", "13.0.50"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rel, ok := CatalogRelease(tt.release)
			if !ok {
				t.Fatalf("no release %s", tt.release)
			}
			c, ok := rel.Component(tt.component)
			if !ok {
				t.Fatalf("no component %s", tt.component)
			}
			if c.Version != tt.version {
				t.Fatalf("version = %s, want %s", c.Version, tt.version)
			}
		})
	}
}

func TestCatalogLeavesOutComponentsWithoutWheels(t *testing.T) {
	rel, _ := CatalogRelease("13.0.0")
	for _, id := range []string{"nvidia_driver", "nsight_compute", "cuda_gdb", "fabricmanager", "cuda_nvprune", "cuda_documentation"} {
		if _, ok := rel.Component(id); ok {
			t.Errorf("catalog has %s, which has no wheel", id)
		}
	}
	rel12, _ := CatalogRelease("12.4.1")
	if _, ok := rel12.Component("cuda_crt"); ok {
		t.Error("catalog has cuda_crt for 12.4.1, which has no such component")
	}
}

func TestCatalogRecordsTheManifestHashAndPlatforms(t *testing.T) {
	data, err := os.ReadFile("catalog/manifests/redistrib_12.4.1.json")
	if err != nil {
		t.Fatal(err)
	}
	rel, _ := CatalogRelease("12.4.1")
	if rel.ManifestSHA256 != sha256Hex(data) {
		t.Errorf("manifest sha256 = %s, want %s", rel.ManifestSHA256, sha256Hex(data))
	}
	c, _ := rel.Component("libcufile")
	if c.OnPlatform(WindowsX86_64) || !c.OnPlatform(LinuxX86_64) {
		t.Errorf("libcufile platforms = %v, want Linux only", c.Platforms)
	}
}

func TestLatestCatalogReleaseMatchesWholeSegments(t *testing.T) {
	tests := []struct {
		name, prefix, want string
	}{
		{"a minor picks its newest patch", "12.4", "12.4.1"},
		{"a major picks its newest release", "12", "12.9.2"},
		{"a full version picks itself", "12.4.0", "12.4.0"},
		{"13.0 is its newest patch, 13.0.3", "13.0", "13.0.3"},
		{"13.0.0 is itself", "13.0.0", "13.0.0"},
		{"1 does not match 12 or 13", "1", ""},
		{"12.1 does not match 12.10", "12.1", "12.1.1"},
		{"an unknown minor matches nothing", "12.7", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rel, ok := LatestCatalogRelease(tt.prefix)
			if got := rel.Version; got != tt.want || ok != (tt.want != "") {
				t.Fatalf("LatestCatalogRelease(%q) = %q, %v; want %q", tt.prefix, got, ok, tt.want)
			}
		})
	}
}

func TestCatalogReleasesAreCopies(t *testing.T) {
	a := CatalogReleases()
	a[0].Components[0].Version = "changed"
	if CatalogReleases()[0].Components[0].Version == "changed" {
		t.Fatal("CatalogReleases shares memory with the catalog")
	}
}

func TestCudnnCatalogFindsReleasesByPrefix(t *testing.T) {
	tests := []struct {
		name, prefix, version, cudnn string
	}{
		{"a minor picks its newest patch", "9.5", "9.5.1", "9.5.1.17"},
		{"a major picks the newest", "9", "9.20.0", "9.20.0.48"},
		{"the four-part build number works", "9.5.0.50", "9.5.0", "9.5.0.50"},
		{"8.9.7 prefers the manifest with both CUDA majors", "8.9", "8.9.7", "8.9.7.29"},
		{"an unknown version matches nothing", "9.6", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rel, ok := LatestCatalogCudnn(tt.prefix)
			if ok != (tt.version != "") || rel.Version != tt.version || rel.CudnnVersion != tt.cudnn {
				t.Fatalf("LatestCatalogCudnn(%q) = %+v, %v", tt.prefix, rel, ok)
			}
		})
	}
}

func TestPlanCudnnPinsTheWheelOfTheCUDAMajor(t *testing.T) {
	tests := []struct {
		name, release string
		major         int
		want          Requirement
		err           string
	}{
		{"9.5 for CUDA 12", "9.5", 12, Requirement{Component: "cudnn", Project: "nvidia-cudnn-cu12", Version: "9.5.1.17"}, ""},
		{"9.5 for CUDA 11", "9.5", 11, Requirement{Component: "cudnn", Project: "nvidia-cudnn-cu11", Version: "9.5.1.17"}, ""},
		{"9.12 for CUDA 13 keeps the suffix", "9.12", 13, Requirement{Component: "cudnn", Project: "nvidia-cudnn-cu13", Version: "9.12.0.46"}, ""},
		{"9.12 has no CUDA 11 build", "9.12", 11, Requirement{}, "cuDNN 9.12.0 has no build for CUDA 11 (it has CUDA 12, 13)"},
		{"9.5 has no CUDA 13 build", "9.5", 13, Requirement{}, "it has CUDA 11, 12"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rel, _ := LatestCatalogCudnn(tt.release)
			got, err := PlanCudnn(rel, tt.major, LinuxX86_64)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}
