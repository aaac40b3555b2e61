package dirs

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func lookup(env map[string]string) Lookup {
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

func TestFromEnvHonoursOverrides(t *testing.T) {
	env := map[string]string{"CUDAENV_ROOT": "/s p/$root/", "CUDAENV_CONFIG_DIR": "/cfg", "CUDAENV_CACHE_DIR": "/cache"}
	d, err := FromEnv(lookup(env))
	if err != nil {
		t.Fatal(err)
	}
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
	d, err := FromEnv(func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{d.Root, d.Config, d.Cache} {
		if !strings.HasSuffix(p, "cudaenv") || !filepath.IsAbs(p) {
			t.Errorf("%q is not an absolute path ending in cudaenv", p)
		}
	}
}

func TestFromEnvRefusesFoldersUnsafeOnPATH(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the cases are Unix paths")
	}
	tests := []struct {
		desc, name, value, want string
	}{
		{"a relative store", "CUDAENV_ROOT", "relative/path", `CUDAENV_ROOT="relative/path" is not an absolute path; set CUDAENV_ROOT to one, e.g. "$HOME/.local/share/cudaenv"`},
		{"a store in the current directory", "CUDAENV_ROOT", ".", `CUDAENV_ROOT="." is not an absolute path`},
		{"a store with a colon", "CUDAENV_ROOT", "/a:/b", `CUDAENV_ROOT="/a:/b" holds ":", which separates PATH entries; set CUDAENV_ROOT to a folder whose name has none`},
		{"a store with a newline", "CUDAENV_ROOT", "/a\n/b", `CUDAENV_ROOT="/a\n/b" holds a control character; set CUDAENV_ROOT to a folder whose name has none`},
		{"a store with an escape", "CUDAENV_ROOT", "/a\x1b[2J", `CUDAENV_ROOT="/a\x1b[2J" holds a control character`},
		{"a relative config folder", "CUDAENV_CONFIG_DIR", "cfg", `CUDAENV_CONFIG_DIR="cfg" is not an absolute path; set CUDAENV_CONFIG_DIR to one, e.g. "$HOME/.config/cudaenv"`},
		{"a relative cache folder", "CUDAENV_CACHE_DIR", "./cache", `CUDAENV_CACHE_DIR="./cache" is not an absolute path`},
		{"a cache folder with a newline", "CUDAENV_CACHE_DIR", "/c\nd", `CUDAENV_CACHE_DIR="/c\nd" holds a control character`},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			_, err := FromEnv(lookup(map[string]string{tt.name: tt.value}))
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %s", err, tt.want)
			}
			if strings.ContainsAny(err.Error(), "\n\x1b") {
				t.Errorf("the error is not one plain line: %q", err)
			}
		})
	}
	// A colon is only a problem on PATH: the cache may have one.
	if _, err := FromEnv(lookup(map[string]string{"CUDAENV_CACHE_DIR": "/c:d"})); err != nil {
		t.Errorf("cache with a colon: %v", err)
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
			d, err := FromEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
			if err != nil {
				t.Fatal(err)
			}
			if d.System != tt.want {
				t.Errorf("System = %q, want %q", d.System, tt.want)
			}
		})
	}
}
