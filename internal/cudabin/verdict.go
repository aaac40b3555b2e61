package cudabin

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cudaenv/cudaenv/compat"
)

// Verdict says whether a file's GPU code runs on a GPU with a driver.
type Verdict struct {
	// Status: "runs", "jit" (runs by JIT-compiling PTX), "no-kernel",
	// "driver" (the driver is too old), "unknown" (no GPU to judge for).
	Status  string `json:"status"`
	GPU     string `json:"gpu,omitempty"`    // sm_86
	Driver  string `json:"driver,omitempty"` // 550.54.15
	Message string `json:"message"`
}

// Problem reports whether the verdict is that it does not run.
func (v *Verdict) Problem() bool {
	return v != nil && (v.Status == "no-kernel" || v.Status == "driver")
}

// cudaMajor is the CUDA major a file's libraries or PTX say it was built
// for: libcudart.so.13 is CUDA 13, as are cuBLAS, NVRTC and nvJitLink,
// whose sonames follow CUDA's major (cuSPARSE's and cuFFT's do not: CUDA
// 13 ships libcusparse.so.12); 0 when nothing says.
func cudaMajor(rep Report) int {
	for _, n := range rep.Needs {
		base, ver, ok := strings.Cut(n.Name, ".so.")
		if !ok {
			continue
		}
		switch base {
		case "libcudart", "libcublas", "libcublasLt", "libnvrtc", "libnvJitLink":
			major, _, _ := strings.Cut(ver, ".")
			if m, err := strconv.Atoi(major); err == nil && m >= 10 && m < 100 {
				return m
			}
		}
	}
	best := ""
	for _, p := range rep.PTX {
		if p.BuiltWith != "" && (best == "" || compat.CompareVersions(p.BuiltWith, best) > 0) {
			best = p.BuiltWith
		}
	}
	if best == "" {
		return 0
	}
	return compat.Major(best)
}

// judge is the verdict for the GPU and driver of opt; nil for a file
// without GPU code or CUDA libraries.
func judge(rep Report, opt Options) *Verdict {
	if len(rep.SASS) == 0 && len(rep.PTX) == 0 && len(rep.Needs) == 0 {
		return nil
	}
	v := &Verdict{Driver: opt.Driver}
	major := cudaMajor(rep)
	if opt.Driver != "" && major > 0 {
		if mc, ok := compat.MinorCompatFloor(major); ok {
			floor := mc.Linux
			if opt.GOOS == "windows" {
				floor = mc.Windows
			}
			if floor != "" && !compat.DriverAtLeast(opt.Driver, floor) {
				v.Status = "driver"
				v.Message = fmt.Sprintf("needs a driver of at least %s for its CUDA %d (this one is %s)", floor, major, opt.Driver)
				return v
			}
		}
	}
	if len(rep.SASS) == 0 && len(rep.PTX) == 0 {
		v.Status = "runs"
		v.Message = "no GPU code of its own"
		if opt.Driver != "" && major > 0 {
			v.Message += fmt.Sprintf("; driver %s runs CUDA %d", opt.Driver, major)
		}
		return v
	}
	cc, ok := compat.ParseCapability(opt.GPU)
	if !ok {
		v.Status = "unknown"
		v.Message = "no GPU to judge for (give --gpu sm_XY); it carries " + carries(rep)
		return v
	}
	gpu := capNumber(cc)
	v.GPU = compat.SM(cc)
	best, bestN := "", -1
	for _, s := range rep.SASS { // lowest first; sm_90 before sm_90a
		if n, _ := archNumber(s); sassRuns(s, gpu) && n > bestN {
			best, bestN = s, n
		}
	}
	if best != "" {
		v.Status = "runs"
		v.Message = fmt.Sprintf("runs on %s: it has %s machine code", v.GPU, best)
		return v
	}
	var jit *PTX
	for i, p := range rep.PTX {
		if ptxRuns(p.Arch, gpu) {
			jit = &rep.PTX[i] // the newest one at or below the GPU: sorted
		}
	}
	if jit == nil {
		v.Status = "no-kernel"
		v.Message = fmt.Sprintf("no kernel image for %s: it carries %s, and no PTX at or below %s to JIT-compile", v.GPU, carries(rep), strings.Replace(v.GPU, "sm_", "compute_", 1))
		return v
	}
	built := jit.BuiltWith
	need := ""
	if built != "" {
		if req, ok := compat.DriverFor(built); ok {
			need = req.Min(opt.GOOS)
		}
	}
	switch {
	case built == "":
		v.Status = "jit"
		v.Message = fmt.Sprintf("runs on %s only by JIT-compiling its %s PTX (ISA %s, newer than cudaenv's tables: the driver must know it)", v.GPU, jit.Arch, jit.ISA)
	case opt.Driver != "" && need != "" && !compat.DriverAtLeast(opt.Driver, need):
		v.Status = "no-kernel"
		v.Message = fmt.Sprintf("no kernel image for %s, and its %s PTX (ISA %s, CUDA %s) needs a driver of at least %s to be JIT-compiled (this one is %s)", v.GPU, jit.Arch, jit.ISA, built, need, opt.Driver)
	default:
		v.Status = "jit"
		v.Message = fmt.Sprintf("runs on %s by JIT-compiling its %s PTX (ISA %s, CUDA %s) at first launch", v.GPU, jit.Arch, jit.ISA, built)
		if need != "" {
			v.Message += "; that needs a driver of at least " + need
		}
	}
	return v
}

// carries words a file's architectures: "sm_75…sm_120 and compute_120".
func carries(rep Report) string {
	var parts []string
	switch n := len(rep.SASS); {
	case n > 2:
		parts = append(parts, rep.SASS[0]+"…"+rep.SASS[n-1])
	case n > 0:
		parts = append(parts, strings.Join(rep.SASS, ", "))
	}
	if n := len(rep.PTX); n > 0 {
		parts = append(parts, rep.PTX[n-1].Arch)
	}
	if len(parts) == 0 {
		return "no GPU code"
	}
	return strings.Join(parts, " and ")
}

// capNumber turns "8.6" into 86 and "12.0" into 120.
func capNumber(cc string) int {
	maj, min, _ := strings.Cut(cc, ".")
	a, _ := strconv.Atoi(maj)
	b, _ := strconv.Atoi(min)
	return a*10 + b
}

// sassRuns: machine code runs on GPUs of its major at its minor or
// above; arch-specific code (sm_90a) only on its own architecture.
func sassRuns(arch string, gpu int) bool {
	n, suffix := archNumber(arch)
	if suffix == "a" {
		return n == gpu
	}
	return n/10 == gpu/10 && n <= gpu
}

// ptxRuns: PTX is JIT-compiled for any GPU at or above its architecture;
// a family's (compute_100f) within the family, arch-specific PTX only
// for its own.
func ptxRuns(arch string, gpu int) bool {
	n, suffix := archNumber(arch)
	switch suffix {
	case "a":
		return n == gpu
	case "f":
		return n/10 == gpu/10 && n <= gpu
	}
	return n <= gpu
}

// Judge is the verdict on a report's GPU code for a GPU of compute
// capability gpu ("8.6") and a driver ("" when unknown).
func Judge(rep Report, gpu, driver, goos string) *Verdict {
	return judge(rep, Options{GPU: gpu, Driver: driver, GOOS: goos})
}

// Carries words a report's architectures: "sm_75…sm_120 and compute_120".
func Carries(rep Report) string { return carries(rep) }
