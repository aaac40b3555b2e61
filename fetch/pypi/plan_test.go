package pypi

import (
	"errors"
	"strings"
	"testing"
)

func TestProjectNamesFollowNVIDIAsScheme(t *testing.T) {
	tests := []struct {
		component string
		major     int
		want      string
	}{
		{"cuda_nvcc", 12, "nvidia-cuda-nvcc-cu12"},
		{"cuda_cudart", 12, "nvidia-cuda-runtime-cu12"},
		{"cuda_cudart", 11, "nvidia-cuda-runtime-cu11"},
		{"cuda_nvrtc", 12, "nvidia-cuda-nvrtc-cu12"},
		{"cuda_cupti", 12, "nvidia-cuda-cupti-cu12"},
		{"cuda_cccl", 12, "nvidia-cuda-cccl-cu12"},
		{"libcublas", 12, "nvidia-cublas-cu12"},
		{"libnvjitlink", 12, "nvidia-nvjitlink-cu12"},
		{"cuda_nvtx", 12, "nvidia-nvtx-cu12"},
		{"cuda_nvml_dev", 12, "nvidia-nvml-dev-cu12"},
		{"cuda_nvcc", 13, "nvidia-cuda-nvcc"},
		{"cuda_cudart", 13, "nvidia-cuda-runtime"},
		{"libcublas", 13, "nvidia-cublas"},
		{"cuda_crt", 13, "nvidia-cuda-crt"},
		{"libnvvm", 13, "nvidia-nvvm"},
		{"cuda_cccl", 13, "nvidia-cuda-cccl"},
		{"cccl", 13, "nvidia-cuda-cccl"},
		{"cudnn", 12, "nvidia-cudnn-cu12"},
		{"cudnn", 13, "nvidia-cudnn-cu13"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			got, err := Project(tt.component, tt.major)
			if err != nil || got != tt.want {
				t.Fatalf("Project(%s, %d) = %q, %v; want %q", tt.component, tt.major, got, err, tt.want)
			}
		})
	}
}

func TestProjectRefusesComponentsWithoutWheels(t *testing.T) {
	tests := []struct {
		component string
		major     int
	}{
		{"cuda_crt", 12},
		{"libnvvm", 12},
		{"nvidia_driver", 12},
		{"nsight_compute", 13},
		{"cuda_nvprune", 12},
		{"libcufile", 11},
	}
	for _, tt := range tests {
		t.Run(tt.component, func(t *testing.T) {
			if got, err := Project(tt.component, tt.major); err == nil {
				t.Fatalf("Project(%s, %d) = %q, want an error", tt.component, tt.major, got)
			}
		})
	}
}

func componentsOf(reqs []Requirement) string {
	var ids []string
	for _, r := range reqs {
		ids = append(ids, r.Component)
	}
	return strings.Join(ids, ",")
}

func TestPlanMinimalForCUDA13PinsTheCompilerWheels(t *testing.T) {
	rel, _ := CatalogRelease("13.0.0")
	reqs, err := Plan(rel, LinuxX86_64, Selection{Profile: ProfileMinimal})
	if err != nil {
		t.Fatal(err)
	}
	want := []Requirement{
		{Component: "cuda_cccl", Project: "nvidia-cuda-cccl", Version: "13.0.50"},
		{Component: "cuda_crt", Project: "nvidia-cuda-crt", Version: "13.0.48"},
		{Component: "cuda_cudart", Project: "nvidia-cuda-runtime", Version: "13.0.48"},
		{Component: "cuda_nvcc", Project: "nvidia-cuda-nvcc", Version: "13.0.48"},
		{Component: "libnvvm", Project: "nvidia-nvvm", Version: "13.0.48"},
	}
	if len(reqs) != len(want) {
		t.Fatalf("got %+v", reqs)
	}
	for i := range want {
		if reqs[i] != want[i] {
			t.Errorf("req %d = %+v, want %+v", i, reqs[i], want[i])
		}
	}
}

func TestPlanRefusesMinimalForCUDA12WithTheReason(t *testing.T) {
	for _, version := range []string{"12.4.1", "11.8.0"} {
		t.Run(version, func(t *testing.T) {
			rel, _ := CatalogRelease(version)
			_, err := Plan(rel, LinuxX86_64, Selection{Profile: ProfileMinimal})
			var nc *NoCompilerError
			if !errors.As(err, &nc) {
				t.Fatalf("err = %v, want *NoCompilerError", err)
			}
			msg := err.Error()
			for _, part := range []string{"no nvcc, only ptxas", "--profile default", "--components", "cudaenv install 13 --source pypi --profile minimal"} {
				if !strings.Contains(msg, part) {
					t.Errorf("message lacks %q: %s", part, msg)
				}
			}
			// Only PyPI users see it: it never sends them to NVIDIA's server.
			if strings.Contains(msg, "--source nvidia") {
				t.Errorf("message points at NVIDIA's server: %s", msg)
			}
		})
	}
}

func TestPlanLibrariesOnlyWorksForCUDA12(t *testing.T) {
	rel, _ := CatalogRelease("12.4.1")
	reqs, err := Plan(rel, LinuxX86_64, Selection{Components: []string{"cuda_cudart", "libcublas", "libcublas", " libnvjitlink "}})
	if err != nil {
		t.Fatal(err)
	}
	if got := componentsOf(reqs); got != "cuda_cudart,libcublas,libnvjitlink" {
		t.Fatalf("components = %s", got)
	}
	if reqs[0].Project != "nvidia-cuda-runtime-cu12" || reqs[0].Version != "12.4.127" || reqs[0].Optional {
		t.Fatalf("cudart = %+v", reqs[0])
	}
}

