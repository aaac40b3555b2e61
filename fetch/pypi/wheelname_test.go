package pypi

import (
	"slices"
	"testing"
)

func TestParseWheelNameSplitsTheParts(t *testing.T) {
	tests := []struct {
		name     string
		filename string
		want     WheelName
	}{
		{"a CUDA 12 wheel with one platform tag", "nvidia_cuda_runtime_cu12-12.4.127-py3-none-manylinux2014_x86_64.whl",
			WheelName{Project: "nvidia-cuda-runtime-cu12", Version: "12.4.127", Python: []string{"py3"}, ABI: []string{"none"}, Platforms: []string{"manylinux2014_x86_64"}}},
		{"a CUDA 13 wheel with a compressed platform tag set", "nvidia_cuda_nvcc-13.0.48-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",
			WheelName{Project: "nvidia-cuda-nvcc", Version: "13.0.48", Python: []string{"py3"}, ABI: []string{"none"}, Platforms: []string{"manylinux2014_x86_64", "manylinux_2_17_x86_64"}}},
		{"a wheel with a build tag", "pkg-1.0-1build-cp312.cp313-abi3-win_amd64.whl",
			WheelName{Project: "pkg", Version: "1.0", Build: "1build", Python: []string{"cp312", "cp313"}, ABI: []string{"abi3"}, Platforms: []string{"win_amd64"}}},
		{"a post release", "nvidia_cuda_cccl_cu12-12.4.127.post1-py3-none-manylinux2014_aarch64.whl",
			WheelName{Project: "nvidia-cuda-cccl-cu12", Version: "12.4.127.post1", Python: []string{"py3"}, ABI: []string{"none"}, Platforms: []string{"manylinux2014_aarch64"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseWheelName(tt.filename)
			if err != nil {
				t.Fatal(err)
			}
			if got.Project != tt.want.Project || got.Version != tt.want.Version || got.Build != tt.want.Build ||
				!slices.Equal(got.Python, tt.want.Python) || !slices.Equal(got.ABI, tt.want.ABI) || !slices.Equal(got.Platforms, tt.want.Platforms) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseWheelNameRefusesNonWheels(t *testing.T) {
	for _, name := range []string{
		"nvidia-cuda-runtime-cu12-0.0.1.dev5.tar.gz",
		"pkg-1.0-py3-none.whl",
		"pkg-1.0-x-py3-none-any.whl",
		"pkg-1.0--py3-none-any.whl",
		"a-b-c-d-e-f-g.whl",
		".whl",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := ParseWheelName(name); err == nil {
				t.Fatal("parsed without error")
			}
		})
	}
}

func TestNormalizeProjectFollowsPEP503(t *testing.T) {
	tests := map[string]string{
		"nvidia_cuda_runtime_cu12": "nvidia-cuda-runtime-cu12",
		"Nvidia.CUDA--Runtime":     "nvidia-cuda-runtime",
		"nvidia-cudnn-cu13":        "nvidia-cudnn-cu13",
		"a._-b":                    "a-b",
	}
	for in, want := range tests {
		if got := NormalizeProject(in); got != want {
			t.Errorf("NormalizeProject(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSameVersionComparesReleasesByValue(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		want bool
	}{
		{"identical", "12.4.127", "12.4.127", true},
		{"missing trailing zero", "13.0", "13.0.0", true},
		{"leading zeros", "12.04.127", "12.4.127", true},
		{"different patch", "12.4.127", "12.4.131", false},
		{"a post release is not the release", "12.4.127.post1", "12.4.127", false},
		{"post spellings agree", "1.0.post1", "1.0-1", true},
		{"a pre-release is not the release", "13.4.46rc1", "13.4.46", false},
		{"non-PEP 440 text compares as text", "Weird", "weird", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SameVersion(tt.a, tt.b); got != tt.want {
				t.Fatalf("SameVersion(%q, %q) = %v", tt.a, tt.b, got)
			}
		})
	}
}

func TestCompareVersionsOrdersDevPreFinalPost(t *testing.T) {
	in := []string{"13.4.49", "12.4.127.post1", "13.4.46rc1", "12.4.127", "13.4.46", "13.4.46.dev1", "12.10.0", "12.9.0", "junk"}
	want := []string{"12.4.127", "12.4.127.post1", "12.9.0", "12.10.0", "13.4.46.dev1", "13.4.46rc1", "13.4.46", "13.4.49", "junk"}
	got := slices.Clone(in)
	slices.SortFunc(got, compareVersions)
	if !slices.Equal(got, want) {
		t.Fatalf("sorted = %v\nwant     %v", got, want)
	}
}

func TestIsPostOfAcceptsOnlyPostReleasesOfTheSameRelease(t *testing.T) {
	tests := []struct {
		name    string
		v, base string
		want    bool
	}{
		{"post1 of the release", "12.4.127.post1", "12.4.127", true},
		{"the release itself", "12.4.127", "12.4.127", false},
		{"post of another release", "12.4.99.post1", "12.4.127", false},
		{"post dev release", "12.4.127.post1.dev0", "12.4.127", false},
		{"base already a post release", "12.4.127.post2", "12.4.127.post1", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := isPostOf(tt.v, tt.base); got != tt.want {
				t.Fatalf("isPostOf(%q, %q) = %v", tt.v, tt.base, got)
			}
		})
	}
}
