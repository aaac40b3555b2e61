// Package doctor judges whether the selected CUDA toolkit, the driver, the
// GPUs, cuDNN, the host compiler, PATH, PyTorch and the environment agree.
// Run is pure: it judges facts detected beforehand (Gather collects them
// through an injected detect.Host); the renderers write to a given writer.
package doctor

import (
	"github.com/cudaenv/cudaenv/internal/detect"
)

// Status of a check, from best to worst.
type Status string

const (
	OK   Status = "ok"
	Skip Status = "skip" // nothing to judge (no GPU, no PyTorch, ...)
	Warn Status = "warn"
	Fail Status = "fail"
)

func (s Status) rank() int {
	switch s {
	case Warn:
		return 2
	case Fail:
		return 3
	}
	return 0
}

// Check ids, stable for scripts reading the JSON report.
const (
	IDToolkit      = "toolkit"
	IDDriver       = "driver"
	IDGPUArch      = "gpu-arch"
	IDCudnn        = "cudnn"
	IDHostCompiler = "host-compiler"
	IDCMake        = "cmake"
	IDPath         = "path"
	IDTorch        = "torch"
	IDEnv          = "env"
	IDGPU          = "gpu" // the compiled self-test of `doctor --gpu`
)

// Check is one verdict.
type Check struct {
	ID      string `json:"id"`
	Status  Status `json:"status"`
	Message string `json:"message"`
	Hint    string `json:"hint"` // what to do about it; "" when nothing
}

// Report is the outcome of Run: every check, in a fixed order.
type Report struct {
	Status Status  `json:"status"` // worst of the checks: ok, warn or fail
	Checks []Check `json:"checks"`
}

// Add appends a check (such as the GPU self-test) and updates Status.
func (r *Report) Add(c Check) {
	r.Checks = append(r.Checks, c)
	if c.Status.rank() > r.Status.rank() {
		r.Status = c.Status
	}
	if r.Status == "" || r.Status == Skip {
		r.Status = OK
	}
}

// ExitCode is 0 when every check passed or was skipped, 1 with warnings,
// 2 with failures.
func (r Report) ExitCode() int {
	switch r.Status {
	case Fail:
		return 2
	case Warn:
		return 1
	}
	return 0
}

// Toolkit is the selected CUDA toolkit.
type Toolkit struct {
	Version    string // selected version, "12.4.1"; "" when none is selected
	Source     string // why it is selected: "set by /p/.cuda-version"
	Dir        string // where it is (or would be) installed
	Installed  bool   // Dir exists
	HasReceipt bool   // cudaenv's install receipt is there
	// From is where the receipt says it came from: nvidia, pypi, link.
	From string
	// LibrariesOnly: the receipt says the toolkit has no nvcc (CUDA 12
	// from PyPI, --components without cuda_nvcc). A tree without bin/nvcc
	// counts as one too.
	LibrariesOnly bool
	// Damage is what store.Entry.Damage found wrong with an installed
	// tree (a receipt field that does not read, files its components
	// always have gone); "" for none.
	Damage string
	// Facts is what detect.Host.Toolkit found in Dir: missing files, the
	// version the files state, host compiler limits, target architectures.
	Facts detect.Toolkit
	// LibDirs are the folders activating the selection puts on
	// LD_LIBRARY_PATH, the toolkit's first.
	LibDirs []string
}

// Cudnn is the selected cuDNN.
type Cudnn struct {
	Version      string // "9.5.1"; "" when none is selected
	Dir          string // its root; libraries are in Dir/lib
	VariantMajor int    // CUDA major of the installed build (cuda12 -> 12); 0 if unknown
	Damage       string // as Toolkit.Damage
}

// Inputs is everything the checks judge, detected beforehand.
type Inputs struct {
	GOOS string // "linux" (also when empty) or "windows"

	Toolkit Toolkit
	Cudnn   Cudnn

	Driver    detect.Driver
	GPUs      []detect.GPU
	GPUError  string // why nvidia-smi could not list GPUs, if it failed
	Compilers []detect.Compiler
	Torch     *detect.Torch // nil when the active Python has no PyTorch
	TorchNote string        // why no PyTorch was found ("no python3 or python on PATH")

	Env           map[string]string
	LDLibraryPath []string // entries of LD_LIBRARY_PATH, in order
	// NVCCOnPath is every nvcc on PATH in order (detect.Host.LookPathAll).
	NVCCOnPath []string
	// CudnnOnLDPath are the LD_LIBRARY_PATH entries holding a libcudnn
	// (detect.Host.DirsWithFile).
	CudnnOnLDPath []string
	// OwnBinDirs are the directories whose nvcc is the selected toolkit's:
	// its bin and cudaenv's shims. Empty means Toolkit.Dir/bin.
	OwnBinDirs []string
	// InstalledCUDA are the installed toolkit versions: a hint to switch
	// names one of them, never a version that is not there.
	InstalledCUDA []string
	// CMake is the first cmake on PATH and the version it states; Path is
	// "" when there is none.
	CMake struct{ Path, Version string }
	// ShimsDir is cudaenv's shims folder ("" for none).
	ShimsDir string
}

// Run runs every check on in, in the order of the ids above.
func Run(in Inputs) Report {
	var r Report
	for _, check := range []func(Inputs) Check{
		checkToolkit, checkDriver, checkGPUArch, checkCudnn,
		checkHostCompiler, checkCMake, checkPath, checkTorch, checkEnv,
	} {
		r.Add(check(in))
	}
	return r
}

// cudaVersion is the CUDA version the checks compare against: the selected
// one, else what the toolkit's files say.
func (in Inputs) cudaVersion() string {
	if in.Toolkit.Version != "" {
		return in.Toolkit.Version
	}
	return in.Toolkit.Facts.Version
}

// librariesOnly reports whether the selected toolkit has no nvcc: its
// receipt says so, or its tree has no bin/nvcc.
func (in Inputs) librariesOnly() bool {
	tk := in.Toolkit
	return tk.Installed && (tk.LibrariesOnly || tk.Facts.NVCC == "")
}

func (in Inputs) goos() string {
	if in.GOOS == "windows" {
		return "windows"
	}
	return "linux"
}
