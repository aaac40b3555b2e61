package detect

import (
	"context"
	"reflect"
	"strings"
	"testing"
)

const (
	procProprietary = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\nGCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)\n"
	procOpen        = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.195.03  Release Build  (dvs-builder@U22-I3-H04-03-1)  Sat Sep 20 00:47:16 UTC 2025\nGCC version:  gcc version 12.3.0\n"
	procTwoPart     = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.142  Release Build  (dvs-builder@U22-I3-AD05-51-5)  Tue Mar  3 19:14:46 UTC 2026\n"
	procJetson      = "NVRM version: NVIDIA UNIX Kernel Module for aarch64  34.1.1  Release Build  (buildbrain@mobile-u64-5414-d7000)  Mon May 16 21:12:24 PDT 2022\n"
	smiH200x2       = "550.54.15, NVIDIA H200, 9.0\n550.54.15, NVIDIA H200, 9.0\n"
)

var smiNew = "nvidia-smi --query-gpu=driver_version,name,compute_cap --format=csv,noheader"

func TestDriver(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		env     map[string]string
		answers map[string]result
		want    Driver
	}{
		{
			name:  "the environment override wins over everything",
			files: map[string]string{"sys/module/nvidia/version": "550.54.15\n"},
			env:   map[string]string{"CUDAENV_DRIVER_VERSION": "535.104.05"},
			want:  Driver{Version: "535.104.05", Source: "CUDAENV_DRIVER_VERSION"},
		},
		{
			name: "the override can say there is no driver",
			env:  map[string]string{"CUDAENV_DRIVER_VERSION": "none"},
			want: Driver{Source: "CUDAENV_DRIVER_VERSION", Detail: "CUDAENV_DRIVER_VERSION=none"},
		},
		{
			name: "a malformed override is reported, not used",
			env:  map[string]string{"CUDAENV_DRIVER_VERSION": "latest"},
			want: Driver{Source: "CUDAENV_DRIVER_VERSION", Detail: `CUDAENV_DRIVER_VERSION="latest" is not a driver version like 550.54.15`},
		},
		{
			name:  "the loaded module's version comes from /sys",
			files: map[string]string{"sys/module/nvidia/version": "550.54.15\n", "proc/driver/nvidia/version": procOpen},
			want:  Driver{Version: "550.54.15", Source: SysModuleVersion, Open: true},
		},
		{
			name:  "the proprietary module's /proc line is parsed",
			files: map[string]string{"proc/driver/nvidia/version": procProprietary},
			want:  Driver{Version: "550.54.15", Source: ProcDriverFile},
		},
		{
			name:  "the open module's /proc line is parsed",
			files: map[string]string{"proc/driver/nvidia/version": procOpen},
			want:  Driver{Version: "570.195.03", Source: ProcDriverFile, Open: true},
		},
		{
			name:  "a Jetson reports its L4T release, not a driver version",
			files: map[string]string{"proc/driver/nvidia/version": procJetson},
			want:  Driver{Tegra: "34.1.1", Source: ProcDriverFile, Detail: "Jetson (L4T 34.1.1): the driver comes with the board support package"},
		},
		{
			name:    "without /sys and /proc nvidia-smi on PATH answers",
			files:   map[string]string{"usr/bin/nvidia-smi*": ""},
			env:     map[string]string{"PATH": "/usr/bin"},
			answers: map[string]result{"/usr/bin/" + smiNew: {out: smiH200x2}},
			want:    Driver{Version: "550.54.15", Source: "/usr/bin/nvidia-smi"},
		},
		{
			name:    "WSL has only /usr/lib/wsl/lib/nvidia-smi",
			files:   map[string]string{"usr/lib/wsl/lib/nvidia-smi*": "", "usr/bin/": ""},
			env:     map[string]string{"PATH": "/usr/bin"},
			answers: map[string]result{"/usr/lib/wsl/lib/" + smiNew: {out: "560.35.02, NVIDIA GeForce RTX 4090, 8.9\n"}},
			want:    Driver{Version: "560.35.02", Source: WSLNvidiaSMI},
		},
		{
			name: "no GPU at all is a normal answer",
			env:  map[string]string{"PATH": "/usr/bin"},
			want: Driver{Detail: "no NVIDIA kernel module loaded and no nvidia-smi found"},
		},
		{
			name:  "nvidia-smi without a loaded driver says why",
			files: map[string]string{"usr/bin/nvidia-smi*": ""},
			env:   map[string]string{"PATH": "/usr/bin"},
			answers: map[string]result{"/usr/bin/" + smiNew: {err: true,
				out: "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n"}},
			want: Driver{Detail: "/usr/bin/nvidia-smi: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running."},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeRunner{answers: tt.answers}
			h := Host{Root: fakeRoot(t, tt.files), Env: tt.env, Run: f.run}
			if got := h.Driver(context.Background()); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Driver() =\n %+v\nwant\n %+v", got, tt.want)
			}
		})
	}
}

