package fetch

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func ids(arts []Artifact) []string {
	var out []string
	for _, a := range arts {
		out = append(out, a.Component)
	}
	return out
}

func TestSelectProfiles(t *testing.T) {
	cases := []struct {
		name, version, platform, profile string
		want                             []string // exactly, for minimal
		mustHave, mustNot                []string
	}{
		{name: "minimal 11.8 is nvcc, cudart and cccl", version: "11.8.0", platform: "linux-x86_64", profile: "minimal",
			want: []string{"cuda_cccl", "cuda_cudart", "cuda_nvcc"}},
		{name: "minimal 12.4.1 is nvcc, cudart and cccl", version: "12.4.1", platform: "linux-x86_64", profile: "minimal",
			want: []string{"cuda_cccl", "cuda_cudart", "cuda_nvcc"}},
		{name: "minimal 13.0 adds crt and nvvm", version: "13.0.0", platform: "linux-x86_64", profile: "minimal",
			want: []string{"cuda_cccl", "cuda_crt", "cuda_cudart", "cuda_nvcc", "libnvvm"}},
		{name: "minimal 13.0 on windows too", version: "13.0.0", platform: "windows-x86_64", profile: "minimal",
			want: []string{"cuda_cccl", "cuda_crt", "cuda_cudart", "cuda_nvcc", "libnvvm"}},
		{name: "default 12.4.1 has the libraries but no driver, GUI tools or docs", version: "12.4.1", platform: "linux-x86_64", profile: "default",
			mustHave: []string{"cuda_nvcc", "libcublas", "libcufft", "cuda_nvtx", "cuda_gdb", "cuda_cupti"},
			mustNot:  []string{"nvidia_driver", "fabricmanager", "libnvidia_nscq", "nvidia_fs", "imex", "nsight_compute", "nsight_systems", "cuda_nvvp", "cuda_documentation", "cuda_nsight"}},
		{name: "default is the profile when none is named", version: "12.4.1", platform: "linux-x86_64", profile: "",
			mustHave: []string{"libcublas"}, mustNot: []string{"nsight_compute"}},
		{name: "full 12.4.1 adds GUI tools and docs but no driver", version: "12.4.1", platform: "linux-x86_64", profile: "full",
			mustHave: []string{"nsight_compute", "nsight_systems", "cuda_documentation", "cuda_nvvp"},
			mustNot:  []string{"nvidia_driver", "fabricmanager", "imex", "libnvidia_nscq"}},
		{name: "default 12.4.1 on sbsa skips what sbsa lacks", version: "12.4.1", platform: "linux-sbsa", profile: "default",
			mustHave: []string{"cuda_nvcc", "libcublas"}, mustNot: []string{"cuda_demo_suite", "cuda_opencl"}},
		{name: "default 12.4.1 on windows has no linux-only parts", version: "12.4.1", platform: "windows-x86_64", profile: "default",
			mustHave: []string{"cuda_nvcc", "cuda_demo_suite"}, mustNot: []string{"cuda_gdb", "nvidia_driver", "nsight_vse"}},
		{name: "extensions 12.4.1 is minimal plus the libraries ATen's CUDA headers include", version: "12.4.1", platform: "linux-x86_64", profile: "extensions",
			want: []string{"cuda_cccl", "cuda_cudart", "cuda_nvcc", "cuda_nvrtc", "cuda_nvtx", "cuda_profiler_api", "libcublas", "libcufft", "libcurand", "libcusolver", "libcusparse", "libnvjitlink"}},
		{name: "extensions 13.0 adds crt and nvvm and leaves the tools out", version: "13.0.0", platform: "linux-x86_64", profile: "extensions",
			mustHave: []string{"cuda_crt", "libnvvm", "cuda_nvcc", "libcublas", "libcusparse", "libcusolver", "libcurand", "libcufft"},
			mustNot:  []string{"cuda_gdb", "cuda_cupti", "nsight_compute", "libcufile", "libnpp", "nvidia_driver"}},
		{name: "full 13.0 has no driver side pieces", version: "13.0.0", platform: "linux-x86_64", profile: "full",
			mustHave: []string{"cuda_crt", "libnvvm", "nsight_compute"},
			mustNot:  []string{"nvidia_driver", "mft", "mft_oem", "mft_autocomplete", "nvlsm", "collectx_bringup", "driver_assistant", "cuda_sandbox_dev", "libnvsdm"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := readRealManifest(t, "cuda", tc.version)
			arts, err := m.Select(Selection{Platform: tc.platform, Profile: tc.profile})
			if err != nil {
				t.Fatal(err)
			}
			got := ids(arts)
			if tc.want != nil && !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
			for _, id := range tc.mustHave {
				if !slices.Contains(got, id) {
					t.Errorf("%s missing from %v", id, got)
				}
			}
			for _, id := range tc.mustNot {
				if slices.Contains(got, id) {
					t.Errorf("%s should not be selected", id)
				}
			}
			for _, a := range arts {
				if a.Platform != tc.platform {
					t.Errorf("%s is for %s", a.Component, a.Platform)
				}
			}
		})
	}
}

