package dirs

import (
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
