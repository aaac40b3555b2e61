package cudabin

import (
	"context"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/cudaenv/cudaenv/internal/venv"
)

// Framework is a Python framework's CUDA side as installed: the kernels
// its libraries carry, and what importing it loads.
type Framework struct {
	Name    string // torch, jax, cupy
	Version string // torch/version.py's __version__, else its dist-info's; "" when neither says
	Site    string // the site-packages it is in
	// Kernels joins the GPU code of the framework's libraries; its Path
	// is the library with the most (libtorch_cuda.so). Nil when none of
	// its libraries has GPU code.
	Kernels *Report
	// Import is the import as the loader would carry it out: every CUDA
	// library loaded (Needs, with By), and the versioned symbols missing.
	Import Report
	// Modeled: the load follows the framework's own code (torch's
	// __init__.py loading its wheels' libraries by path); otherwise its
	// libraries are loaded as the loader alone would.
	Modeled bool
}

// frameworkLayouts: where each framework's libraries are, relative to
// site-packages: those carrying its kernels, and those its import loads.
var frameworkLayouts = []struct {
	name             string
	kernels, import_ []string
	distInfo         string // the dist-info folder naming its version
}{
	{"torch", []string{"torch/lib/libtorch_cuda.so"}, []string{"torch/_C.cpython-*.so"}, "torch-*.dist-info"},
	{"jax", []string{"jax_plugins/xla_cuda*/xla_cuda_plugin.so", "jax_cuda*_plugin/*.so"}, []string{"jax_plugins/xla_cuda*/xla_cuda_plugin.so", "jax_cuda*_plugin/*.so"}, "jax_cuda*_plugin-*.dist-info"},
	{"cupy", []string{"cupy/_core/*.so", "cupy/cuda/*.so"}, []string{"cupy/_core/core.cpython-*.so", "cupy/cuda/*.so"}, "cupy_cuda*-*.dist-info"},
}

var reDistVersion = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`-([0-9][0-9A-Za-z.+_]{0,63})\.dist-info$`) })

// frameworkVersion is torch/version.py's __version__ (tv, read through
// internal/venv: the local part, +cu132, included), else the version in
// the name of the framework's dist-info folder.
func frameworkVersion(site, distInfo string, tv venv.Torch) string {
	if tv.Version != "" {
		return tv.Version
	}
	m, _ := filepath.Glob(filepath.Join(site, distInfo))
	if len(m) == 1 {
		if v := reDistVersion().FindStringSubmatch(filepath.Base(m[0])); v != nil {
			return v[1]
		}
	}
	return ""
}

// maxFrameworkFiles bounds the libraries read for one framework.
const maxFrameworkFiles = 64

// Frameworks finds the frameworks installed in the site-packages folders
// and reads their libraries: what they carry, judged for opt's GPU and
// driver, and what importing them loads under opt's loader.
func Frameworks(ctx context.Context, sites []string, opt Options) []Framework {
	var out []Framework
	for _, site := range sites {
		for _, fl := range frameworkLayouts {
			if ctx.Err() != nil {
				return out
			}
			kernels := globAll(site, fl.kernels)
			imports := globAll(site, fl.import_)
			if len(kernels) == 0 && len(imports) == 0 {
				continue
			}
			// torch/version.py, as every file of a Python environment,
			// through the one bounded reader (internal/venv).
			var tv venv.Torch
			if fl.name == "torch" {
				tv, _ = venv.ReadTorch(ctx, site)
			}
			fw := Framework{Name: fl.name, Site: site, Version: frameworkVersion(site, fl.distInfo, tv)}
			in := newInspector(opt)
			// The kernels (fat binaries only) and the import (the loader
			// and symbols) read at once: they touch different files.
			kdone := make(chan *Report, 1)
			go func() { kdone <- in.kernels(kernels) }()
			var roots []string
			if fl.name == "torch" {
				var pre []string
				major, _, _ := strings.Cut(tv.CUDA, ".")
				pre, fw.Modeled = torchPreloads(ctx, site, major, opt)
				roots = append(roots, pre...)
			}
			roots = append(roots, imports...)
			if len(roots) > 0 {
				last := roots[len(roots)-1]
				imp := newInspector(opt)
				imp.opt.Preload = roots[:len(roots)-1]
				if obj, err := imp.open(last, false); err == nil {
					fw.Import = Report{Path: last, Kind: obj.Kind, Needs: []Need{}, Undefined: []Undefined{}}
					imp.resolve(&fw.Import, obj)
				}
			}
			if fw.Kernels = <-kdone; fw.Kernels != nil {
				fw.Kernels.Verdict = judge(*fw.Kernels, opt)
			}
			out = append(out, fw)
		}
	}
	return out
}

// kernels joins the fat binaries of files into one report, whose Path is
// the file with the most entries; nil when none has any.
func (in *inspector) kernels(files []string) *Report {
	var k *Report
	for _, f := range files {
		obj, err := in.open(f, true)
		if err != nil || len(obj.Entries) == 0 {
			continue
		}
		r := in.fatbinReport(f, obj)
		switch {
		case k == nil:
			k = &r
		case r.Fatbins > k.Fatbins:
			j := joinKernels(r, *k)
			k = &j
		default:
			j := joinKernels(*k, r)
			k = &j
		}
	}
	return k
}