func TestParseProcVersionReadsATwoPartVersion(t *testing.T) {
	d, ok := ParseProcVersion([]byte(procTwoPart))
	if !ok || d.Version != "580.142" || !d.Open {
		t.Errorf("ParseProcVersion = %+v, %v", d, ok)
	}
	if _, ok := ParseProcVersion([]byte("garbage\n")); ok {
		t.Error("garbage parsed")
	}
}

func TestGPUs(t *testing.T) {
	smiOld := "nvidia-smi --query-gpu=driver_version,name --format=csv,noheader"
	tests := []struct {
		name    string
		answers map[string]result
		want    []GPU
		wantErr string
	}{
		{
			name:    "several GPUs give one line each",
			answers: map[string]result{"/usr/bin/" + smiNew: {out: "550.54.15, NVIDIA H200, 9.0\n550.54.15, NVIDIA H200, 9.0\n550.54.15, NVIDIA L40S, 8.9\n"}},
			want: []GPU{
				{Index: 0, Name: "NVIDIA H200", ComputeCap: "9.0", Driver: "550.54.15"},
				{Index: 1, Name: "NVIDIA H200", ComputeCap: "9.0", Driver: "550.54.15"},
				{Index: 2, Name: "NVIDIA L40S", ComputeCap: "8.9", Driver: "550.54.15"},
			},
		},
		{
			name: "an nvidia-smi without compute_cap is asked again without it",
			answers: map[string]result{
				"/usr/bin/" + smiNew: {err: true, out: "Field \"compute_cap\" is not a valid field to query.\n"},
				"/usr/bin/" + smiOld: {out: "470.82.01, Tesla V100-SXM2-16GB\n"},
			},
			want: []GPU{{Index: 0, Name: "Tesla V100-SXM2-16GB", Driver: "470.82.01"}},
		},
		{
			name:    "a machine whose GPUs are gone lists none",
			answers: map[string]result{"/usr/bin/" + smiNew: {err: true, out: "No devices were found\n"}},
		},
		{
			name:    "an unreadable line is an error",
			answers: map[string]result{"/usr/bin/" + smiNew: {out: "Failed to initialize NVML: Driver/library version mismatch\n"}},
			wantErr: `/usr/bin/nvidia-smi: unexpected line "Failed to initialize NVML: Driver/library version mismatch"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeRunner{answers: tt.answers}
			h := Host{Root: fakeRoot(t, map[string]string{"usr/bin/nvidia-smi*": ""}), Env: map[string]string{"PATH": "/usr/bin"}, Run: f.run}
			got, err := h.GPUs(context.Background())
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("GPUs() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestGPUsWithoutNvidiaSMIIsNoGPUs(t *testing.T) {
	h := Host{Root: t.TempDir(), Env: map[string]string{"PATH": "/usr/bin"}}
	got, err := h.GPUs(context.Background())
	if err != nil || got != nil {
		t.Errorf("GPUs() = %v, %v", got, err)
	}
}

func TestParseSMIToleratesNAAndCommasInNames(t *testing.T) {
	got, err := ParseSMI([]byte("575.57.08, NVIDIA RTX PRO 6000 Blackwell, Server Edition, 12.0\r\n575.57.08, NVIDIA GRID A100-4C, [N/A]\r\n"), true)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Name != "NVIDIA RTX PRO 6000 Blackwell, Server Edition" || got[0].ComputeCap != "12.0" || got[1].ComputeCap != "" {
		t.Errorf("ParseSMI = %+v", got)
	}
	if _, err := ParseSMI([]byte("550.54.15, NVIDIA H200, nine\n"), true); err == nil || !strings.Contains(err.Error(), "compute capability") {
		t.Errorf("err = %v", err)
	}
}
