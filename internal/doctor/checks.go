package doctor

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/cudaenv/cudaenv/compat"
	"github.com/cudaenv/cudaenv/internal/detect"
	"github.com/cudaenv/cudaenv/internal/version"
)

func checkToolkit(in Inputs) Check {
	c := checkToolkitTree(in)
	tk := in.Toolkit
	if c.Status == OK && len(tk.Facts.MissingStubs) > 0 {
		// Compiling works; linking a program of the driver API or NVML
		// does not, where no driver is installed (CI, build machines).
		c.Status = Warn
		c.Message += fmt.Sprintf("; it has no link stubs (%s): programs linking -lcuda or -lnvidia-ml (pycuda, nccl-tests, llm.c) fail to link where no driver is installed", strings.Join(tk.Facts.MissingStubs, ", "))
		c.Hint = "reinstall it; cudaenv writes the stubs now: cudaenv install " + tk.Version + " --force"
		if tk.From == "link" {
			c.Hint = "it is a linked tree: add NVIDIA's stubs to it (they come with cuda_cudart and cuda_nvml_dev), or install cudaenv's own: cudaenv install " + tk.Version
		}
	}
	return c
}

func checkToolkitTree(in Inputs) Check {
	tk := in.Toolkit
	c := Check{ID: IDToolkit}
	where := ""
	if tk.Source != "" {
		where = " (" + tk.Source + ")"
	}
	switch {
	case tk.Version == "":
		c.Status, c.Message = Warn, "no CUDA toolkit is selected"
		c.Hint = "select one: " + useOrInstall(in.InstalledCUDA, func(version.Version) bool { return true }, "12.4")
	case !tk.Installed:
		c.Status = Fail
		c.Message = fmt.Sprintf("CUDA %s is selected%s but not installed", tk.Version, where)
		c.Hint = "cudaenv install " + tk.Version
	case tk.Damage != "":
		// Before librariesOnly: a deleted bin/ is damage, not a kind.
		c.Status = Fail
		c.Message = fmt.Sprintf("CUDA %s at %s is damaged: %s", tk.Version, tk.Dir, tk.Damage)
		// As list and verify say it: a repair keeps the entry's source,
		// components and builds, which install --force does not.
		c.Hint = "repair it: cudaenv verify --repair " + tk.Version
	case in.librariesOnly():
		// A kind of install, not a fault: say what it is good for.
		c.Status = OK
		from := ""
		if tk.From != "" {
			from = " (" + tk.From + ")"
		}
		c.Message = fmt.Sprintf("CUDA %s at %s is libraries only%s: it runs prebuilt programs and wheels (PyTorch, CuPy) and host code links against its libraries; it has no nvcc to compile CUDA code", tk.Version, tk.Dir, from)
		c.Hint = "to compile CUDA code, select a toolkit with nvcc (from PyPI: cudaenv install 13 --source pypi --profile minimal)"
	case len(tk.Facts.Missing) > 0:
		c.Status = Fail
		c.Message = fmt.Sprintf("CUDA %s at %s is incomplete: %s missing", tk.Version, tk.Dir, strings.Join(tk.Facts.Missing, ", "))
		c.Hint = "reinstall it: cudaenv install " + tk.Version
		if tk.From == "link" {
			// cudaenv did not install it, so it cannot reinstall it.
			c.Hint = fmt.Sprintf("it is a linked tree: complete it, or replace it with cudaenv's own: cudaenv uninstall %s && cudaenv install %s", tk.Version, tk.Version)
		}
	case len(tk.Facts.LinkMissing) > 0:
		c.Status = Fail
		c.Message = fmt.Sprintf("CUDA %s at %s compiles but cannot link programs: %s missing (nvcc x.cu -o x and CMake's compiler check fail)", tk.Version, tk.Dir, strings.Join(tk.Facts.LinkMissing, ", "))
		c.Hint = "reinstall it: cudaenv install " + tk.Version + " --force"
		if tk.From == "pypi" {
			mm := majorMinor(tk.Version)
			c.Hint = fmt.Sprintf("its wheels lack these files; install a release whose wheels have them: cudaenv uninstall %s && cudaenv install %s --source pypi", tk.Version, mm)
		}
	case tk.Facts.Version != "" && compat.CompareVersions(majorMinor(tk.Facts.Version), majorMinor(tk.Version)) != 0:
		c.Status = Fail
		c.Message = fmt.Sprintf("CUDA %s is selected%s but %s holds CUDA %s (from %s)", tk.Version, where, tk.Dir, tk.Facts.Version, tk.Facts.VersionSource)
		c.Hint = "reinstall it: cudaenv install " + tk.Version
	case !tk.HasReceipt:
		c.Status = Warn
		c.Message = fmt.Sprintf("CUDA %s at %s has no install receipt: not installed by cudaenv, or the install was interrupted", tk.Version, tk.Dir)
		c.Hint = "reinstall it: cudaenv install " + tk.Version
	default:
		c.Status = OK
		c.Message = fmt.Sprintf("CUDA %s at %s%s", tk.Version, tk.Dir, where)
	}
	return c
}

