package dirs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFromEnvHonoursOverrides(t *testing.T) {
	env := map[string]string{"CUDAENV_ROOT": "/s p/$root", "CUDAENV_CONFIG_DIR": "/cfg", "CUDAENV_CACHE_DIR": "/cache"}
	d := FromEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if d.Root != "/s p/$root" || d.CUDA() != filepath.Join("/s p/$root", "cuda") {
		t.Errorf("root = %q, cuda = %q", d.Root, d.CUDA())
	}
	if d.GlobalFile() != filepath.Join("/cfg", "version") {
		t.Errorf("global file = %q", d.GlobalFile())
	}
	if d.Stamps() != filepath.Join("/cache", "stamps") {
		t.Errorf("stamps = %q", d.Stamps())
	}
}

func TestFromEnvFallsBackToXDG(t *testing.T) {
	d := FromEnv(func(string) (string, bool) { return "", false })
	for _, p := range []string{d.Root, d.Config, d.Cache} {
		if !strings.HasSuffix(p, "cudaenv") {
			t.Errorf("%q does not end in cudaenv", p)
		}
	}
}

func TestFromEnvFindsTheSystemStore(t *testing.T) {
	cfg := t.TempDir()
	tests := []struct {
		desc, envValue, file, want string
	}{
		{"from CUDAENV_SYSTEM_ROOT", "/opt/cuda env/", "", "/opt/cuda env"},
		{"from system_root in the settings file", "", "system_root = /lustre/$x/cudaenv\n", "/lustre/$x/cudaenv"},
		{"the variable before the file", "/opt/a", "system_root = /opt/b\n", "/opt/a"},
		{"a relative folder is none", "opt/cudaenv", "", ""},
		{"a relative folder in the file is none", "", "system_root = cudaenv\n", ""},
		{"neither is none", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			path := filepath.Join(cfg, "config")
			os.Remove(path)
			if tt.file != "" {
				if err := os.WriteFile(path, []byte(tt.file), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			env := map[string]string{"CUDAENV_CONFIG_DIR": cfg, "CUDAENV_SYSTEM_ROOT": tt.envValue}
			d := FromEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
			if d.System != tt.want {
				t.Errorf("System = %q, want %q", d.System, tt.want)
			}
		})
	}
}
