package doctor

import (
	"strings"
	"testing"

	"github.com/cudaenv/cudaenv/internal/detect"
)

func TestCheckKernelsSaysWhichGPUHasNoKernelImage(t *testing.T) {
	torch := Framework{Name: "torch", Version: "2.15.0+cu130", KernelFile: "libtorch_cuda.so", Carries: "sm_75…sm_121a"}
	tests := []struct {
		desc     string
		verdicts []KernelVerdict
		status   Status
		msg      string
		hint     string
	}{
		{"a Pascal card", []KernelVerdict{{GPU: "GTX 1080", SM: "sm_61", Status: "no-kernel"}}, Fail,
			`no kernel image for your sm_61 in torch 2.15.0's libtorch_cuda.so (it carries sm_75…sm_121a): CUDA calls fail with "no kernel image is available"`,
			"install a torch build with sm_61 kernels (see: cudaenv compat torch==2.15.0)"},
		{"an Ampere card", []KernelVerdict{{GPU: "RTX 3090", SM: "sm_86", Status: "runs"}}, OK, "torch 2.15.0's libtorch_cuda.so has kernels for your sm_86 (it carries sm_75…sm_121a)", ""},
		{"PTX only", []KernelVerdict{{SM: "sm_89", Status: "jit", Message: "runs on sm_89 by JIT-compiling its compute_80 PTX"}}, Warn, "has no kernels for your sm_89: runs on sm_89 by JIT-compiling", "sm_89 kernels"},
		{"no GPU", nil, Skip, "no GPU to judge torch 2.15.0's libtorch_cuda.so for (it carries sm_75…sm_121a)", ""},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			f := torch
			f.Verdicts = tt.verdicts
			c := CheckKernels([]Framework{f}, "")
			if c.ID != IDKernels || c.Status != tt.status || !strings.Contains(c.Message, tt.msg) || !strings.Contains(c.Hint, tt.hint) {
				t.Errorf("%s %q hint %q", c.Status, c.Message, c.Hint)
			}
		})
	}
	if c := CheckKernels(nil, ""); c.Status != Skip {
		t.Errorf("no framework: %s", c.Status)
	}
}

func TestTheLibrariesCheckJudgesWhatTheImportLoads(t *testing.T) {
	jit := detect.WheelLib{Soname: "libnvJitLink.so.12", Path: "/v/site/nvidia/nvjitlink/lib/libnvJitLink.so.12", Wheel: "nvidia-nvjitlink-cu12", Version: "12.4.127", Framework: "torch"}
	cuda121 := LibDir{Dir: "/s/cuda/12.1.1/lib64", What: "CUDA 12.1.1", Components: map[string]string{"libnvjitlink": "12.1.105"}}
	base := Libraries{Python: "/v", Wheels: []detect.WheelLib{jit}, Dirs: []LibDir{cuda121}, Selected: "12.1", TorchCUDA: "12.4", InstalledCUDA: []string{"12.1.1"},
		// The old comparison of file names would fail this one.
		Shadows: []Shadow{{Lib: jit, Dir: cuda121, Version: "12.1.105"}}}
	torchByPath := Framework{Name: "torch", Version: "2.15.0", Modeled: true,
		Loaded: []LoadedLib{{Name: "libnvJitLink.so.12", Path: jit.Path, Via: "already loaded"}}}
	trapped := Framework{Name: "torch", Version: "2.3.1",
		Loaded:    []LoadedLib{{Name: "libnvJitLink.so.12", Path: "/s/cuda/12.1.1/lib64/libnvJitLink.so.12", Via: "LD_LIBRARY_PATH", By: "/v/site/nvidia/cusparse/lib/libcusparse.so.12"}},
		Undefined: []MissingSymbol{{Symbol: "__nvJitLinkAddData_12_4@libnvJitLink.so.12", By: "/v/site/nvidia/cusparse/lib/libcusparse.so.12", Library: "libnvJitLink.so.12", Picked: "/s/cuda/12.1.1/lib64/libnvJitLink.so.12"}}}
	older := Framework{Name: "torch", Version: "2.3.1",
		Loaded: []LoadedLib{{Name: "libnvJitLink.so.12", Path: "/s/cuda/12.1.1/lib64/libnvJitLink.so.12", Via: "LD_LIBRARY_PATH"}}}
	tests := []struct {
		desc   string
		fw     Framework
		in     func(Libraries) Libraries
		status Status
		msg    string
		hint   string
		noHint string
	}{
		{"a framework that loads its wheels' libraries by path passes, though the toolkit has older copies", torchByPath, nil, OK,
			"torch 2.15.0 loads 1 CUDA libraries, those of its wheels by path and RPATH: nothing on LD_LIBRARY_PATH is taken instead", "", ""},
		{"a missing symbol fails, named", trapped, nil, Fail,
			`importing torch 2.3.1 fails with "undefined symbol: __nvJitLinkAddData_12_4, version libnvJitLink.so.12": libcusparse.so.12 needs it from libnvJitLink.so.12, and the loader picks /s/cuda/12.1.1/lib64/libnvJitLink.so.12 (CUDA 12.1.1's on LD_LIBRARY_PATH) instead of torch's nvidia-nvjitlink-cu12 12.4.127`,
			"select the CUDA torch was built with", ""},
		{"an older copy without a missing symbol warns: the import works", older, nil, Warn,
			"importing torch 2.3.1 works (no symbol it needs is missing)", "", ""},
		{"the hint never selects the version already selected", trapped, func(l Libraries) Libraries { l.Selected = "12.4"; return l }, Fail,
			"undefined symbol", "cudaenv use --libraries=off 12.4", "cudaenv use 12.4"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			in := base
			if tt.in != nil {
				in = tt.in(in)
			}
			in.Frameworks = []Framework{tt.fw}
			c := CheckLibraries(in)
			if c.Status != tt.status || !strings.Contains(c.Message, tt.msg) || !strings.Contains(c.Hint, tt.hint) || tt.noHint != "" && strings.Contains(c.Hint, tt.noHint) {
				t.Errorf("%s %q\nhint %q", c.Status, c.Message, c.Hint)
			}
		})
	}
}