func checkDriver(in Inputs) Check {
	c := Check{ID: IDDriver}
	d := in.Driver
	switch {
	case d.Tegra != "":
		c.Status, c.Message = Skip, d.Detail
		return c
	case !d.Found():
		c.Status = Skip
		c.Message = "no NVIDIA driver: fine for building, nothing can run here"
		if d.Detail != "" {
			c.Message += " (" + d.Detail + ")"
		}
		return c
	}
	cuda := in.cudaVersion()
	goos := in.goos()
	maxCUDA, _ := compat.MaxCUDAForDriver(d.Version, goos)
	if cuda == "" {
		c.Status = OK
		c.Message = fmt.Sprintf("driver %s", d.Version)
		if maxCUDA != "" {
			c.Message += " runs CUDA up to " + maxCUDA
		}
		return c
	}
	chk := compat.CheckDriver(cuda, d.Version, goos)
	from := ""
	if !chk.Req.Exact && chk.Req.Release != "" {
		from = fmt.Sprintf(", as for %s", chk.Req.Release)
	}
	switch chk.Status {
	case compat.DriverOK:
		c.Status = OK
		c.Message = fmt.Sprintf("driver %s runs CUDA %s (needs %s or newer%s)", d.Version, cuda, orUnknown(chk.Need, chk.Floor), from)
	case compat.DriverMinorCompat:
		if chk.Req.Unbundled() && goos != "windows" {
			// The normal state from 13.4: no driver ships with the toolkit.
			c.Status = OK
			c.Message = fmt.Sprintf("driver %s runs CUDA %s: it runs on %s or newer (minor-version compatibility); the %s developer driver (R%s, %s or newer) is needed for %s's new features%s",
				d.Version, cuda, chk.Floor, majorMinor(chk.Req.Release), strings.SplitN(chk.Need, ".", 2)[0], chk.Need, majorMinor(chk.Req.Release), from)
			break
		}
		c.Status = Warn
		c.Message = fmt.Sprintf("driver %s is older than CUDA %s wants (%s%s) and runs it only through minor-version compatibility: code built with %s runs, but PTX newer than the driver cannot be JIT-compiled",
			d.Version, cuda, chk.Need, from, majorMinor(cuda))
		c.Hint = "upgrade the NVIDIA driver to " + chk.Need + " or newer"
		if maxCUDA != "" {
			c.Hint += fmt.Sprintf(", or use CUDA %s, the newest it fully supports", maxCUDA)
		}
	case compat.DriverTooOld:
		c.Status = Fail
		c.Message = fmt.Sprintf("driver %s cannot run CUDA %s (needs %s or newer%s", d.Version, cuda, orUnknown(chk.Need, chk.Floor), from)
		if chk.Floor != "" && chk.Need != "" {
			c.Message += ", " + chk.Floor + " for minor-version compatibility"
		}
		c.Message += ")"
		c.Hint = "upgrade the NVIDIA driver to " + orUnknown(chk.Need, chk.Floor) + " or newer"
		if maxCUDA != "" {
			c.Hint += ", or select a CUDA it runs: " + useOrInstall(in.InstalledCUDA, atMost(maxCUDA), maxCUDA)
		}
	default:
		c.Status = Warn
		c.Message = fmt.Sprintf("driver %s; no driver requirement is known for CUDA %s", d.Version, cuda)
	}
	return c
}

func orUnknown(need, floor string) string {
	if need != "" {
		return need
	}
	if floor != "" {
		return floor
	}
	return "an unknown version"
}

