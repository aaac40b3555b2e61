package compat

import "strings"

// TorchPyPIBuild is the build of a PyTorch release that PyPI serves to a
// plain `pip install torch==X` on a platform, and the NVIDIA libraries its
// wheel pins: what the framework's environment loads when it was
// installed from PyPI. It answers `install --for torch==X` when the
// package index cannot be read.
type TorchPyPIBuild struct {
	Torch    string // "2.5.1"
	Platform string // NVIDIA's key: linux-x86_64, linux-sbsa
	Variant  string // "cu124"; "cpu" when PyPI's wheel there is a CPU build
	// CUDA is the release NVIDIA's manifests name for the wheel's pins
	// ("12.4.1"); "" for a CPU build.
	CUDA string
	// Cudnn, NCCL, CuSPARSELt and NVSHMEM are the exact versions the wheel
	// pins (nvidia-cudnn-cu12==9.1.0.70 → "9.1.0.70"); "" when it pins none.
	Cudnn, NCCL, CuSPARSELt, NVSHMEM string
	Note                             string // how CUDA was named, and what else the wheel pins
	Source                           string
}

// CPU reports whether PyPI's wheel for the platform carries no CUDA.
func (b TorchPyPIBuild) CPU() bool { return b.CUDA == "" }

// TorchPyPI looks up the build PyPI serves of a torch release ("2.5.1";
// a bare minor "2.5" means its newest patch release in the table) on a
// platform ("linux-aarch64", Jetson's key, takes the linux-sbsa wheel). A
// version with a local part ("2.5.1+cu118") names another build than
// PyPI's and is not answered, nor is a pre-release, nor is a release or platform the table
// lacks.
func TorchPyPI(version, platform string) (TorchPyPIBuild, bool) {
	if !plainRelease(version) {
		return TorchPyPIBuild{}, false
	}
	if platform == "linux-aarch64" {
		platform = "linux-sbsa"
	}
	asked, parts := normalize(version, 0)
	if parts < 2 || parts > 3 {
		return TorchPyPIBuild{}, false
	}
	var best *torchPyPIRow
	for i := range torchPyPIRows {
		r := &torchPyPIRows[i]
		if r.platform != platform {
			continue
		}
		switch {
		case parts == 3 && CompareVersions(r.torch, asked) == 0:
			best = r
		case parts == 2 && majorMinor(r.torch) == majorMinor(asked) && (best == nil || CompareVersions(r.torch, best.torch) > 0):
			best = r
		}
	}
	if best == nil {
		return TorchPyPIBuild{}, false
	}
	return TorchPyPIBuild{
		Torch: best.torch, Platform: best.platform, Variant: best.variant, CUDA: best.cuda,
		Cudnn: best.cudnn, NCCL: best.nccl, CuSPARSELt: best.cusparselt, NVSHMEM: best.nvshmem,
		Note: best.note, Source: best.source,
	}, true
}

// plainRelease: "2.5" or "2.5.1", no pre-release, local or build part.
func plainRelease(v string) bool {
	parts := strings.Split(v, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return false
	}
	for _, p := range parts {
		if p == "" || len(p) > 4 || strings.Trim(p, "0123456789") != "" {
			return false
		}
	}
	return true
}

// TorchPyPIReleases lists every torch release the PyPI table has a row
// of for platform, oldest first.
func TorchPyPIReleases(platform string) []string {
	var out []string
	for _, r := range torchPyPIRows {
		if r.platform == platform {
			out = appendUnique(out, r.torch)
		}
	}
	sortVersions(out)
	return out
}
