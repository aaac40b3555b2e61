package doctor

import (
	"strings"
	"testing"
)

func TestEnvWarnsWhenToolsWouldTakeCUDAHomeFromAShim(t *testing.T) {
	shims := "/home/me/.local/share/cudaenv/shims"
	cases := []struct {
		name string
		env  map[string]string
		nvcc []string
		warn bool
	}{
		{"the shim first on PATH and no CUDA_HOME warns", nil, []string{shims + "/nvcc"}, true},
		{"CUDA_HOME set (the hook, cudaenv exec) is fine", map[string]string{"CUDA_HOME": "/t/12.4.1"}, []string{shims + "/nvcc"}, false},
		{"CUDA_PATH counts as well", map[string]string{"CUDA_PATH": "/t/12.4.1"}, []string{shims + "/nvcc"}, false},
		{"a toolkit's own nvcc first is fine", nil, []string{"/t/12.4.1/bin/nvcc", shims + "/nvcc"}, false},
		{"no nvcc on PATH says nothing here", nil, nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := tc.env
			if env == nil {
				env = map[string]string{}
			}
			c := checkEnv(Inputs{Env: env, NVCCOnPath: tc.nvcc, ShimsDir: shims})
			got := c.Status == Warn && strings.Contains(c.Message, "CUDA_HOME is not set")
			if got != tc.warn {
				t.Fatalf("status %s, message %q", c.Status, c.Message)
			}
			if tc.warn && (!strings.Contains(c.Message, "would use /home/me/.local/share/cudaenv,") || !strings.Contains(c.Hint, "cudaenv exec")) {
				t.Errorf("message %q, hint %q", c.Message, c.Hint)
			}
		})
	}
}

func TestPathSaysHowToRunWhatIsBuiltWhenOnlyTheShimsAreOnPath(t *testing.T) {
	shims := "/home/me/.local/share/cudaenv/shims"
	lib := "/home/me/.local/share/cudaenv/cuda/12.4.1/lib64"
	cases := []struct {
		name string
		goos string
		nvcc []string
		ld   []string
		says bool
	}{
		{"the shim first and no library folder on LD_LIBRARY_PATH says it", "linux", []string{shims + "/nvcc"}, []string{"/opt/x/lib"}, true},
		{"the library folder on LD_LIBRARY_PATH (the hook, exec) is fine", "linux", []string{shims + "/nvcc"}, []string{lib}, false},
		{"the toolkit's own nvcc first is fine", "linux", []string{"/home/me/.local/share/cudaenv/cuda/12.4.1/bin/nvcc", shims + "/nvcc"}, nil, false},
		{"Windows finds DLLs on PATH", "windows", []string{shims + "/nvcc"}, nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := Inputs{GOOS: tc.goos, NVCCOnPath: tc.nvcc, LDLibraryPath: tc.ld, ShimsDir: shims,
				OwnBinDirs: []string{shims, "/home/me/.local/share/cudaenv/cuda/12.4.1/bin"},
				Toolkit:    Toolkit{Version: "12.4.1", Dir: "/home/me/.local/share/cudaenv/cuda/12.4.1", Installed: true, LibDirs: []string{lib}}}
			in.Toolkit.Facts.NVCC = "/home/me/.local/share/cudaenv/cuda/12.4.1/bin/nvcc"
			c := checkPath(in)
			if got := strings.Contains(c.Message, "only the shims are on PATH"); got != tc.says || c.Status != OK {
				t.Fatalf("status %s, message %q", c.Status, c.Message)
			}
			if tc.says && (!strings.Contains(c.Hint, "cudaenv exec ./PROGRAM") || !strings.HasSuffix(c.Hint, "-rpath="+lib)) {
				t.Errorf("hint %q", c.Hint)
			}
		})
	}
}