func checkGPUArch(in Inputs) Check {
	c := Check{ID: IDGPUArch}
	cuda := in.cudaVersion()
	archs := in.Toolkit.Facts.Archs
	if len(archs) == 0 && cuda != "" {
		archs = compat.ArchsFor(cuda)
	}
	switch {
	case len(in.GPUs) == 0:
		c.Status, c.Message = Skip, "no GPU found"
		if in.GPUError != "" {
			c.Message += " (" + in.GPUError + ")"
		}
		return c
	case cuda == "":
		c.Status, c.Message = Skip, "no toolkit selected to compare the GPUs with"
		return c
	case len(archs) == 0:
		c.Status, c.Message = Skip, fmt.Sprintf("which GPUs CUDA %s can target is unknown", cuda)
		return c
	}
	lowest, newest := archs[0], archs[len(archs)-1]
	type verdict struct {
		status        Status
		message, hint string
	}
	var verdicts []verdict
	for _, g := range groupGPUs(in.GPUs) {
		name := g.name
		if g.count > 1 {
			name = fmt.Sprintf("%dx %s", g.count, g.name)
		}
		cc, ok := compat.ParseCapability(g.cc)
		switch {
		case !ok:
			verdicts = append(verdicts, verdict{Skip, fmt.Sprintf("%s did not report its compute capability", name), ""})
		case contains(archs, cc):
			verdicts = append(verdicts, verdict{OK, fmt.Sprintf("%s (%s) is a target of CUDA %s", name, compat.SM(cc), cuda), ""})
		case compat.CompareVersions(cc, newest) > 0:
			v := verdict{Warn, fmt.Sprintf("%s (%s) is newer than CUDA %s can target (up to %s): its code runs only by JIT-compiling PTX, and builds for %s fail",
				name, compat.SM(cc), cuda, compat.SM(newest), compat.SM(cc)), ""}
			if a, ok := compat.ArchInfo(cc); ok {
				v.hint = fmt.Sprintf("use CUDA %s or newer for %s", a.MinCUDA, compat.SM(cc))
			}
			verdicts = append(verdicts, v)
		case compat.CompareVersions(cc, lowest) < 0:
			v := verdict{Fail, fmt.Sprintf("%s (%s) is older than CUDA %s can target (from %s): nothing it builds runs on this GPU",
				name, compat.SM(cc), cuda, compat.SM(lowest)), ""}
			if a, ok := compat.ArchInfo(cc); ok && a.MaxCUDA != "" {
				v.hint = fmt.Sprintf("use CUDA %s or older for %s", a.MaxCUDA, compat.SM(cc))
			}
			verdicts = append(verdicts, v)
		default:
			verdicts = append(verdicts, verdict{Fail, fmt.Sprintf("%s (%s) is not a target of CUDA %s", name, compat.SM(cc), cuda), ""})
		}
	}
	var msgs, hints []string
	c.Status = Skip
	for _, v := range verdicts {
		if v.status.rank() > c.Status.rank() || c.Status == Skip && v.status == OK {
			c.Status = v.status
		}
		msgs = append(msgs, v.message)
		if v.hint != "" {
			hints = append(hints, v.hint)
		}
	}
	c.Message = strings.Join(msgs, "; ")
	c.Hint = strings.Join(hints, "; ")
	return c
}

type gpuGroup struct {
	name, cc string
	count    int
}

// groupGPUs folds identical GPUs together, keeping first-seen order.
func groupGPUs(gpus []detect.GPU) []gpuGroup {
	var out []gpuGroup
	for _, g := range gpus {
		found := false
		for i := range out {
			if out[i].name == g.Name && out[i].cc == g.ComputeCap {
				out[i].count++
				found = true
			}
		}
		if !found {
			out = append(out, gpuGroup{g.Name, g.ComputeCap, 1})
		}
	}
	return out
}

func checkCudnn(in Inputs) Check {
	c := Check{ID: IDCudnn}
	cd := in.Cudnn
	cuda := in.cudaVersion()
	if cd.Version == "" {
		c.Status, c.Message = Skip, "no cuDNN selected"
		return c
	}
	if cuda == "" {
		c.Status, c.Message = Skip, fmt.Sprintf("cuDNN %s; no toolkit selected to compare it with", cd.Version)
		return c
	}
	major := compat.Major(cuda)
	rel, known := compat.Cudnn(cd.Version)
	switch {
	case cd.Damage != "":
		c.Status = Fail
		c.Message = fmt.Sprintf("cuDNN %s at %s is damaged: %s", cd.Version, cd.Dir, cd.Damage)
		c.Hint = fmt.Sprintf("repair it: cudaenv verify --repair cudnn@%s --cuda-major %d", cd.Version, cd.VariantMajor)
	case known && rel.Exact && !rel.Supports(major):
		c.Status = Fail
		c.Message = fmt.Sprintf("cuDNN %s has no build for CUDA %d (only for CUDA %s), but CUDA %s is selected", cd.Version, major, joinInts(rel.CUDAMajors, " and "), cuda)
		c.Hint = cudnnHint(major)
	case cd.VariantMajor != 0 && cd.VariantMajor != major:
		c.Status = Fail
		c.Message = fmt.Sprintf("cuDNN %s is the %s build, but CUDA %s is selected", cd.Version, compat.CudnnVariant(cd.VariantMajor), cuda)
		if known && rel.Supports(major) {
			c.Hint = fmt.Sprintf("install the %s build of cuDNN %s", compat.CudnnVariant(major), cd.Version)
		} else {
			c.Hint = cudnnHint(major)
		}
	case cd.VariantMajor == major:
		c.Status = OK
		c.Message = fmt.Sprintf("cuDNN %s (%s build) matches CUDA %s", cd.Version, compat.CudnnVariant(major), cuda)
	case known && rel.Exact:
		c.Status = OK
		c.Message = fmt.Sprintf("cuDNN %s has a CUDA %d build (which build is installed is not recorded)", cd.Version, major)
	default:
		c.Status = Warn
		c.Message = fmt.Sprintf("cuDNN %s: which CUDA majors it is built for is not known, nor which build is installed", cd.Version)
	}
	return c
}

