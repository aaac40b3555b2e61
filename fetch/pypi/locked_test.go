package pypi

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckLockedWheelTakesOnlyTheComponentsProject(t *testing.T) {
	tests := []struct {
		name, component string
		major           int
		version, plat   string
		file            string
		want            string // "" for accepted; else part of the error
	}{
		{"nvcc's own wheel is accepted", "cuda_nvcc", 12, "12.4.131", "linux-x86_64",
			"nvidia_cuda_nvcc_cu12-12.4.131-py3-none-manylinux2014_x86_64.whl", ""},
		{"a post-release of the locked version is accepted", "cuda_cccl", 12, "12.4.127", "linux-sbsa",
			"nvidia_cuda_cccl_cu12-12.4.127.post1-py3-none-manylinux2014_aarch64.whl", ""},
		{"CUDA 13 drops the -cu suffix", "cuda_nvcc", 13, "13.0.48", "windows-x86_64",
			"nvidia_cuda_nvcc-13.0.48-py3-none-win_amd64.whl", ""},
		{"another project's upload is refused", "cuda_nvcc", 12, "12.4.131", "linux-x86_64",
			"totally_legit_pkg-12.4.131-py3-none-manylinux2014_x86_64.whl", "cuda_nvcc: file totally_legit_pkg-12.4.131-py3-none-manylinux2014_x86_64.whl is not a wheel of nvidia-cuda-nvcc-cu12"},
		{"another component's wheel is refused", "cuda_nvcc", 12, "12.4.127", "linux-x86_64",
			"nvidia_cuda_runtime_cu12-12.4.127-py3-none-manylinux2014_x86_64.whl", "is not a wheel of nvidia-cuda-nvcc-cu12"},
		{"the wheel of another CUDA major is refused", "cuda_nvcc", 12, "13.0.48", "linux-x86_64",
			"nvidia_cuda_nvcc-13.0.48-py3-none-manylinux_2_27_x86_64.whl", "is not a wheel of nvidia-cuda-nvcc-cu12"},
		{"a name that only looks like the project is refused", "cuda_nvcc", 12, "12.4.131", "linux-x86_64",
			"nvidia_cuda_nvcc_cu12_evil-12.4.131-py3-none-manylinux2014_x86_64.whl", "is not a wheel of nvidia-cuda-nvcc-cu12"},
		{"another version than the lock's is refused", "cuda_nvcc", 12, "12.4.131", "linux-x86_64",
			"nvidia_cuda_nvcc_cu12-12.6.85-py3-none-manylinux2014_x86_64.whl", "its version is 12.6.85, the lock's 12.4.131"},
		{"a wheel for another platform is refused", "cuda_nvcc", 12, "12.4.131", "linux-x86_64",
			"nvidia_cuda_nvcc_cu12-12.4.131-py3-none-win_amd64.whl", "not built for linux-x86_64"},
		{"a name that is not a wheel is refused", "cudnn", 12, "9.5.1.17", "linux-x86_64",
			"nvidia_cudnn_cu12-9.5.1.17.tar.gz", "is not a wheel of nvidia-cudnn-cu12"},
		{"a component without wheels is refused", "nsight_compute", 12, "2024.1.1.4", "linux-x86_64",
			"nsight_compute-2024.1.1.4-py3-none-manylinux2014_x86_64.whl", "has no wheel on PyPI for CUDA 12"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			project, err := CheckLockedWheel(tt.component, tt.major, tt.version, tt.plat, tt.file)
			if tt.want == "" {
				if err != nil || !strings.HasPrefix(tt.file, strings.ReplaceAll(project, "-", "_")+"-") {
					t.Fatalf("project %q, err %v", project, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestExtractPlannedWheelChecksItsMetadata(t *testing.T) {
	meta := func(dist, body string) zipEntry {
		return zipEntry{name: dist + ".dist-info/METADATA", body: body}
	}
	nvcc := zipEntry{name: "nvidia/cuda_nvcc/bin/ptxas", mode: 0o755, body: "#!/bin/sh\n"}
	good := "Metadata-Version: 2.1\nName: nvidia-cuda-nvcc-cu12\nVersion: 12.4.131\n\nName: evil\n"
	tests := []struct {
		name    string
		entries []zipEntry
		want    string // "" for extracted
	}{
		{"the planned project and version are extracted", []zipEntry{nvcc, meta("nvidia_cuda_nvcc_cu12-12.4.131", good)}, ""},
		{"the name may be written in another PEP 503 form", []zipEntry{nvcc, meta("nvidia_cuda_nvcc_cu12-12.4.131", "Name: NVIDIA_cuda.nvcc-cu12\r\nVersion: 12.4.131\r\n")}, ""},
		{"another project is refused", []zipEntry{nvcc, meta("totally_legit_pkg-12.4.131", "Name: totally-legit-pkg\nVersion: 12.4.131\n")},
			`its METADATA says it is "totally-legit-pkg" "12.4.131"; refusing it`},
		{"another version is refused", []zipEntry{nvcc, meta("nvidia_cuda_nvcc_cu12-12.6.85", "Name: nvidia-cuda-nvcc-cu12\nVersion: 12.6.85\n")},
			`its METADATA says it is "nvidia-cuda-nvcc-cu12" "12.6.85"`},
		{"a wheel without METADATA is refused", []zipEntry{nvcc}, "no .dist-info/METADATA"},
		{"two METADATA files are refused", []zipEntry{nvcc, meta("a-1", good), meta("b-1", good)}, "more than one .dist-info/METADATA"},
		{"two Name fields are refused", []zipEntry{nvcc, meta("a-1", "Name: nvidia-cuda-nvcc-cu12\nName: evil\nVersion: 12.4.131\n")}, "two Name fields"},
		{"a name with terminal escapes is shown quoted", []zipEntry{nvcc, meta("a-1", "Name: \x1b[31mred\nVersion: 1\n")}, `"\x1b[31mred"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := buildZip(t, tt.entries...)
			dest := t.TempDir()
			err := ExtractPlannedWheel(context.Background(), bytes.NewReader(data), int64(len(data)), dest, "nvidia-cuda-nvcc-cu12", "12.4.131")
			_, statErr := os.Stat(filepath.Join(dest, "bin", "ptxas"))
			if tt.want == "" {
				if err != nil || statErr != nil {
					t.Fatalf("err %v, ptxas %v", err, statErr)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if !errors.Is(statErr, os.ErrNotExist) {
				t.Errorf("extracted a refused wheel (%v)", statErr)
			}
		})
	}
}

func TestWheelForNamesTheProjectAndPlatform(t *testing.T) {
	tests := []struct {
		name, file, project, platform string
		want                          bool
	}{
		{"the project's wheel for the platform", "nvidia_cuda_nvcc-13.0.88-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl", "nvidia-cuda-nvcc", "linux-x86_64", true},
		{"the project's wheel for another platform", "nvidia_cuda_nvcc-13.0.88-py3-none-win_amd64.whl", "nvidia-cuda-nvcc", "linux-x86_64", false},
		{"another project's wheel", "totally_legit_pkg-13.0.88-py3-none-manylinux2014_x86_64.whl", "nvidia-cuda-nvcc", "linux-x86_64", false},
		{"not a wheel", "nvidia_cuda_nvcc-13.0.88.tar.gz", "nvidia-cuda-nvcc", "linux-x86_64", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := WheelFor(tt.file, tt.project, tt.platform); got != tt.want {
				t.Errorf("WheelFor(%s) = %v", tt.file, got)
			}
		})
	}
}
