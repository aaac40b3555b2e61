package doctor

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cudaenv/cudaenv/internal/detect"
)

// IDLibraries is the check that the libraries on LD_LIBRARY_PATH do not
// shadow newer ones a framework's nvidia-* wheels installed (the
// "undefined symbol: __nvJitLinkAddData_12_1" trap: the dynamic loader
// searches LD_LIBRARY_PATH before the framework's RUNPATH).
const IDLibraries = "libraries"

// LibDir is a folder on LD_LIBRARY_PATH, in the order the loader searches.
type LibDir struct {
	Dir string
	// What names it: "CUDA 12.1.1" for the selection's; "" for another
	// entry of the environment's LD_LIBRARY_PATH (named by its path).
	What string
	// Components are the receipt's component versions (libnvjitlink:
	// 12.1.105), for libraries whose file names carry no version (a
	// toolkit from NVIDIA's wheels: libcublas.so.12 and nothing more).
	Components map[string]string
	// Receipt, if set, reads them when Components lacks one: the prompt
	// hook's entries decode no receipt until a library collides.
	Receipt func() map[string]string
}

// component is the version the folder's receipt gives a component, "" if none.
func (d LibDir) component(id string) string {
	if v, ok := d.Components[id]; ok {
		return v
	}
	if d.Receipt != nil {
		return d.Receipt()[id]
	}
	return ""
}

func (d LibDir) name() string {
	if d.What != "" {
		return d.What + "'s"
	}
	return d.Dir + "'s"
}

// Libraries is what the libraries check judges.
type Libraries struct {
	GOOS string
	// Python names the environment the wheels were read from: a venv's
	// or conda's prefix, or the site-packages of the PyTorch found.
	Python string
	Wheels []detect.WheelLib
	// Dirs are the folders the selection puts on LD_LIBRARY_PATH (none
	// with libraries=off), then the environment's other entries.
	Dirs []LibDir
	// NoLibraries: the selection says libraries=off.
	NoLibraries bool
	// Selected is the selection's version words for a hint ("12.1");
	// TorchCUDA the CUDA the PyTorch found was built with ("12.4").
	Selected, TorchCUDA string
	// InstalledCUDA are the installed toolkit versions.
	InstalledCUDA []string
	// ReadErr says why the wheels could not be read (too slow).
	ReadErr string
	// Shadows is filled by GatherLibraries: each wheel library a folder
	// on LD_LIBRARY_PATH holds too, the first such folder.
	Shadows []Shadow
	// Frameworks are the installed frameworks as cudaenv inspect read
	// them: what importing each loads. When one was read, the check
	// judges what the loader would pick, not which folder has a copy.
	Frameworks []Framework
}

// Shadow is a wheel's library that a folder on LD_LIBRARY_PATH also has,
// so the loader takes that folder's copy.
type Shadow struct {
	Lib     detect.WheelLib
	Dir     LibDir
	Version string // the folder's copy's version; "" when its names do not say
	// OwnFirst names the framework that loads the wheel's copy ahead of
	// LD_LIBRARY_PATH's ("torch 2.9.0"), so the folder's is not taken;
	// "" when none does (ownFirst).
	OwnFirst string
}

// older reports whether the folder's copy is older than the wheel's,
// comparing the parts both versions have (9.1.0 is cuDNN 9.1.0.70).
func (s Shadow) older() bool {
	return s.Version != "" && comparePrefix(s.Version, s.Lib.Version) < 0
}

