package doctor

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/cudaenv/cudaenv/internal/detect"
)

func TestExitCode(t *testing.T) {
	tests := []struct {
		name     string
		statuses []Status
		want     int
	}{
		{"all ok is 0", []Status{OK, OK}, 0},
		{"skips do not count", []Status{OK, Skip}, 0},
		{"only skips is still 0", []Status{Skip}, 0},
		{"a warning is 1", []Status{OK, Warn, Skip}, 1},
		{"a failure is 2 even after warnings", []Status{Warn, Fail, OK}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r Report
			for _, s := range tt.statuses {
				r.Add(Check{ID: "x", Status: s})
			}
			if got := r.ExitCode(); got != tt.want {
				t.Errorf("ExitCode() = %d (status %q), want %d", got, r.Status, tt.want)
			}
		})
	}
}

func TestScenarioExitCodes(t *testing.T) {
	want := map[string]int{
		"all-good": 0, "no-gpu": 0, "old-driver": 2, "driver-minor-compat": 1, "launch-blocking": 1,
		"shadowed-nvcc": 2, "wrong-cudnn-variant": 2, "unsupported-gcc": 2, "torch-cu118": 2,
		"gpu-newer-than-toolkit": 1, "nothing-selected": 1, "empty-visible-devices": 2,
	}
	s := scenarios()
	for name, code := range want {
		if got := Run(s[name]).ExitCode(); got != code {
			t.Errorf("%s: exit code %d, want %d", name, got, code)
		}
	}
}

func TestPlainTextIsASCII(t *testing.T) {
	for name, in := range scenarios() {
		var b bytes.Buffer
		if err := WriteText(&b, Run(in), Plain); err != nil {
			t.Fatal(err)
		}
		for i, r := range b.String() {
			if r > 127 {
				t.Errorf("%s: non-ASCII %q at byte %d", name, r, i)
				break
			}
		}
	}
}

func TestWriteJSONOfAnEmptyReport(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, Report{}); err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), "{\n  \"status\": \"ok\",\n  \"checks\": []\n}\n"; got != want {
		t.Errorf("WriteJSON = %q, want %q", got, want)
	}
}

func TestDriverWarning(t *testing.T) {
	tests := []struct {
		name, cuda string
		driver     detect.Driver
		want       string
	}{
		{"a new enough driver says nothing", "12.4.1", detect.Driver{Version: "550.54.15"}, ""},
		{"no driver says nothing (compile-only machines are fine)", "12.4.1", detect.Driver{}, ""},
		{"a Jetson says nothing", "12.4.1", detect.Driver{Tegra: "36.3.0"}, ""},
		{"an unknown release says nothing", "9.2", detect.Driver{Version: "550.54.15"}, ""},
		{"an older driver of the same major explains minor-version compatibility", "12.8.1", detect.Driver{Version: "550.54.15"},
			"CUDA 12.8.1 wants NVIDIA driver 570.124.06 or newer; this machine has 550.54.15 (minor-version compatibility: programs run, newer PTX cannot be JIT-compiled)"},
		{"from CUDA 13.4 no driver is bundled, so 580 or newer says nothing", "13.4.1", detect.Driver{Version: "590.48.01"}, ""},
		{"from CUDA 13.4 a driver below 580 still says programs will not run", "13.4.1", detect.Driver{Version: "575.51.03"},
			"CUDA 13.4.1 needs NVIDIA driver 616.00 or newer; this machine has 575.51.03, so its programs will not run here (building still works)"},
		{"a driver below the floor says programs will not run", "13.0.0", detect.Driver{Version: "550.54.15"},
			"CUDA 13.0.0 needs NVIDIA driver 580.65.06 or newer; this machine has 550.54.15, so its programs will not run here (building still works)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DriverWarning(tt.cuda, tt.driver, "linux")
			if got != tt.want {
				t.Errorf("DriverWarning = %q, want %q", got, tt.want)
			}
			if strings.Contains(got, "\n") {
				t.Error("the warning must be one line")
			}
		})
	}
}

const gpuCheckOK = `cuda driver 12.4 runtime 12.4
device 0: NVIDIA H200, sm_90, 139.8 GiB
kernel 0: ok
device 1: NVIDIA H200, sm_90, 139.8 GiB
kernel 1: ok
h2d 52.1 GB/s d2h 49.8 GB/s
`