// joinKernels is a's report with b's architectures added.
func joinKernels(a, b Report) Report {
	seen := map[string]bool{}
	for _, s := range a.SASS {
		seen[s] = true
	}
	for _, s := range b.SASS {
		if !seen[s] {
			a.SASS = append(a.SASS, s)
		}
	}
	sort.Slice(a.SASS, func(i, j int) bool { return archLess(a.SASS[i], a.SASS[j]) })
	for _, p := range b.PTX {
		dup := false
		for _, q := range a.PTX {
			dup = dup || q == p
		}
		if !dup {
			a.PTX = append(a.PTX, p)
		}
	}
	sort.Slice(a.PTX, func(i, j int) bool { return archLess(a.PTX[i].Arch, a.PTX[j].Arch) })
	a.Fatbins += b.Fatbins
	return a
}

// globAll is the files matching the patterns under site, at most
// maxFrameworkFiles, sorted.
func globAll(site string, patterns []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range patterns {
		m, _ := filepath.Glob(filepath.Join(site, filepath.FromSlash(p)))
		for _, f := range m {
			if !seen[f] && len(out) < maxFrameworkFiles {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	sort.Strings(out)
	return out
}

// torch/__init__.py is read through internal/venv, whole, up to this
// size: any package in a cloned repository's venv may have written it
// (torch's own is about 100 KB).
const maxInitBytes = 1 << 20

var (
	reCudaLibs = sync.OnceValue(func() *regexp.Regexp {
		// ("cublas", "libcublas.so.*[0-9]") in a list (PyTorch 2.6 on), or
		// "cublas": "libcublas.so.*[0-9]" in a dict (before).
		return regexp.MustCompile(`(?m)(?:\(|^)\s*"([A-Za-z0-9_]{1,64})"\s*[,:]\s*"(lib[A-Za-z0-9_+-]{1,64}\.so\.\*\[0-9\])"`)
	})
	rePreload = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`_preload_cuda_(?:deps|lib)\(\s*"([A-Za-z0-9_]{1,64})"\s*,\s*"(lib[A-Za-z0-9_+-]{1,64}\.so\.\*\[0-9\])"`)
	})
	rePreloadAll = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`_preload_cuda_deps\((?:required=False)?\)`) })
)

// torchPreloads is what torch's own __init__.py loads before torch._C:
// torch/lib/libtorch_global_deps.so, then, where its _load_global_deps
// does so once that library loaded, its wheels' CUDA libraries by path
// (_preload_cuda_deps; PyTorch 2.6 on, all of them from about 2.10), and
// only if the global deps library cannot load (its libraries not found),
// all of them. major is torch.version.cuda's major ("" when unknown). ok
// is false when the file is not there or does not say.
func torchPreloads(ctx context.Context, site, major string, opt Options) (roots []string, ok bool) {
	deps := filepath.Join(site, "torch", "lib", "libtorch_global_deps.so")
	init, err := venv.ReadFile(ctx, filepath.Join(site, "torch", "__init__.py"), maxInitBytes)
	if err != nil {
		return nil, false
	}
	src := string(init)
	start := strings.Index(src, "def _load_global_deps(")
	if start < 0 {
		return nil, false
	}
	body := src[start:]
	if end := strings.Index(body[1:], "\ndef "); end > 0 {
		body = body[:end+1]
	}
	var all [][2]string
	for _, m := range reCudaLibs().FindAllStringSubmatch(src, 64) {
		all = append(all, [2]string{m[1], m[2]})
	}
	success, failure, _ := strings.Cut(body, "except OSError")
	var libs [][2]string
	if rePreloadAll().MatchString(success) {
		libs = all
	}
	for _, m := range rePreload().FindAllStringSubmatch(success, 64) {
		libs = append(libs, [2]string{m[1], m[2]})
	}
	in := newInspector(opt)
	// The global deps library loads when its own libraries are found;
	// else torch preloads every library of its list and loads it again.
	failed := false
	if obj, err := in.open(deps, false); err == nil {
		res := in.loaderEnv().Load(obj.Object)
		for _, pk := range res.Picks {
			if pk.Path == "" && strings.Contains(failure, "_preload_cuda_deps") {
				failed, libs = true, all
				break
			}
		}
	}
	var pre []string
	for _, l := range libs {
		if p := wheelLibrary(site, l[0], l[1], major); p != "" {
			pre = append(pre, p)
		}
	}
	if failed {
		return append(pre, deps), true
	}
	return append([]string{deps}, pre...), true
}

// wheelLibrary is what torch's _get_cuda_dep_paths finds first:
// site/nvidia/FOLDER/lib/NAME, site/nvidia/cuMAJOR/lib/NAME, then
// site/FOLDER/lib/NAME, NAME a glob like libcublas.so.*[0-9].
func wheelLibrary(site, folder, name, major string) string {
	dirs := []string{filepath.Join(site, "nvidia", folder, "lib")}
	if major != "" {
		dirs = append(dirs, filepath.Join(site, "nvidia", "cu"+major, "lib"))
	}
	dirs = append(dirs, filepath.Join(site, folder, "lib"))
	for _, d := range dirs {
		if m, _ := filepath.Glob(filepath.Join(d, name)); len(m) > 0 {
			sort.Strings(m)
			return m[0]
		}
	}
	return ""
}
