package version

// The libraries besides cuDNN that are installed per CUDA major, named in
// specs as name@version (nccl@2.30) and in .tool-versions as name lines.
const (
	Nccl       Tool = "nccl"
	Cusparselt Tool = "cusparselt"
	Cutensor   Tool = "cutensor"
	Cudss      Tool = "cudss"
	Nvshmem    Tool = "nvshmem"
)

// Libraries are the tools built per CUDA major, in the order labels and
// activation name them.
var Libraries = []Tool{Cudnn, Nccl, Cusparselt, Cutensor, Cudss, Nvshmem}

// Library reports whether t is a library built per CUDA major (cuDNN,
// NCCL, …) rather than the toolkit.
func (t Tool) Library() bool {
	for _, l := range Libraries {
		if t == l {
			return true
		}
	}
	return false
}

// Title is the product's own spelling: cuDNN, NCCL, cuSPARSELt.
func (t Tool) Title() string {
	switch t {
	case CUDA:
		return "CUDA"
	case Cudnn:
		return "cuDNN"
	case Nccl:
		return "NCCL"
	case Cusparselt:
		return "cuSPARSELt"
	case Cutensor:
		return "cuTENSOR"
	case Cudss:
		return "cuDSS"
	case Nvshmem:
		return "NVSHMEM"
	}
	return string(t)
}

// ToolNamed returns the tool a lower-case name means.
func ToolNamed(name string) (Tool, bool) {
	if name == string(CUDA) {
		return CUDA, true
	}
	for _, l := range Libraries {
		if name == string(l) {
			return l, true
		}
	}
	return "", false
}