func TestParseGPUCheck(t *testing.T) {
	r := ParseGPUCheck([]byte(gpuCheckOK))
	if r.Driver != "12.4" || r.Runtime != "12.4" || len(r.Devices) != 2 || r.H2D != 52.1 || r.D2H != 49.8 || r.Error != "" {
		t.Fatalf("ParseGPUCheck = %+v", r)
	}
	if d := r.Devices[1]; d.Index != 1 || d.Name != "NVIDIA H200" || d.SM != "sm_90" || d.MemGiB != 139.8 || !d.Kernel {
		t.Errorf("device 1 = %+v", d)
	}
}

func TestGPUCheck(t *testing.T) {
	tests := []struct {
		name          string
		buildOut      string
		buildErr      error
		runOut        string
		runErr        error
		status        Status
		message, hint string
	}{
		{name: "a passing run names the devices and the bandwidth", runOut: gpuCheckOK, status: OK,
			message: "NVIDIA H200 (sm_90, 139.8 GiB), NVIDIA H200 (sm_90, 139.8 GiB) ran a kernel; h2d 52.1 GB/s d2h 49.8 GB/s"},
		{name: "a build failure points at the compiler", buildOut: "\n#error -- unsupported GNU version! gcc versions later than 13 are not supported!\n", buildErr: errors.New("exit status 1"),
			status: Fail, message: "the self-test did not compile: #error -- unsupported GNU version! gcc versions later than 13 are not supported!", hint: "see the host-compiler and toolkit checks"},
		{name: "a missing architecture points at gpu-arch",
			runOut: "cuda driver 12.4 runtime 12.4\ndevice 0: NVIDIA GeForce RTX 5090, sm_120, 31.4 GiB\nerror: cudaDeviceSynchronize(): no kernel image is available for execution on the device\n", runErr: errors.New("exit status 1"),
			status: Fail, message: "the self-test failed: cudaDeviceSynchronize(): no kernel image is available for execution on the device", hint: "the toolkit cannot build for this GPU; see the gpu-arch check"},
		{name: "an old driver points at the driver check",
			runOut: "error: cudaDriverGetVersion(&driver): CUDA driver version is insufficient for CUDA runtime version\n", runErr: errors.New("exit status 1"),
			status: Fail, message: "the self-test failed: cudaDriverGetVersion(&driver): CUDA driver version is insufficient for CUDA runtime version", hint: "the driver is too old for this toolkit; see the driver check"},
		{name: "a crash without output is reported", runErr: errors.New("signal: segmentation fault"), status: Fail, message: "the self-test failed: signal: segmentation fault"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := GPUCheck([]byte(tt.buildOut), tt.buildErr, []byte(tt.runOut), tt.runErr)
			if c.ID != IDGPU || c.Status != tt.status || c.Message != tt.message || c.Hint != tt.hint {
				t.Errorf("GPUCheck =\n %+v\nwant status %s message %q hint %q", c, tt.status, tt.message, tt.hint)
			}
		})
	}
}

func TestGPUCheckSourceIsEmbedded(t *testing.T) {
	src := string(GPUCheckSource)
	for _, want := range []string{"cudaGetDeviceProperties", `"device %d: %s, sm_%d%d, %.1f GiB\n"`, `"h2d %.1f GB/s d2h %.1f GB/s\n"`, `"kernel %d: ok\n"`} {
		if !strings.Contains(src, want) {
			t.Errorf("gpucheck.cu lacks %s", want)
		}
	}
	if got := GPUCheckArgs("/tmp/g/gpucheck.cu", "/tmp/g/gpucheck"); strings.Join(got, " ") != "-O2 -o /tmp/g/gpucheck /tmp/g/gpucheck.cu" {
		t.Errorf("GPUCheckArgs = %v", got)
	}
}

func TestCMakeHandlesCUDA13FromTheReleasesThatKnowIncludeCCCL(t *testing.T) {
	tests := []struct {
		cmake string
		cuda  int
		ok    bool
	}{
		{"3.25.1", 13, false}, // Debian 12
		{"3.27.9", 13, false},
		{"3.31.6", 13, false},
		{"3.31.9", 13, true},
		{"3.31.10", 13, true},
		{"4.0.2", 13, false},
		{"4.0.3", 13, true},
		{"4.1.0", 13, true},
		{"4.4.5", 13, true},
		{"3.25.1", 12, true},
		{"3.18.0", 11, true},
	}
	for _, tt := range tests {
		if ok, want := cmakeHandles(tt.cmake, tt.cuda); ok != tt.ok || (!ok && want != "4.0.3") {
			t.Errorf("cmake %s with CUDA %d: %v, %q; want %v", tt.cmake, tt.cuda, ok, want, tt.ok)
		}
	}
}