// cudnnHint names the newest known cuDNN release with a build for major.
func cudnnHint(major int) string {
	newest := ""
	for _, rel := range compat.CudnnReleases() {
		if rel.Supports(major) {
			newest = rel.Label
		}
	}
	if newest == "" {
		return fmt.Sprintf("pick a cuDNN built for CUDA %d", major)
	}
	return fmt.Sprintf("pick a cuDNN built for CUDA %d, e.g. %s (%s build)", major, newest, compat.CudnnVariant(major))
}

func checkHostCompiler(in Inputs) Check {
	c := Check{ID: IDHostCompiler}
	cuda := in.cudaVersion()
	facts := in.Toolkit.Facts
	lim := facts.HostLimits
	switch {
	case cuda == "" || !in.Toolkit.Installed && facts.Dir == "":
		c.Status, c.Message = Skip, "no toolkit to ask which host compilers it accepts"
		return c
	case in.librariesOnly():
		c.Status, c.Message = Skip, fmt.Sprintf("CUDA %s is libraries only: no nvcc to limit the host compiler", cuda)
		return c
	case !facts.HasHostLimits:
		c.Status = Skip
		if facts.HostConfig == "" {
			c.Message = fmt.Sprintf("CUDA %s has no include/crt/host_config.h to read its host compiler limits from", cuda)
		} else {
			c.Message = fmt.Sprintf("%s states no host compiler limits", facts.HostConfig)
		}
		return c
	case in.goos() == "windows":
		c.Status = Skip
		c.Message = fmt.Sprintf("MSVC is not detected; nvcc %s accepts _MSC_VER %d to %d", cuda, lim.MSVCMin, lim.MSVCMax)
		return c
	}
	var active *detect.Compiler
	for i := range in.Compilers {
		if in.Compilers[i].Active {
			active = &in.Compilers[i]
		}
	}
	alt := bestAccepted(in.Compilers, lim)
	if active == nil {
		c.Status = Fail
		c.Message = fmt.Sprintf("no g++ or gcc on PATH for nvcc %s to use (it accepts %s)", cuda, unixLimits(lim))
		if alt != nil {
			c.Hint = "export NVCC_CCBIN=" + alt.Path
		} else {
			c.Hint = installHint(lim)
		}
		return c
	}
	name := fmt.Sprintf("%s %s (%s)", filepath.Base(active.Path), active.Version, active.Path)
	if active.Version == "" {
		c.Status = Warn
		c.Message = fmt.Sprintf("could not ask %s for its version; nvcc %s accepts %s", active.Path, cuda, unixLimits(lim))
		return c
	}
	if lim.Accepts(active.Kind, active.Version) {
		c.Status = OK
		c.Message = fmt.Sprintf("%s is accepted by nvcc %s (%s)", name, cuda, unixLimits(lim))
		return c
	}
	c.Status = Fail
	c.Message = fmt.Sprintf("%s is not accepted by nvcc %s, which takes %s", name, cuda, unixLimits(lim))
	if active.Via != "PATH" {
		c.Message += " (chosen by " + active.Via + ")"
	}
	if alt != nil {
		c.Hint = "export NVCC_CCBIN=" + alt.Path
	} else {
		c.Hint = installHint(lim)
	}
	return c
}

// bestAccepted picks the installed compiler to suggest: accepted by nvcc,
// newest version, C++ drivers (g++, clang++) before C ones, GCC before clang.
func bestAccepted(cs []detect.Compiler, lim compat.HostLimits) *detect.Compiler {
	var ok []*detect.Compiler
	for i := range cs {
		if cs[i].Version != "" && lim.Accepts(cs[i].Kind, cs[i].Version) {
			ok = append(ok, &cs[i])
		}
	}
	sort.SliceStable(ok, func(i, j int) bool {
		a, b := ok[i], ok[j]
		if a.Kind != b.Kind {
			return a.Kind == "gcc"
		}
		if pa, pb := strings.Contains(filepath.Base(a.Path), "++"), strings.Contains(filepath.Base(b.Path), "++"); pa != pb {
			return pa
		}
		return compat.CompareVersions(a.Version, b.Version) > 0
	})
	if len(ok) == 0 {
		return nil
	}
	return ok[0]
}

func installHint(lim compat.HostLimits) string {
	if lim.GCCMax == "" {
		return "install GCC (g++)"
	}
	major := strings.SplitN(lim.GCCMax, ".", 2)[0]
	return fmt.Sprintf("install GCC %s (e.g. apt install g++-%s) and export NVCC_CCBIN=/usr/bin/g++-%s", major, major, major)
}