func TestSelectExplicitComponents(t *testing.T) {
	t.Run("cuda_cccl and cccl are aliases", func(t *testing.T) {
		m := readRealManifest(t, "cuda", "12.4.1")
		arts, err := m.Select(Selection{Platform: "linux-x86_64", Components: []string{"cccl", "cuda_nvcc"}})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ids(arts), []string{"cuda_cccl", "cuda_nvcc"}) {
			t.Errorf("got %v", ids(arts))
		}
		renamed, _ := Decode([]byte(`{"release_label":"13.3.0","cccl":{"version":"13.3.3.3.1","linux-x86_64":{"relative_path":"cccl/linux-x86_64/cccl-linux-x86_64-13.3.3.3.1-archive.tar.xz","sha256":"`+strings.Repeat("a", 64)+`","size":"5"}}}`), "13.3.0")
		arts, err = renamed.Select(Selection{Platform: "linux-x86_64", Components: []string{"cuda_cccl"}})
		if err != nil || !slices.Equal(ids(arts), []string{"cccl"}) {
			t.Errorf("got %v, %v", ids(arts), err)
		}
		arts, err = renamed.Select(Selection{Platform: "linux-x86_64", Profile: "minimal"})
		if err != nil || !slices.Equal(ids(arts), []string{"cccl"}) {
			t.Errorf("minimal: got %v, %v", ids(arts), err)
		}
	})
	t.Run("an unknown component is an error listing the available ones", func(t *testing.T) {
		m := readRealManifest(t, "cuda", "12.4.1")
		_, err := m.Select(Selection{Platform: "linux-x86_64", Components: []string{"cuda_nvcc", "cuda_warp_drive"}})
		if err == nil || !strings.Contains(err.Error(), `"cuda_warp_drive"`) || !strings.Contains(err.Error(), "libcublas") {
			t.Errorf("got %v", err)
		}
	})
	t.Run("a component not offered on the platform is an error", func(t *testing.T) {
		m := readRealManifest(t, "cuda", "12.4.1")
		_, err := m.Select(Selection{Platform: "linux-sbsa", Components: []string{"cuda_demo_suite"}})
		if err == nil || !strings.Contains(err.Error(), "not offered for linux-sbsa") || !strings.Contains(err.Error(), "linux-x86_64") {
			t.Errorf("got %v", err)
		}
	})
	t.Run("driver pieces can be asked for by name", func(t *testing.T) {
		m := readRealManifest(t, "cuda", "12.4.1")
		arts, err := m.Select(Selection{Platform: "linux-x86_64", Components: []string{"nvidia_driver"}})
		if err != nil || len(arts) != 1 {
			t.Errorf("got %v, %v", ids(arts), err)
		}
	})
	t.Run("linux-all components are found when named on linux", func(t *testing.T) {
		m, _ := Decode([]byte(`{"release_label":"12.8.0","driver_assistant":{"version":"0.1","linux-all":{"relative_path":"driver_assistant/source/driver_assistant-0.1-archive.tar.xz","sha256":"`+strings.Repeat("a", 64)+`","size":"5"}},"cuda_nvcc":{"version":"1","linux-x86_64":{"relative_path":"a/b.tar.xz","sha256":"`+strings.Repeat("a", 64)+`","size":"5"}}}`), "12.8.0")
		arts, err := m.Select(Selection{Platform: "linux-x86_64", Components: []string{"driver_assistant"}})
		if err != nil || len(arts) != 1 || arts[0].Platform != "linux-all" {
			t.Errorf("got %+v, %v", arts, err)
		}
		arts, _ = m.Select(Selection{Platform: "linux-x86_64", Profile: "full"})
		if !slices.Equal(ids(arts), []string{"cuda_nvcc"}) {
			t.Errorf("full: %v", ids(arts))
		}
	})
	t.Run("an unknown profile is an error", func(t *testing.T) {
		m := readRealManifest(t, "cuda", "12.4.1")
		if _, err := m.Select(Selection{Platform: "linux-x86_64", Profile: "huge"}); err == nil {
			t.Error("no error")
		}
	})
	t.Run("a platform nothing is offered for is an error", func(t *testing.T) {
		m := readRealManifest(t, "cuda", "13.0.0")
		if _, err := m.Select(Selection{Platform: "linux-ppc64le"}); err == nil || !strings.Contains(err.Error(), "linux-x86_64") {
			t.Errorf("got %v", err)
		}
	})
}

