package venv

import (
	"path"
	"regexp"
	"strings"
	"sync"
)

// MaxTorchInitBytes bounds the torch/__init__.py read (PyTorch's is
// about 100 KB).
const MaxTorchInitBytes = 1 << 20

// TorchLoads is what torch/__init__.py's _load_global_deps says torch
// loads by path, from its nvidia-* wheels, before torch._C: what makes a
// toolkit's older copy on LD_LIBRARY_PATH harmless or not. Each library is
// a pair (folder below site-packages/nvidia, file glob): ("nvjitlink",
// "libnvJitLink.so.*[0-9]").
type TorchLoads struct {
	// Preload are loaded once torch/lib/libtorch_global_deps.so has
	// loaded: none before PyTorch 2.6; nvrtc and nvJitLink from 2.6; from
	// 2.10 every library of its list.
	Preload [][2]string
	// Gate, when set, is what a file mapped by then must have in its path
	// for Preload to happen (torch reads /proc/self/maps): 2.6 to 2.8 ask
	// for "nvidia/cuda_runtime/lib/libcudart.so" (the runtime from its
	// wheel), later ones for any "libcudart.so".
	Gate string
	// All are the libraries of its list; OnFailure says they are all
	// preloaded when the global deps library fails to load.
	All       [][2]string
	OnFailure bool
}

var (
	reTorchLibs = sync.OnceValue(func() *regexp.Regexp {
		// ("cublas", "libcublas.so.*[0-9]") in a list (PyTorch 2.10 on), or
		// "cublas": "libcublas.so.*[0-9]" in a dict (before).
		return regexp.MustCompile(`(?m)(?:\(|^)\s*"([A-Za-z0-9_]{1,64})"\s*[,:]\s*"(lib[A-Za-z0-9_+-]{1,64}\.so\.\*\[0-9\])"`)
	})
	reTorchPreload = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`_preload_cuda_(?:deps|lib)\(\s*"([A-Za-z0-9_]{1,64})"\s*,\s*"(lib[A-Za-z0-9_+-]{1,64}\.so\.\*\[0-9\])"`)
	})
	reTorchPreloadAll = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`_preload_cuda_deps\((?:required=False)?\)`) })
	reTorchGate       = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`if\s+"([A-Za-z0-9_./+-]{1,200})"\s+not\s+in\s+_maps\s*:\s*\n\s*return\b`)
	})
)

// ParseTorchInit reads TorchLoads from the text of torch/__init__.py; ok
// is false when it has no _load_global_deps.
func ParseTorchInit(src []byte) (t TorchLoads, ok bool) {
	s := string(src)
	start := strings.Index(s, "def _load_global_deps(")
	if start < 0 {
		return t, false
	}
	body := s[start:]
	if end := strings.Index(body[1:], "\ndef "); end > 0 {
		body = body[:end+1]
	}
	// The list's entries, each on a line of its own: only the lines that
	// have a library glob are matched (the prompt hook reads this file; a
	// regular expression over all of its 100 KB costs milliseconds).
	for rest := s; len(t.All) < 64; {
		i := strings.Index(rest, `*[0-9]"`) // '*' is rare in Python: a fast scan
		if i < 0 {
			break
		}
		from, to := strings.LastIndexByte(rest[:i], '\n')+1, len(rest)
		if j := strings.IndexByte(rest[i:], '\n'); j >= 0 {
			to = i + j
		}
		for _, m := range reTorchLibs().FindAllStringSubmatch(rest[from:to], 64-len(t.All)) {
			t.All = append(t.All, [2]string{m[1], m[2]})
		}
		rest = rest[to:]
	}
	success, failure, _ := strings.Cut(body, "except OSError")
	if reTorchPreloadAll().MatchString(success) {
		t.Preload = t.All
	}
	for _, m := range reTorchPreload().FindAllStringSubmatch(success, 64) {
		t.Preload = append(t.Preload, [2]string{m[1], m[2]})
	}
	if len(t.Preload) > 0 {
		if m := reTorchGate().FindStringSubmatch(success); m != nil {
			t.Gate = m[1]
		}
	}
	t.OnFailure = strings.Contains(failure, "_preload_cuda_deps")
	return t, true
}

// Preloads reports whether a library of Preload is the file soname
// (libnvJitLink.so.12 for "libnvJitLink.so.*[0-9]").
func (t TorchLoads) Preloads(soname string) bool {
	for _, l := range t.Preload {
		if ok, _ := path.Match(l[1], soname); ok {
			return true
		}
	}
	return false
}