// unixLimits describes the GCC and clang limits: "GCC <= 13, clang <= 17".
func unixLimits(lim compat.HostLimits) string {
	var parts []string
	if lim.GCCMax != "" {
		parts = append(parts, "GCC <= "+lim.GCCMax)
	}
	if lim.ClangMax != "" {
		parts = append(parts, "clang <= "+lim.ClangMax)
	}
	if len(parts) == 0 {
		return "any GCC or clang"
	}
	return strings.Join(parts, ", ")
}

var reForeignCUDA = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)/cuda[^/]*/(lib64|lib|targets/[^/]+/lib)/?$`) })

func checkPath(in Inputs) Check {
	c := Check{ID: IDPath}
	tk := in.Toolkit
	if tk.Version == "" || !tk.Installed {
		c.Status, c.Message = Skip, "no installed toolkit selected"
		return c
	}
	own := in.OwnBinDirs
	if len(own) == 0 {
		own = []string{filepath.Join(tk.Dir, "bin")}
	}
	type problem struct {
		status        Status
		message, hint string
	}
	var problems []problem

	// nvcc on PATH: a libraries-only toolkit has none, so any nvcc is the
	// user's own.
	firstOwn := -1
	for i, p := range in.NVCCOnPath {
		if contains(own, filepath.Dir(p)) {
			firstOwn = i
			break
		}
	}
	switch {
	case in.librariesOnly():
	case len(in.NVCCOnPath) == 0:
		problems = append(problems, problem{Warn, "no nvcc on PATH",
			fmt.Sprintf("put %s on PATH (is cudaenv's shell hook active?)", own[0])})
	case firstOwn < 0:
		problems = append(problems, problem{Fail, fmt.Sprintf("PATH finds %s, not CUDA %s's nvcc", in.NVCCOnPath[0], tk.Version),
			fmt.Sprintf("put %s first on PATH (is cudaenv's shell hook active?)", own[0])})
	case firstOwn > 0:
		other := filepath.Dir(in.NVCCOnPath[0])
		problems = append(problems, problem{Fail, fmt.Sprintf("PATH finds %s before CUDA %s's nvcc", in.NVCCOnPath[0], tk.Version),
			fmt.Sprintf("remove %s from PATH (look in ~/.bashrc and ~/.profile)", other)})
	}

	// Another toolkit's libraries on LD_LIBRARY_PATH.
	ownLib := func(d string) bool {
		d = filepath.Clean(d)
		return strings.HasPrefix(d+string(filepath.Separator), filepath.Clean(tk.Dir)+string(filepath.Separator))
	}
	firstOwnLib := -1
	for i, d := range in.LDLibraryPath {
		if ownLib(d) {
			firstOwnLib = i
			break
		}
	}
	for i, d := range in.LDLibraryPath {
		if ownLib(d) || !reForeignCUDA().MatchString(d) {
			continue
		}
		if firstOwnLib < 0 || i < firstOwnLib {
			problems = append(problems, problem{Fail, fmt.Sprintf("LD_LIBRARY_PATH puts %s before CUDA %s's libraries: programs load that toolkit's libcudart and libcublas", d, tk.Version),
				fmt.Sprintf("remove %s from LD_LIBRARY_PATH", d)})
		}
	}

	// Another cuDNN on LD_LIBRARY_PATH.
	if in.Cudnn.Version != "" && in.Cudnn.Dir != "" {
		mine := func(d string) bool {
			d = filepath.Clean(d)
			return strings.HasPrefix(d+string(filepath.Separator), filepath.Clean(in.Cudnn.Dir)+string(filepath.Separator))
		}
		firstMine := -1
		for i, d := range in.LDLibraryPath {
			if mine(d) {
				firstMine = i
				break
			}
		}
		for _, d := range in.CudnnOnLDPath {
			if mine(d) {
				continue
			}
			if i := indexOf(in.LDLibraryPath, d); firstMine < 0 || i < firstMine {
				problems = append(problems, problem{Warn, fmt.Sprintf("LD_LIBRARY_PATH has another libcudnn in %s, loaded before cuDNN %s's", d, in.Cudnn.Version),
					fmt.Sprintf("remove %s from LD_LIBRARY_PATH", d)})
			}
		}
	}

	if len(problems) == 0 {
		c.Status = OK
		switch {
		case !in.librariesOnly():
			c.Message = fmt.Sprintf("nvcc is CUDA %s's (%s); nothing on PATH or LD_LIBRARY_PATH shadows it", tk.Version, in.NVCCOnPath[0])
		case len(in.NVCCOnPath) > 0:
			c.Message = fmt.Sprintf("CUDA %s is libraries only; nvcc on PATH is %s; nothing on LD_LIBRARY_PATH shadows its libraries", tk.Version, in.NVCCOnPath[0])
		default:
			c.Message = fmt.Sprintf("CUDA %s is libraries only; nothing on LD_LIBRARY_PATH shadows its libraries", tk.Version)
		}
		if msg, hint := shimsOnly(in); msg != "" {
			c.Message += "; " + msg
			c.Hint = hint
		}
		return c
	}
	var msgs, hints []string
	for _, p := range problems {
		if p.status.rank() > c.Status.rank() {
			c.Status = p.status
		}
		msgs = append(msgs, p.message)
		if !contains(hints, p.hint) {
			hints = append(hints, p.hint)
		}
	}
	c.Message = strings.Join(msgs, "; ")
	c.Hint = strings.Join(hints, "; ")
	return c
}

// cmakeFixed says, per CUDA major, from which CMake on FindCUDAToolkit
// works with it. CUDA 13 moved CCCL's headers (thrust, cub, cuda/std) to
// include/cccl; CMake adds that folder to CUDAToolkit_INCLUDE_DIRS, and so
// to C++ sources linking CUDA::cudart, from 3.31.9 and 4.0.3 on (kokkos
// PR 9437; measured with CUDA 13 from PyPI: 3.25.1, 3.27.9, 3.31.6 and
// 4.0.2 fail, 3.31.10, 4.0.3 and 4.1.0 build).
var cmakeFixed = map[int]struct {
	series map[string]string // major.minor series → first good release in it
	from   string            // every release from here on is good
}{
	13: {series: map[string]string{"3.31": "3.31.9", "4.0": "4.0.3"}, from: "4.1"},
}

// cmakeHandles reports whether a CMake version handles a CUDA major, and
// the version to ask for when it does not.
func cmakeHandles(cmake string, cudaMajor int) (ok bool, want string) {
	var fix struct {
		series map[string]string
		from   string
	}
	found := false
	for m, f := range cmakeFixed {
		if cudaMajor >= m {
			fix, found = f, true
		}
	}
	if !found {
		return true, ""
	}
	if compat.CompareVersions(cmake, fix.from) >= 0 {
		return true, ""
	}
	if first, ok := fix.series[majorMinor(cmake)]; ok && compat.CompareVersions(cmake, first) >= 0 {
		return true, ""
	}
	return false, fix.series["4.0"]
}

func checkCMake(in Inputs) Check {
	c := Check{ID: IDCMake}
	cuda := in.cudaVersion()
	switch {
	case cuda == "":
		c.Status, c.Message = Skip, "no toolkit selected to compare CMake with"
		return c
	case in.CMake.Path == "":
		c.Status, c.Message = Skip, "no cmake on PATH"
		return c
	case in.CMake.Version == "":
		c.Status, c.Message = Skip, fmt.Sprintf("%s did not say its version", in.CMake.Path)
		return c
	}
	if in.librariesOnly() && in.Toolkit.Dir != "" {
		return checkCMakeLibrariesOnly(in, c, cuda)
	}
	if ok, want := cmakeHandles(in.CMake.Version, compat.Major(cuda)); !ok {
		c.Status = Warn
		c.Message = fmt.Sprintf("cmake %s (%s) is too old for CUDA %s: its find_package(CUDAToolkit) does not know CUDA %d's include/cccl, so C++ sources using CCCL (thrust, cub, cuda/std) through CUDA::cudart do not compile; CMake %s or newer does",
			in.CMake.Version, in.CMake.Path, cuda, compat.Major(cuda), want)
		c.Hint = fmt.Sprintf("take a newer CMake, e.g. from PyPI: python3 -m pip install 'cmake>=%s'", want)
		return c
	}
	c.Status = OK
	c.Message = fmt.Sprintf("cmake %s (%s) handles CUDA %s", in.CMake.Version, in.CMake.Path, cuda)
	return c
}

// FindCUDAToolkit finds a toolkit without nvcc by its version file:
// version.txt always, version.json from CMake 3.27; and only in the
// CMake variable CUDAToolkit_ROOT before 4.2, which reads the
// environment's too (measured: 3.25.1, 3.27.9, 3.31.6, 4.0.0, 4.1.0 need
// -DCUDAToolkit_ROOT; 4.2.0 and 4.4.5 find it through the environment).
const (
	cmakeReadsVersionJSON = "3.27"
	cmakeReadsRootEnv     = "4.2"
)

// checkCMakeLibrariesOnly: whether cmake finds a toolkit without nvcc.
func checkCMakeLibrariesOnly(in Inputs, c Check, cuda string) Check {
	tk := in.Toolkit
	cm := in.CMake.Version
	has := func(f string) bool {
		for _, v := range tk.Facts.VersionFiles {
			if v == f {
				return true
			}
		}
		return false
	}
	readsFile := has("version.txt") || (has("version.json") && compat.CompareVersions(cm, cmakeReadsVersionJSON) >= 0)
	what := fmt.Sprintf("cmake %s (%s)", cm, in.CMake.Path)
	switch {
	case !readsFile:
		c.Status = Warn
		c.Message = fmt.Sprintf("%s cannot find CUDA %s at %s: the tree has no nvcc, and no version file this CMake reads (version.txt; version.json from CMake %s)", what, cuda, tk.Dir, cmakeReadsVersionJSON)
		c.Hint = "reinstall it; cudaenv writes version.json and version.txt now: cudaenv install " + cuda + " --force"
	case compat.CompareVersions(cm, cmakeReadsRootEnv) < 0:
		c.Status = Warn
		c.Message = fmt.Sprintf("%s finds CUDA %s (libraries only, no nvcc) only when given -DCUDAToolkit_ROOT=%s; CMake %s and newer read the CUDAToolkit_ROOT cudaenv sets in the environment", what, cuda, tk.Dir, cmakeReadsRootEnv)
		c.Hint = "cmake -C <(cudaenv env --format cmake) -S . -B build, or a newer CMake: python3 -m pip install 'cmake>=" + cmakeReadsRootEnv + "'"
	case in.Env["CUDAToolkit_ROOT"] != tk.Dir:
		c.Status = Warn
		c.Message = fmt.Sprintf("%s finds CUDA %s (libraries only, no nvcc) through the environment's CUDAToolkit_ROOT, and it does not name %s here", what, cuda, tk.Dir)
		c.Hint = "activate it with cudaenv's shell hook, or run cmake through cudaenv exec"
	default:
		c.Status = OK
		c.Message = fmt.Sprintf("%s handles CUDA %s: libraries only, found through CUDAToolkit_ROOT and its version file, without nvcc", what, cuda)
	}
	return c
}

// ParseCMakeVersion reads "cmake version 3.25.1" (first line of cmake
// --version) into "3.25.1"; "" when it is not there.
func ParseCMakeVersion(out []byte) string {
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "cmake version "); ok {
			v = strings.Fields(v + " ")[0]
			// 3.31.0-rc1, 4.0.0-g1234: the numeric part is what compares.
			v, _, _ = strings.Cut(v, "-")
			return v
		}
	}
	return ""
}

func checkTorch(in Inputs) Check {
	c := Check{ID: IDTorch}
	t := in.Torch
	if t == nil {
		c.Status, c.Message = Skip, "no PyTorch in the active Python"
		if in.TorchNote != "" {
			c.Message += " (" + in.TorchNote + ")"
		}
		return c
	}
	cuda := in.cudaVersion()
	base := strings.SplitN(t.Version, "+", 2)[0]
	pip := func() string {
		rel, ok := compat.Torch(base)
		if !ok || cuda == "" {
			return ""
		}
		v, ok := rel.VariantFor(cuda)
		if !ok {
			return ""
		}
		return compat.PipLine(rel.Version, v.Name)
	}
	switch {
	case t.CUDA == "":
		c.Status = Warn
		c.Message = fmt.Sprintf("PyTorch %s is a CPU-only build: it cannot use a GPU", t.Version)
		c.Hint = pip()
	case cuda == "":
		c.Status = Skip
		c.Message = fmt.Sprintf("PyTorch %s (CUDA %s); no toolkit selected to compare it with", t.Version, t.CUDA)
	case compat.Major(t.CUDA) != compat.Major(cuda):
		c.Status = Fail
		c.Message = fmt.Sprintf("PyTorch %s is built with CUDA %s but CUDA %s is selected: extensions built with this nvcc will not load (the CUDA major must match)", t.Version, t.CUDA, cuda)
		if p := pip(); p != "" {
			c.Hint = p
		} else {
			major := compat.Major(t.CUDA)
			c.Hint = fmt.Sprintf("select a CUDA %d toolkit: ", major) + useOrInstall(in.InstalledCUDA, func(v version.Version) bool { return v.Major() == major }, majorMinor(t.CUDA))
		}
	default:
		c.Status = OK
		c.Message = fmt.Sprintf("PyTorch %s (CUDA %s) matches CUDA %s's major", t.Version, t.CUDA, cuda)
		if !in.Toolkit.Installed {
			break // the toolkit check says what is wrong with it
		}
		if why, hint := extensionsLack(in); why != "" {
			c.Hint = hint
			if !in.librariesOnly() {
				// A toolkit with nvcc is there to compile; a libraries-only
				// one was chosen to run things, which it does.
				c.Status = Warn
			}
			c.Message += ", but " + why + ": extensions (torch.utils.cpp_extension, flash-attn) do not build with it"
			break
		}
		c.Message += ": extensions build"
	}
	return c
}

// extensionsLack says what the selected toolkit lacks to build a PyTorch
// extension (nvcc, the headers ATen/cuda/CUDAContext.h includes), and the
// install that adds it; "" when it lacks nothing.
func extensionsLack(in Inputs) (why, hint string) {
	tk := in.Toolkit
	ver := tk.Version
	if ver == "" {
		ver = tk.Facts.Version
	}
	hint = fmt.Sprintf("cudaenv install %s --profile extensions", ver)
	if in.librariesOnly() {
		if tk.From == "pypi" && compat.Major(ver) < 13 {
			hint = fmt.Sprintf("NVIDIA's CUDA %d wheels carry no nvcc; install the toolkit from NVIDIA: cudaenv install %s --source nvidia --profile extensions", compat.Major(ver), ver)
		}
		return fmt.Sprintf("CUDA %s has no nvcc", ver), hint
	}
	if miss := tk.Facts.MissingExtensionHeaders; len(miss) > 0 {
		return fmt.Sprintf("CUDA %s lacks %s, which ATen/cuda/CUDAContext.h includes", ver, strings.Join(miss, ", ")), hint
	}
	return "", ""
}

func checkEnv(in Inputs) Check {
	c := Check{ID: IDEnv, Status: OK}
	var msgs, hints []string
	if v, ok := in.Env["CUDA_LAUNCH_BLOCKING"]; ok && v != "" && v != "0" {
		c.Status = Warn
		msgs = append(msgs, fmt.Sprintf("CUDA_LAUNCH_BLOCKING=%s makes every kernel launch wait for the GPU: a debugging switch that slows programs down, not a speed-up", v))
		hints = append(hints, "unset CUDA_LAUNCH_BLOCKING")
	}
	if v, ok := in.Env["CUDA_VISIBLE_DEVICES"]; ok && strings.TrimSpace(v) == "" {
		st := Warn
		if len(in.GPUs) > 0 {
			st = Fail
		}
		if st.rank() > c.Status.rank() {
			c.Status = st
		}
		msgs = append(msgs, "CUDA_VISIBLE_DEVICES is set but empty: CUDA programs see no GPU")
		hints = append(hints, "unset CUDA_VISIBLE_DEVICES, or list the GPUs to use (CUDA_VISIBLE_DEVICES=0)")
	}
	if msg, hint := shimCUDAHome(in); msg != "" {
		if Warn.rank() > c.Status.rank() {
			c.Status = Warn
		}
		msgs, hints = append(msgs, msg), append(hints, hint)
	}
	if len(msgs) == 0 {
		c.Message = "nothing in the environment works against CUDA"
		return c
	}
	c.Message = strings.Join(msgs, "; ")
	c.Hint = strings.Join(hints, "; ")
	return c
}

// DriverWarning is the one line `cudaenv use` and the shell hook print when
// the toolkit needs a newer driver than the machine has, or "" when the
// driver is new enough or nothing is known. It never blocks anything:
// compile-only machines and CI are legitimate.
func DriverWarning(cudaVersion string, d detect.Driver, goos string) string {
	if !d.Found() || cudaVersion == "" {
		return ""
	}
	chk := compat.CheckDriver(cudaVersion, d.Version, goos)
	switch chk.Status {
	case compat.DriverMinorCompat:
		if chk.Req.Unbundled() && goos != "windows" {
			return "" // from 13.4 minor-version compatibility is the normal state
		}
		return fmt.Sprintf("CUDA %s wants NVIDIA driver %s or newer; this machine has %s (minor-version compatibility: programs run, newer PTX cannot be JIT-compiled)",
			cudaVersion, chk.Need, d.Version)
	case compat.DriverTooOld:
		return fmt.Sprintf("CUDA %s needs NVIDIA driver %s or newer; this machine has %s, so its programs will not run here (building still works)",
			cudaVersion, orUnknown(chk.Need, chk.Floor), d.Version)
	}
	return ""
}

func majorMinor(v string) string {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return v
	}
	return parts[0] + "." + parts[1]
}

func contains(list []string, s string) bool { return indexOf(list, s) >= 0 }

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s || filepath.Clean(x) == filepath.Clean(s) {
			return i
		}
	}
	return -1
}

func joinInts(ns []int, sep string) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, sep)
}

// useOrInstall is the command that switches to the newest installed
// version that fits, or, when none is installed, the one that installs
// want: a hint never names a version that is not there.
func useOrInstall(installed []string, fits func(version.Version) bool, want string) string {
	var best version.Version
	for _, s := range installed {
		v, err := version.Parse(s)
		if err == nil && fits(v) && (best == nil || version.Compare(v, best) > 0) {
			best = v
		}
	}
	if best != nil {
		return "cudaenv use " + best.String()
	}
	return "cudaenv install " + want
}

// atMost fits versions whose major.minor is at most limit's.
func atMost(limit string) func(version.Version) bool {
	l, err := version.Parse(limit)
	return func(v version.Version) bool {
		if err != nil || len(v) < 2 || len(l) < 2 {
			return false
		}
		return version.Compare(v[:2], l[:2]) <= 0
	}
}
