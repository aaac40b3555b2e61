package doctor

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/cudaenv/cudaenv/internal/detect"
)

// IDKernels is the check that the Python environment's frameworks
// (PyTorch, JAX, CuPy) carry kernels for the GPUs, read from their
// installed libraries (the "no kernel image is available" error).
const IDKernels = "kernels"

// Framework is what cudaenv inspect read of an installed framework.
type Framework struct {
	Name    string // torch, jax, cupy
	Version string // "2.15.0+cu130"; "" when unknown
	// KernelFile is the library carrying its GPU code (libtorch_cuda.so)
	// and Carries its architectures ("sm_75…sm_120 and compute_120");
	// "" when none of its libraries has GPU code.
	KernelFile, Carries string
	// Verdicts are the kernels judged for each GPU, in the GPUs' order.
	Verdicts []KernelVerdict
	// Loaded are the CUDA libraries importing it loads, each with the
	// file the loader picks; Undefined the symbols none defines.
	Loaded    []LoadedLib
	Undefined []MissingSymbol
	// Modeled: the load follows the framework's own loading code.
	Modeled bool
}

// KernelVerdict is a framework's kernels judged for one GPU.
type KernelVerdict struct {
	GPU    string // the GPU's name
	SM     string // sm_61
	Status string // runs, jit, no-kernel, driver, unknown (cudabin's)
	// Message is the inspector's sentence for it.
	Message string
}

// LoadedLib is one library an import loads.
type LoadedLib struct {
	Name string // libnvJitLink.so.12
	Path string // the file picked, "" when none is found
	Via  string // LD_LIBRARY_PATH, RUNPATH, already loaded, ...
	By   string // what needs it
}

// MissingSymbol is an undefined versioned symbol.
type MissingSymbol struct {
	Symbol  string // __nvJitLinkComplete_12_4@libnvJitLink.so.12
	By      string // the library needing it
	Library string // the library expected to define it
	Picked  string // the file the loader picks for that library
}

func (f Framework) title() string {
	if f.Version == "" {
		return f.Name
	}
	return f.Name + " " + strings.SplitN(f.Version, "+", 2)[0]
}

// CheckKernels judges the frameworks' kernels for the GPUs.
func CheckKernels(fws []Framework, gpuErr string) Check {
	c := Check{ID: IDKernels}
	var withCode []Framework
	for _, f := range fws {
		if f.KernelFile != "" {
			withCode = append(withCode, f)
		}
	}
	if len(withCode) == 0 {
		c.Status, c.Message = Skip, "no framework with GPU code (torch, JAX, CuPy) in the Python environment"
		return c
	}
	var msgs, hints []string
	c.Status = Skip
	raise := func(s Status) {
		if s.rank() > c.Status.rank() || c.Status == Skip {
			c.Status = s
		}
	}
	for _, f := range withCode {
		where := fmt.Sprintf("%s's %s", f.title(), f.KernelFile)
		if len(f.Verdicts) == 0 {
			msgs = append(msgs, fmt.Sprintf("no GPU to judge %s for (it carries %s)", where, f.Carries))
			continue
		}
		for _, v := range f.Verdicts {
			switch v.Status {
			case "runs":
				raise(OK)
				msgs = append(msgs, fmt.Sprintf("%s has kernels for your %s (it carries %s)", where, v.SM, f.Carries))
			case "jit":
				raise(Warn)
				msgs = append(msgs, fmt.Sprintf("%s has no kernels for your %s: %s", where, v.SM, v.Message))
				hints = append(hints, fmt.Sprintf("install a %s build with %s kernels (cudaenv compat %s==%s)", f.Name, v.SM, f.Name, strings.SplitN(f.Version, "+", 2)[0]))
			case "no-kernel":
				raise(Fail)
				msgs = append(msgs, fmt.Sprintf("no kernel image for your %s in %s (it carries %s): CUDA calls fail with \"no kernel image is available\"", v.SM, where, f.Carries))
				hints = append(hints, fmt.Sprintf("install a %s build with %s kernels (see: cudaenv compat %s==%s)", f.Name, v.SM, f.Name, strings.SplitN(f.Version, "+", 2)[0]))
			case "driver":
				raise(Fail)
				msgs = append(msgs, fmt.Sprintf("%s: %s", where, v.Message))
			}
		}
	}
	c.Message = strings.Join(msgs, "; ")
	c.Hint = strings.Join(dedupe(hints), "; ")
	return c
}