func comparePrefix(a, b string) int {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(pa) && i < len(pb); i++ {
		x, errx := strconv.Atoi(pa[i])
		y, erry := strconv.Atoi(pb[i])
		if errx != nil || erry != nil {
			return 0
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

// GatherLibraries finds, for each wheel library, the first folder in
// in.Dirs that has a file of the same soname, that copy's version, and
// whether the framework takes the wheel's copy first anyway
// (Shadow.OwnFirst).
func GatherLibraries(h detect.Host, in Libraries) Libraries {
	in.Shadows = nil
	for _, lib := range in.Wheels {
		for _, d := range in.Dirs {
			if !h.Exists(filepath.Join(d.Dir, lib.Soname)) {
				continue
			}
			v, ok := h.LibVersion(d.Dir, lib.Soname)
			if !ok {
				v = d.component(componentOf(lib.Soname))
			}
			in.Shadows = append(in.Shadows, Shadow{Lib: lib, Dir: d, Version: v, OwnFirst: ownFirst(lib)})
			break
		}
	}
	return in
}

// componentOf is the redist component (as receipts name them) that ships
// a soname: libnvJitLink.so.12 is libnvjitlink's.
func componentOf(soname string) string {
	base, _, _ := strings.Cut(soname, ".so")
	switch {
	case strings.HasPrefix(base, "libcusparseLt"):
		return "cusparselt" // the library entries name theirs after the product
	case strings.HasPrefix(base, "libnccl"):
		return "nccl"
	case strings.HasPrefix(base, "libcutensor"):
		return "cutensor"
	case strings.HasPrefix(base, "libcudss"):
		return "cudss"
	case strings.HasPrefix(base, "libnvshmem"):
		return "nvshmem"
	case strings.HasPrefix(base, "libcublas"), base == "libnvblas":
		return "libcublas"
	case strings.HasPrefix(base, "libcusparse"):
		return "libcusparse"
	case strings.HasPrefix(base, "libcusolver"):
		return "libcusolver"
	case strings.HasPrefix(base, "libcufft"):
		return "libcufft"
	case strings.HasPrefix(base, "libnpp"):
		return "libnpp"
	case strings.HasPrefix(base, "libnvrtc"):
		return "cuda_nvrtc"
	case strings.HasPrefix(base, "libcupti"), strings.HasPrefix(base, "libnvperf"):
		return "cuda_cupti"
	case base == "libcudart":
		return "cuda_cudart"
	case base == "libnvToolsExt":
		return "cuda_nvtx"
	case base == "libnvvm":
		return "cuda_nvcc"
	case strings.HasPrefix(base, "libcudnn"):
		return "cudnn"
	}
	return strings.ToLower(base) // libnvjitlink, libcurand, libnvjpeg, libcufile
}

// CheckLibraries judges the libraries a Python environment's wheels
// brought against what LD_LIBRARY_PATH puts first.
func CheckLibraries(in Libraries) Check {
	c := Check{ID: IDLibraries}
	if in.GOOS == "windows" {
		c.Status, c.Message = Skip, "Windows finds DLLs without LD_LIBRARY_PATH"
		return c
	}
	if in.ReadErr != "" {
		c.Status, c.Message = Skip, in.ReadErr
		return c
	}
	if c, ok := checkImports(in); ok {
		return c
	}
	if in.Python == "" {
		c.Status, c.Message = Skip, "no Python environment (VIRTUAL_ENV, CONDA_PREFIX, or site-packages of a python3 on PATH)"
		return c
	}
	if len(in.Wheels) == 0 {
		c.Status, c.Message = Skip, "no nvidia-* wheel libraries in "+in.Python
		return c
	}
	fw := frameworkName(in.Wheels)
	var older, unknown, ownFirst []Shadow
	for _, s := range in.Shadows {
		switch {
		case s.OwnFirst != "" && (s.older() || s.Version == ""):
			ownFirst = append(ownFirst, s)
		case s.older():
			older = append(older, s)
		case s.Version == "":
			unknown = append(unknown, s)
		}
	}
	switch {
	case len(older) > 0:
		c.Status = Fail
		c.Message = shadowLine(older[0], fw) + ": " + importing(fw) + ` fails with "undefined symbol"` + alsoLine(older[1:])
		c.Hint = librariesHint(in, older[0], fw)
	case len(unknown) > 0:
		c.Status = Warn
		c.Message = shadowLine(unknown[0], fw) + `; if it is older, ` + importing(fw) + ` fails with "undefined symbol"` + alsoLine(unknown[1:])
		c.Hint = librariesHint(in, unknown[0], fw)
	case in.NoLibraries:
		c.Status = OK
		c.Message = fmt.Sprintf("libraries=off: LD_LIBRARY_PATH is left to %s's nvidia-* wheels (%s)", fw, libraryCount(len(in.Wheels)))
	case len(ownFirst) > 0:
		s := ownFirst[0]
		c.Status = OK
		how := "through its RPATH"
		if viaRunpath(s.Lib.Soname) {
			how = "by path, before torch._C"
		}
		c.Message = fmt.Sprintf("%s takes its %s %s ahead of LD_LIBRARY_PATH (%s), so %s %s (%s) is not loaded in its place",
			s.OwnFirst, s.Lib.Wheel, s.Lib.Version, how, s.Dir.name(), s.Lib.Soname, shadowVersion(s)) + alsoLine(ownFirst[1:])
	case len(in.Shadows) > 0:
		c.Status = OK
		c.Message = fmt.Sprintf("LD_LIBRARY_PATH's copies of %d of %s's wheel libraries are as new as the wheels'", len(in.Shadows), fw)
	default:
		c.Status = OK
		c.Message = fmt.Sprintf("nothing on LD_LIBRARY_PATH shadows %s's nvidia-* wheels (%s)", fw, libraryCount(len(in.Wheels)))
	}
	return c
}

// frameworkName is the framework that requires the wheels ("torch"),
// else a description of the environment's wheels.
func frameworkName(libs []detect.WheelLib) string {
	for _, l := range libs {
		if l.Framework != "" {
			return l.Framework
		}
	}
	return noFramework
}

// noFramework names the wheels' user when no known framework requires them.
const noFramework = "the environment"

// importing says what fails: importing the framework, or, when no known
// framework requires the wheels, what loads them.
func importing(fw string) string {
	if fw == noFramework {
		return "a program that loads them"
	}
	return "importing " + fw
}

func shadowLine(s Shadow, fw string) string {
	return fmt.Sprintf("LD_LIBRARY_PATH loads %s %s (%s) before %s's %s %s", s.Dir.name(), s.Lib.Soname, shadowVersion(s), fw, s.Lib.Wheel, s.Lib.Version)
}

func shadowVersion(s Shadow) string {
	if s.Version == "" {
		return "of a version its file names do not say"
	}
	return s.Version
}

func alsoLine(more []Shadow) string {
	if len(more) == 0 {
		return ""
	}
	var names []string
	for _, s := range more {
		names = append(names, s.Lib.Soname)
	}
	return " (also " + strings.Join(names, ", ") + ")"
}

// librariesHint is the way out: the CUDA the framework was built with, or
// the libraries left to the framework; for a folder that is not the
// selection's, taking it off LD_LIBRARY_PATH.
func librariesHint(in Libraries, s Shadow, fw string) string {
	if s.Dir.What == "" {
		return "take " + s.Dir.Dir + " off LD_LIBRARY_PATH (" + fw + " loads its own libraries from its wheels)"
	}
	want := in.TorchCUDA
	if want == "" {
		want = majorMinor(s.Lib.Version)
	}
	use := "cudaenv install " + want + " && cudaenv use " + want
	if v := newestInstalled(in.InstalledCUDA, want); v != "" {
		use = "cudaenv use " + v
	}
	off := "cudaenv use --libraries=off " + in.Selected
	if in.Selected == "" {
		off = "cudaenv use --libraries=off VERSION"
	}
	if sel, _, _ := strings.Cut(in.Selected, " "); sel != "" && (sel == want || strings.HasPrefix(sel, want+".")) {
		// The release line wanted is the one selected: selecting it again
		// changes nothing.
		return fmt.Sprintf("leave the libraries to %s and use the toolkit for building only (%s; `cudaenv local --libraries=off` writes it to .cuda-version)", fw, off)
	}
	built := "the CUDA " + fw + " was built with"
	if fw == noFramework {
		built = "the CUDA the wheels come from"
	}
	return fmt.Sprintf("select %s (%s; %s in .cuda-version), or leave the libraries to %s and use the toolkit for building only (%s; `cudaenv local --libraries=off` writes it to .cuda-version)",
		built, use, want, fw, off)
}

// newestInstalled is the newest installed version within the release
// line want (12.4 -> 12.4.1), or "".
func newestInstalled(installed []string, want string) string {
	best := ""
	for _, v := range installed {
		if v != want && !strings.HasPrefix(v, want+".") {
			continue
		}
		if best == "" || comparePrefix(v, best) > 0 || (comparePrefix(v, best) == 0 && len(v) > len(best)) {
			best = v
		}
	}
	return best
}

// LibrariesWarning is the prompt hook's one line when a toolkit becomes
// active: the first library of the selection's folders that is older
// than a wheel's in the active venv or conda environment and that the
// framework does not take its own copy of first (torch takes most through
// its RPATH, and all from 2.6 on: ownFirst), which is where doctor's check
// fails; "" when none is. It
// starts no process and reads no library; it reads dist-info files only
// for sonames that collide (torch's METADATA among them, which gives its
// version).
func LibrariesWarning(h detect.Host, sites []string, dirs []LibDir) string {
	if len(sites) == 0 || len(dirs) == 0 {
		return ""
	}
	collides := func(soname string) bool {
		for _, d := range dirs {
			if h.Exists(filepath.Join(d.Dir, soname)) {
				return true
			}
		}
		return false
	}
	libs := h.WheelLibsWhere(sites, collides)
	if len(libs) == 0 {
		return ""
	}
	in := GatherLibraries(h, Libraries{Wheels: libs, Dirs: dirs})
	fw := frameworkName(libs)
	for _, s := range in.Shadows {
		if s.older() && s.OwnFirst == "" {
			return shadowLine(s, fw) + ": " + importing(fw) + ` fails with "undefined symbol"; see: cudaenv doctor`
		}
	}
	return ""
}

// ownFirst is the framework that takes a wheel library of its own ahead
// of any copy on LD_LIBRARY_PATH ("torch 2.9.0"), "" for none. PyTorch's
// libraries find their wheels' through DT_RPATH, which the loader
// searches before LD_LIBRARY_PATH; only what another wheel library finds
// through a RUNPATH of its own, after LD_LIBRARY_PATH (viaRunpath), can
// be taken from a toolkit instead, and from 2.6 on torch's __init__.py
// loads those by path first (cudabin models all this from the files;
// scripts/e2e-pypi.sh step 9c: 2.7.0 imports under CUDA 12.1.1's older
// cuBLAS, cuSPARSE and nvJitLink, 2.5.1 fails on its nvJitLink). The
// version is torch's METADATA's: nothing more is read.
func ownFirst(lib detect.WheelLib) string {
	if lib.Framework != "torch" {
		return ""
	}
	name := "torch"
	if v := lib.FrameworkVersion; v != "" {
		name += " " + strings.SplitN(v, "+", 2)[0]
	}
	if releaseAtLeast(lib.FrameworkVersion, 2, 6) || !viaRunpath(lib.Soname) {
		return name
	}
	return ""
}

// viaRunpath reports whether PyTorch loads a library of its wheels only
// as what another wheel library needs through a RUNPATH of its own:
// libcusparse's libnvJitLink, the libnvrtc cuDNN opens (the two its
// __init__.py loads by path from 2.6 on, "to workaround slim-wheel CUDA
// dependency bugs in cusparse and cudnn").
func viaRunpath(soname string) bool {
	return strings.HasPrefix(soname, "libnvJitLink.so.") || strings.HasPrefix(soname, "libnvrtc.so.")
}

// releaseAtLeast reports whether the release of a PEP 440 version
// ("2.9.0+cu128", "2.10.0a0") is major.minor or later.
func releaseAtLeast(v string, major, minor int) bool {
	parts := strings.SplitN(strings.SplitN(v, "+", 2)[0], ".", 3)
	if len(parts) < 2 {
		return false
	}
	num := func(s string) int {
		n := 0
		for i := 0; i < len(s) && i < 6 && s[i] >= '0' && s[i] <= '9'; i++ {
			n = n*10 + int(s[i]-'0')
		}
		return n
	}
	x, y := num(parts[0]), num(parts[1])
	return x > major || (x == major && y >= minor)
}

// libraryCount is "1 library" or "N libraries".
func libraryCount(n int) string {
	if n == 1 {
		return "1 library"
	}
	return fmt.Sprintf("%d libraries", n)
}
