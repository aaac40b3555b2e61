package activate

import (
	"encoding/json"
	"os"
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
// for, all naming its root unless listed in its include/lib ones. What
// reads each (looked up in public sources; unconfirmed ones say so):
//   - NCCL_ROOT_DIR, NCCL_INCLUDE_DIR, NCCL_LIB_DIR: PyTorch's
//     cmake/Modules/FindNCCL.cmake (HINTS ${NCCL_INCLUDE_DIR},
//     ${NCCL_ROOT_DIR}/include, ${NCCL_LIB_DIR}, ${NCCL_ROOT_DIR}/lib) and
//     tools/setup_helpers (NCCL_ROOT_DIR, NCCL_INCLUDE_DIR);
//     NCCL_ROOT: find_package(NCCL)'s <Package>_ROOT (CMP0074) and
//     find modules such as llama.cpp's ($ENV{NCCL_ROOT});
//     NCCL_HOME: nccl-tests' Makefile and NCCL's own build docs.
//   - CUSPARSELT_ROOT, CUDSS_ROOT: PyTorch's FindCUSPARSELT.cmake and
//     FindCUDSS.cmake search the <Package>_ROOT prefixes (CMP0074; they
//     read $ENV{*_ROOT_DIR} only as a deprecated spelling), and
//     Paddle's cusparselt.cmake reads $ENV{CUSPARSELT_ROOT}.
//     CUSPARSELT_PATH, CUDSS_PATH: the _PATH spelling CuPy and other
//     Python builds use for NVIDIA libraries (not confirmed per library).
//   - CUTENSOR_ROOT: $ENV{CUTENSOR_ROOT} in the CMake find modules of
//     cuTENSOR users; CUTENSOR_PATH: CuPy's build (not re-checked here).
//   - NVSHMEM_HOME: NVSHMEM's install docs and examples
//     (-I $NVSHMEM_HOME/include -L $NVSHMEM_HOME/lib), vLLM's and
//     Triton-distributed's build scripts; NVSHMEM_ROOT: scripts that
//     install it from source (Triton-distributed). PyTorch's own NVSHMEM
//     lookup was not found in the searched sources.
//
// The first is the one envdiff takes the root from (envdiff.LibraryRoots
// keeps them in step).
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

// ReceiptComponents are the component versions of an entry's receipt
// (libcublas: 12.4.2.65), read from the store when the entry came from
// ResolveFast, which decodes no receipt; nil when it has none. The
// prompt hook reads them only when a library collides with a wheel's.
func ReceiptComponents(e *store.Entry) map[string]string {
	rc := e.Receipt
	if len(rc.Components) == 0 && e.Dir != "" {
		data, err := os.ReadFile(filepath.Join(e.Dir, store.ReceiptName))
		if err != nil || len(data) > maxReceiptBytes || !store.InstalledReceipt(data) || json.Unmarshal(data, &rc) != nil {
			return nil
		}
	}
	out := map[string]string{}
	for _, c := range rc.Components {
		out[c.ID] = c.Version
	}
	return out
}

// maxReceiptBytes bounds a receipt read by the prompt hook: a full
// toolkit's lists a few dozen components.
const maxReceiptBytes = 4 << 20
