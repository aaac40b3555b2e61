package pypi

import "fmt"

// Broken is a wheel known to make a toolkit that does not work, although
// the index serves it and its hash checks out.
type Broken struct {
	Release   string // the CUDA release it belongs to: 13.0.0
	Component string // the redist component of the wheel: cuda_nvcc
	Version   string // the wheel's version: 13.0.48
	Reason    string // what fails, for messages
}

// brokenWheels are checked on the real index (unzip -l of the wheels; see
// testdata/real_layouts.txt): nvidia-cuda-nvcc 13.0.48 has bin/nvcc but no
// bin/crt/link.stub or prelink.stub, which nvcc passes to the host compiler
// for every link ("cc1plus: fatal error: .../bin/crt/link.stub: No such
// file or directory"); 13.0.88 (CUDA 13.0.1 and later) has both.
var brokenWheels = []Broken{
	{Release: "13.0.0", Component: "cuda_nvcc", Version: "13.0.48",
		Reason: "its nvidia-cuda-nvcc 13.0.48 wheel lacks bin/crt/link.stub and bin/crt/prelink.stub, so nvcc compiles objects but links no program (CMake's compiler check fails too)"},
}

// BrokenWheel reports whether the release's wheels include one known not
// to work; only a selection that installs that component is affected.
func (r Release) BrokenWheel() (Broken, bool) {
	for _, b := range brokenWheels {
		if c, ok := r.Component(b.Component); ok && SameVersion(c.Version, b.Version) {
			return b, true
		}
	}
	return Broken{}, false
}

// BrokenError refuses a release whose wheels cannot make a working
// toolkit, naming the nearest release that can.
type BrokenError struct {
	Release string // 13.0.0
	Broken  Broken
	Nearest string // "" when the index has none
}

func (e *BrokenError) Error() string {
	msg := fmt.Sprintf("CUDA %s from PyPI cannot link programs: %s", e.Release, e.Broken.Reason)
	if e.Nearest != "" {
		return msg + fmt.Sprintf("; install the nearest release whose wheels work instead: cudaenv install %s --source pypi", e.Nearest)
	}
	return msg + "; the index has no other release of this CUDA major whose wheels work (see: cudaenv ls-remote --source pypi)"
}