func TestSelectPicksTheCUDNNVariantForTheCUDAMajor(t *testing.T) {
	cases := []struct {
		name, version, platform string
		major                   int
		wantVariant             string
		wantErr                 string
	}{
		{name: "9.5.1 for CUDA 12", version: "9.5.1", platform: "linux-x86_64", major: 12, wantVariant: "cuda12"},
		{name: "9.5.1 for CUDA 11", version: "9.5.1", platform: "linux-x86_64", major: 11, wantVariant: "cuda11"},
		{name: "9.5.1 has no CUDA 13 build", version: "9.5.1", platform: "linux-x86_64", major: 13,
			wantErr: "cudnn 9.5.1.17 has no build for CUDA 13 (it has: 11, 12)"},
		{name: "9.12.0 for CUDA 13", version: "9.12.0", platform: "linux-x86_64", major: 13, wantVariant: "cuda13"},
		{name: "9.12.0 dropped CUDA 11", version: "9.12.0", platform: "linux-x86_64", major: 11,
			wantErr: "has no build for CUDA 11 (it has: 12, 13)"},
		{name: "no major with two variants asks for one", version: "9.5.1", platform: "linux-x86_64", major: 0,
			wantErr: "choose one (it has: 11, 12)"},
		{name: "the old flat 8.9.7.29 needs no variant", version: "8.9.7.29", platform: "linux-x86_64", major: 12, wantVariant: ""},
		{name: "windows 9.5.1 for CUDA 12", version: "9.5.1", platform: "windows-x86_64", major: 12, wantVariant: "cuda12"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := readRealManifest(t, "cudnn", tc.version)
			arts, err := m.Select(Selection{Platform: tc.platform, Components: []string{"cudnn"}, CUDAMajor: tc.major})
			if tc.wantErr != "" {
				var ve *VariantError
				if !errors.As(err, &ve) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want a VariantError containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(arts) != 1 || arts[0].Variant != tc.wantVariant {
				t.Fatalf("got %+v", arts)
			}
			if tc.wantVariant != "" && !strings.Contains(arts[0].RelativePath, "_"+tc.wantVariant+"-archive") {
				t.Errorf("path %s", arts[0].RelativePath)
			}
		})
	}
	t.Run("profiles on a cuDNN manifest pick cudnn and skip source-only samples", func(t *testing.T) {
		m := readRealManifest(t, "cudnn", "9.12.0")
		arts, err := m.Select(Selection{Platform: "linux-x86_64", Profile: "minimal", CUDAMajor: 12})
		if err != nil || !slices.Equal(ids(arts), []string{"cudnn"}) {
			t.Errorf("minimal: %v %v", ids(arts), err)
		}
		arts, err = m.Select(Selection{Platform: "linux-x86_64", Profile: "default", CUDAMajor: 12})
		if err != nil || slices.Contains(ids(arts), "cudnn_samples") || !slices.Contains(ids(arts), "cudnn") {
			t.Errorf("default: %v %v", ids(arts), err)
		}
	})
	t.Run("a flat artifact next to variants counts as the variant its name says", func(t *testing.T) {
		raw := `{"release_label":"9.27.0","cudnn":{"version":"9.27.0.41","cuda_variant":["13"],
		"windows-arm64":{"cuda13":{"relative_path":"cudnn/windows-arm64/cudnn-windows-arm64-9.27.0.41_cuda13-archive.zip","sha256":"` + strings.Repeat("a", 64) + `","size":"10"},
		"relative_path":"cudnn/windows-arm64/cudnn-windows-arm64-9.27.0.41_cuda14.1-archive.zip","sha256":"` + strings.Repeat("b", 64) + `","size":"11"}}}`
		m, _ := Decode([]byte(raw), "9.27.0")
		for major, want := range map[int]string{13: "cuda13", 14: "cuda14.1"} {
			arts, err := m.Select(Selection{Platform: "windows-arm64", Components: []string{"cudnn"}, CUDAMajor: major})
			if err != nil || arts[0].Variant != want {
				t.Errorf("CUDA %d: got %+v, %v", major, arts, err)
			}
		}
		_, err := m.Select(Selection{Platform: "windows-arm64", Components: []string{"cudnn"}, CUDAMajor: 12})
		if err == nil || !strings.Contains(err.Error(), "(it has: 13, 14.1)") {
			t.Errorf("got %v", err)
		}
	})
}

func TestHostPlatform(t *testing.T) {
	cases := []struct{ goos, goarch, want string }{
		{"linux", "amd64", "linux-x86_64"},
		{"linux", "arm64", "linux-sbsa"},
		{"windows", "amd64", "windows-x86_64"},
		{"windows", "arm64", "windows-arm64"},
		{"darwin", "arm64", ""},
		{"linux", "386", ""},
	}
	for _, tc := range cases {
		got, err := HostPlatform(tc.goos, tc.goarch)
		if got != tc.want || (tc.want == "") != (err != nil) {
			t.Errorf("HostPlatform(%s, %s) = %q, %v", tc.goos, tc.goarch, got, err)
		}
	}
}