func TestPlanDefaultTakesEveryWheelOfthePlatformAsOptional(t *testing.T) {
	tests := []struct {
		name, release, platform string
		has, lacks              []string
	}{
		{"12.4.1 on linux", "12.4.1", LinuxX86_64, []string{"cuda_nvcc", "cuda_cudart", "libcublas", "libcufile", "cuda_cccl"}, []string{"cuda_crt", "nvidia_driver"}},
		{"12.4.1 on windows has no cufile", "12.4.1", WindowsX86_64, []string{"cuda_cudart", "libcublas"}, []string{"libcufile"}},
		{"13.0.0 on sbsa", "13.0.0", LinuxSBSA, []string{"cuda_nvcc", "cuda_crt", "libnvvm", "cuda_cccl", "libcublas"}, []string{"cuda_gdb"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rel, _ := CatalogRelease(tt.release)
			for _, profile := range []string{"", ProfileDefault, ProfileFull} {
				reqs, err := Plan(rel, tt.platform, Selection{Profile: profile})
				if err != nil {
					t.Fatal(err)
				}
				got := "," + componentsOf(reqs) + ","
				for _, c := range tt.has {
					if !strings.Contains(got, ","+c+",") {
						t.Errorf("profile %q lacks %s: %s", profile, c, got)
					}
				}
				for _, c := range tt.lacks {
					if strings.Contains(got, ","+c+",") {
						t.Errorf("profile %q has %s: %s", profile, c, got)
					}
				}
				for _, r := range reqs {
					if !r.Optional {
						t.Errorf("%s is not optional", r.Component)
					}
				}
			}
		})
	}
}

func TestPlanNamesEveryBadComponent(t *testing.T) {
	rel, _ := CatalogRelease("12.4.1")
	_, err := Plan(rel, LinuxX86_64, Selection{Components: []string{"cuda_cudart", "nope", "nsight_compute", "cuda_crt"}})
	if err == nil {
		t.Fatal("no error")
	}
	for _, part := range []string{"nope is not a component of CUDA 12.4.1", "nsight_compute", "cuda_crt"} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error lacks %q: %v", part, err)
		}
	}
}

func TestPlanRefusesAComponentNotOfferedForThePlatform(t *testing.T) {
	rel, _ := CatalogRelease("12.4.1")
	_, err := Plan(rel, WindowsX86_64, Selection{Components: []string{"libcufile"}})
	if err == nil || !strings.Contains(err.Error(), "not offered for windows-x86_64") {
		t.Fatalf("err = %v", err)
	}
}

func TestPlanRefusesUnknownProfilesAndPlatforms(t *testing.T) {
	rel, _ := CatalogRelease("13.0.0")
	if _, err := Plan(rel, LinuxX86_64, Selection{Profile: "huge"}); err == nil || !strings.Contains(err.Error(), `unknown profile "huge"`) {
		t.Errorf("profile: err = %v", err)
	}
	if _, err := Plan(rel, "linux-ppc64le", Selection{}); err == nil || !strings.Contains(err.Error(), "linux-ppc64le") {
		t.Errorf("platform: err = %v", err)
	}
}

func TestPlanAcceptsALiveManifestRelease(t *testing.T) {
	rel := Release{Version: "13.3.0", Components: []Component{
		{ID: "cuda_nvcc", Version: "13.3.33"}, {ID: "cuda_cudart", Version: "13.3.29"},
		{ID: "cccl", Version: "13.3.3.3.1"}, {ID: "cuda_crt", Version: "13.3.33"}, {ID: "libnvvm", Version: "13.3.33"},
	}}
	reqs, err := Plan(rel, LinuxX86_64, Selection{Profile: ProfileMinimal})
	if err != nil {
		t.Fatal(err)
	}
	if got := componentsOf(reqs); got != "cccl,cuda_crt,cuda_cudart,cuda_nvcc,libnvvm" {
		t.Fatalf("components = %s", got)
	}
	if reqs[0].Project != "nvidia-cuda-cccl" || reqs[0].Version != "13.3.3.3.1" {
		t.Fatalf("cccl = %+v", reqs[0])
	}
}

func TestPlanExtensionsIsWhatFrameworkExtensionsBuildAgainst(t *testing.T) {
	tests := []struct {
		name, release string
		want          string
	}{
		{"CUDA 13 brings nvcc, crt and nvvm with the libraries", "13.0.0",
			"cuda_cccl,cuda_crt,cuda_cudart,cuda_nvcc,cuda_nvrtc,cuda_nvtx,cuda_profiler_api,libcublas,libcufft,libcurand,libcusolver,libcusparse,libnvjitlink,libnvvm"},
		{"CUDA 12 is not refused for its missing nvcc: libraries and headers", "12.4.1",
			"cuda_cccl,cuda_cudart,cuda_nvcc,cuda_nvrtc,cuda_nvtx,cuda_profiler_api,libcublas,libcufft,libcurand,libcusolver,libcusparse,libnvjitlink"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rel, _ := CatalogRelease(tt.release)
			reqs, err := Plan(rel, LinuxX86_64, Selection{Profile: ProfileExtensions})
			if err != nil {
				t.Fatal(err)
			}
			if got := componentsOf(reqs); got != tt.want {
				t.Errorf("components = %s\nwant         %s", got, tt.want)
			}
			for _, r := range reqs {
				if !r.Optional {
					t.Errorf("%s is not optional: a missing wheel would fail the install", r.Component)
				}
			}
		})
	}
}