func TestParseCMakeVersion(t *testing.T) {
	for out, want := range map[string]string{
		"cmake version 3.25.1\n\nCMake suite maintained and supported by Kitware (kitware.com/cmake).\n": "3.25.1",
		"cmake version 4.1.0-rc2\n": "4.1.0",
		"cmake3 version 3.20\n":     "",
		"":                          "",
	} {
		if got := ParseCMakeVersion([]byte(out)); got != want {
			t.Errorf("%q: got %q, want %q", out, got, want)
		}
	}
}

func TestDriverCheckFromCUDA13_4NamesTheDeveloperDriver(t *testing.T) {
	tests := []struct {
		name, cuda, driver string
		status             Status
		want               string
	}{
		{"580 or newer runs 13.4 through minor-version compatibility", "13.4.1", "590.48.01", OK,
			"driver 590.48.01 runs CUDA 13.4.1: it runs on 580 or newer (minor-version compatibility); the 13.4 developer driver (R616, 616.00 or newer) is needed for 13.4's new features"},
		{"the developer driver runs it fully", "13.4.2", "616.10", OK, "driver 616.10 runs CUDA 13.4.2 (needs 616.00 or newer)"},
		{"13.4.3 has its own row", "13.4.3", "590.48.01", OK,
			"driver 590.48.01 runs CUDA 13.4.3: it runs on 580 or newer (minor-version compatibility); the 13.4 developer driver (R616, 616.00 or newer) is needed for 13.4's new features"},
		{"13.5.0 has its own row: 580 or newer", "13.5.0", "590.48.01", OK, "driver 590.48.01 runs CUDA 13.5.0 (needs 580 or newer)"},
		{"a release after the table's is judged as its newest 13.x", "13.6.0", "590.48.01", OK, "driver 590.48.01 runs CUDA 13.6.0 (needs 580 or newer, as for 13.5.0)"},
		{"below 580 it cannot run", "13.4.0", "575.51.03", Fail, "driver 575.51.03 cannot run CUDA 13.4.0 (needs 616.00 or newer, 580 for minor-version compatibility)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := Inputs{Driver: detect.Driver{Version: tt.driver}}
			in.Toolkit.Version = tt.cuda
			c := checkDriver(in)
			if c.Status != tt.status || c.Message != tt.want {
				t.Errorf("got %v %q\nwant %v %q", c.Status, c.Message, tt.status, tt.want)
			}
		})
	}
}

func TestTorchSaysExtensionsBuildOnlyWhereTheirHeadersAndNvccAre(t *testing.T) {
	tests := []struct {
		name       string
		change     func(*Inputs)
		status     Status
		msg, hint  string
		notMessage string
	}{
		{"every header and nvcc: extensions build", func(*Inputs) {}, OK, "matches CUDA 12.4.1's major: extensions build", "", "but"},
		{"a minimal toolkit lacks the library headers ATen includes", func(in *Inputs) {
			in.Toolkit.Facts.MissingExtensionHeaders = []string{"include/cusparse.h", "include/cusolverDn.h"}
		}, Warn, "but CUDA 12.4.1 lacks include/cusparse.h, include/cusolverDn.h, which ATen/cuda/CUDAContext.h includes: extensions (torch.utils.cpp_extension, flash-attn) do not build with it",
			"cudaenv install 12.4.1 --profile extensions", "extensions build"},
		{"CUDA 12 from PyPI has no nvcc: noted, pointed at NVIDIA's", func(in *Inputs) {
			in.Toolkit.From, in.Toolkit.LibrariesOnly, in.Toolkit.Facts.NVCC = "pypi", true, ""
		}, OK, "but CUDA 12.4.1 has no nvcc", "NVIDIA's CUDA 12 wheels carry no nvcc; install the toolkit from NVIDIA: cudaenv install 12.4.1 --source nvidia --profile extensions", "extensions build"},
		{"a toolkit not installed claims nothing about extensions", func(in *Inputs) {
			in.Toolkit.Installed, in.Toolkit.Facts = false, detect.Toolkit{}
		}, OK, "matches CUDA 12.4.1's major", "", "extensions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := healthy()
			tt.change(&in)
			c := checkTorch(in)
			if c.Status != tt.status || !strings.Contains(c.Message, tt.msg) || strings.Contains(c.Message, tt.notMessage) || c.Hint != tt.hint {
				t.Errorf("got %s %q (hint %q)", c.Status, c.Message, c.Hint)
			}
		})
	}
}
