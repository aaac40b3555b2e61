package activate

import (
	"path/filepath"

	"github.com/cudaenv/cudaenv/internal/envdiff"
	"github.com/cudaenv/cudaenv/internal/version"
	"github.com/cudaenv/cudaenv/store"
)

// OtherLibraries are the libraries besides cuDNN (which keeps its own
// field for its many callers), in version.Libraries' order.
func OtherLibraries() []version.Tool { return version.Libraries[1:] }

// OtherLibraryNamed returns the library besides cuDNN a name means
// (nccl, cusparselt, …).
func OtherLibraryNamed(name string) (version.Tool, bool) {
	t, ok := version.ToolNamed(name)
	return t, ok && t.Library() && t != version.Cudnn
}

// Library returns the resolved entry of a library tool, nil if none.
func (r Resolved) Library(t version.Tool) *store.Entry {
	if t == version.Cudnn {
		return r.Cudnn
	}
	return r.Libs[t]
}

// Entries are the resolved entries: the toolkit, then the libraries.
func (r Resolved) Entries() []*store.Entry {
	var out []*store.Entry
	if r.CUDA != nil {
		out = append(out, r.CUDA)
	}
	for _, t := range version.Libraries {
		if e := r.Library(t); e != nil {
			out = append(out, e)
		}
	}
	return out
}

// libraryVars are the variables the build systems of each library look
// for, all naming its root unless listed in its include/lib ones:
// PyTorch's setup and FindNCCL read NCCL_ROOT, NCCL_ROOT_DIR,
// NCCL_INCLUDE_DIR and NCCL_LIB_DIR, NCCL's own Makefiles NCCL_HOME;
// PyTorch's NVSHMEM and cuSPARSELt lookups NVSHMEM_HOME and
// CUSPARSELT_ROOT; CuPy's cuTENSOR CUTENSOR_PATH. The first is the one
// envdiff takes the root from (envdiff.LibraryRoots keeps them in step).
var libraryVars = map[version.Tool]struct{ roots, include, lib []string }{
	version.Nccl:       {roots: []string{"NCCL_HOME", "NCCL_ROOT", "NCCL_ROOT_DIR"}, include: []string{"NCCL_INCLUDE_DIR"}, lib: []string{"NCCL_LIB_DIR"}},
	version.Cusparselt: {roots: []string{"CUSPARSELT_ROOT", "CUSPARSELT_PATH"}},
	version.Cutensor:   {roots: []string{"CUTENSOR_ROOT", "CUTENSOR_PATH"}},
	version.Cudss:      {roots: []string{"CUDSS_ROOT", "CUDSS_PATH"}},
	version.Nvshmem:    {roots: []string{"NVSHMEM_HOME", "NVSHMEM_ROOT"}},
}

// wantLibrary adds what one library entry asks for to w: its lib on the
// loader's path (unless loadPath says not), lib and include for the
// compiler and linker, and its build variables.
func wantLibrary(w *envdiff.Want, t version.Tool, e *store.Entry, goos string, loadPath func(string)) {
	p := e.Path
	prepend := func(name string, dirs ...string) { w.Prepend[name] = append(w.Prepend[name], dirs...) }
	if goos == "windows" {
		if isDir(filepath.Join(p, "bin")) {
			prepend("PATH", filepath.Join(p, "bin"))
		}
	} else {
		loadPath(filepath.Join(p, "lib"))
		prepend("LIBRARY_PATH", filepath.Join(p, "lib"))
		prepend("CPATH", filepath.Join(p, "include"))
	}
	for n, v := range LibraryVars(t, p) {
		w.Set[n] = v
	}
}

// LibraryVars are the build variables of a library whose root is p
// (NCCL_HOME, NCCL_INCLUDE_DIR, …; none for cuDNN, whose CUDNN_PATH
// Want sets itself).
func LibraryVars(t version.Tool, p string) map[string]string {
	out := map[string]string{}
	v := libraryVars[t]
	for _, n := range v.roots {
		out[n] = p
	}
	for _, n := range v.include {
		out[n] = filepath.Join(p, "include")
	}
	for _, n := range v.lib {
		out[n] = filepath.Join(p, "lib")
	}
	return out
}