func dedupe(list []string) []string {
	var out []string
	for _, s := range list {
		if !contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// checkImport judges a framework's import as inspect simulated it: a
// symbol missing is the "undefined symbol" error; a library of the
// wheels that LD_LIBRARY_PATH's copy replaces, without one missing, works.
func checkImport(in Libraries, f Framework) (Check, bool) {
	c := Check{ID: IDLibraries}
	if len(f.Loaded) == 0 && len(f.Undefined) == 0 {
		return c, false
	}
	wheelOf := map[string]int{} // soname -> index in in.Wheels
	for i, w := range in.Wheels {
		if _, ok := wheelOf[w.Soname]; !ok {
			wheelOf[w.Soname] = i
		}
	}
	// Collisions: a library the wheels have, picked from a folder on
	// LD_LIBRARY_PATH instead.
	var collide []Shadow
	var missing []string
	for _, l := range f.Loaded {
		if l.Path == "" {
			missing = append(missing, l.Name)
			continue
		}
		i, ok := wheelOf[l.Name]
		if !ok {
			continue
		}
		if d, ok := dirHolding(in.Dirs, l.Path); ok && filepath.Clean(in.Wheels[i].Path) != filepath.Clean(l.Path) {
			collide = append(collide, Shadow{Lib: in.Wheels[i], Dir: d, Version: versionIn(d, l.Name)})
		}
	}
	name := f.title()
	switch {
	case len(f.Undefined) > 0:
		u := f.Undefined[0]
		sym, ver, _ := strings.Cut(u.Symbol, "@")
		c.Status = Fail
		c.Message = fmt.Sprintf("importing %s fails with \"undefined symbol: %s, version %s\": %s needs it from %s, and the loader picks %s", name, sym, ver, filepath.Base(u.By), u.Library, u.Picked)
		if d, ok := dirHolding(in.Dirs, u.Picked); ok {
			c.Message += " (" + d.name() + " on LD_LIBRARY_PATH)"
			for _, s := range collide {
				if s.Lib.Soname == u.Library {
					c.Message += fmt.Sprintf(" instead of %s's %s %s", f.Name, s.Lib.Wheel, s.Lib.Version)
					c.Hint = librariesHint(in, s, f.Name)
				}
			}
			if c.Hint == "" {
				c.Hint = librariesHint(in, Shadow{Dir: d, Lib: libFor(in, u.Library)}, f.Name)
			}
		}
		if len(f.Undefined) > 1 {
			c.Message += fmt.Sprintf(" (and %d more symbols)", len(f.Undefined)-1)
		}
	case len(collide) > 0:
		c.Status = OK
		var older []Shadow
		for _, s := range collide {
			if s.older() {
				older = append(older, s)
			}
		}
		if len(older) > 0 {
			c.Status = Warn
			c.Message = shadowLine(older[0], f.Name) + alsoLine(older[1:]) + ": importing " + name + " works (no symbol it needs is missing), but it runs on older libraries than its wheels'"
			c.Hint = librariesHint(in, older[0], f.Name)
		} else {
			c.Message = fmt.Sprintf("LD_LIBRARY_PATH's copies of %d of %s's wheel libraries load first, and are as new as the wheels'", len(collide), name)
		}
	case len(missing) > 0:
		c.Status = Warn
		c.Message = fmt.Sprintf("importing %s finds no %s", name, strings.Join(missing, ", "))
	default:
		c.Status = OK
		how := "its RPATH"
		if f.Modeled {
			how = "by path and RPATH"
		}
		c.Message = fmt.Sprintf("%s loads %d CUDA libraries, those of its wheels %s: nothing on LD_LIBRARY_PATH is taken instead", name, len(f.Loaded), how)
		if in.NoLibraries {
			c.Message = "libraries=off: " + c.Message
		}
	}
	return c, true
}

// libFor is the wheel library of a soname, or one named only by it.
func libFor(in Libraries, soname string) detect.WheelLib {
	for _, w := range in.Wheels {
		if w.Soname == soname {
			return w
		}
	}
	return detect.WheelLib{Soname: soname}
}

// dirHolding is the LD_LIBRARY_PATH folder a picked file is in.
func dirHolding(dirs []LibDir, p string) (LibDir, bool) {
	dir := filepath.Clean(filepath.Dir(p))
	for _, d := range dirs {
		if filepath.Clean(d.Dir) == dir {
			return d, true
		}
	}
	return LibDir{}, false
}

// versionIn is the version of a folder's copy of a library, from the
// receipt's components ("" when it does not say).
func versionIn(d LibDir, soname string) string {
	return d.Components[componentOf(soname)]
}

// checkImports is the libraries check from the frameworks' simulated
// imports: the worst of them; false when no framework's import was read.
func checkImports(in Libraries) (Check, bool) {
	var worst Check
	found := false
	for _, f := range in.Frameworks {
		c, ok := checkImport(in, f)
		if !ok {
			continue
		}
		if !found || c.Status.rank() > worst.Status.rank() {
			worst = c
		}
		found = true
	}
	return worst, found
}
