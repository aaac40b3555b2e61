package venv

import (
	"testing"

	"github.com/cudaenv/cudaenv/internal/venv/venvtest"
)

func TestTorchInitSaysWhatTorchLoadsByPath(t *testing.T) {
	for _, tc := range []struct {
		name, src, gate string
		preloads        []string
		notPreloaded    []string
	}{
		{"2.5 preloads only when its global deps fail", venvtest.TorchInit25, "", nil, []string{"libnvJitLink.so.12", "libcublas.so.12"}},
		{"2.6 preloads nvrtc and nvJitLink with its wheel's runtime", venvtest.TorchInitGated(venvtest.Gate26), venvtest.Gate26, []string{"libnvJitLink.so.12", "libnvrtc.so.12"}, []string{"libcublas.so.12", "libnvJitLink.so"}},
		{"2.10 preloads its whole list with any runtime", venvtest.TorchInit210, venvtest.Gate29, []string{"libnvJitLink.so.13", "libcublasLt.so.13", "libcublas.so.13"}, []string{"libcusparse.so.12"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tl, ok := ParseTorchInit([]byte(tc.src))
			if !ok || tl.Gate != tc.gate || !tl.OnFailure {
				t.Fatalf("ok %v, %+v", ok, tl)
			}
			for _, s := range tc.preloads {
				if !tl.Preloads(s) {
					t.Errorf("%s not preloaded: %+v", s, tl.Preload)
				}
			}
			for _, s := range tc.notPreloaded {
				if tl.Preloads(s) {
					t.Errorf("%s preloaded: %+v", s, tl.Preload)
				}
			}
		})
	}
	if _, ok := ParseTorchInit([]byte("import torch._C\n")); ok {
		t.Error("a file without _load_global_deps says something")
	}
}
