package compat

import (
	"fmt"
	"sort"
	"strings"
)

// Machine is what decides which CUDA build of PyTorch a machine should
// install: the driver (what CUDA it runs), the GPUs' compute capabilities
// (which kernels the build must carry) and the Python in use.
type Machine struct {
	Driver string   // "550.54.15"; "" when unknown (not judged)
	GOOS   string   // "linux" ("" too) or "windows"
	GPUs   []string // compute capabilities, "6.1"; none: not judged
	Python string   // "3.12"; "" when unknown (not judged)
}

// TorchPick is the build of a PyTorch release that suits a machine.
type TorchPick struct {
	Variant TorchVariant
	// PyPI: the build is what plain `pip install torch` gets from PyPI.
	PyPI bool
	// Pip and UV install it; "" when the release has no patch version yet.
	Pip, UV string
	// Passed says why better-placed builds were passed over, in order:
	// "cu128: no kernels for the GPU's sm_61".
	Passed []string
	// Unverified names what could not be checked ("the GPU architectures
	// of cu132 are not in cudaenv's tables"); "" when everything was.
	Unverified string
}

// PickTorch chooses the build of rel for m: PyPI's default build when it
// fits, else the newest-CUDA stable build that fits, else an
// experimental one. A build fits when it is made for the OS, the driver
// runs its CUDA (through minor-version compatibility too) and it carries
// kernels for every GPU. uv's --torch-backend=auto looks at the driver
// only; a Pascal card on a cu128 wheel gets "no kernel image is available".
func PickTorch(rel TorchRelease, m Machine) (TorchPick, error) {
	if m.Python != "" {
		if lo, hi, ok := pythonRange(rel.Python); ok && (CompareVersions(m.Python, lo) < 0 || CompareVersions(m.Python, hi) > 0) {
			return TorchPick{}, fmt.Errorf("torch %s has wheels for Python %s, and this Python is %s; use a Python in that range (or a torch release built for %s)", rel.Version, rel.Python, m.Python, m.Python)
		}
	}
	vs := append([]TorchVariant(nil), rel.Variants...)
	rank := func(v TorchVariant) int {
		switch {
		case v.PyPIDefault == goosOr(m.GOOS):
			return 0
		case v.Role == "stable":
			return 1
		}
		return 2
	}
	sort.SliceStable(vs, func(i, j int) bool {
		if ri, rj := rank(vs[i]), rank(vs[j]); ri != rj {
			return ri < rj
		}
		return CompareVersions(vs[i].CUDA, vs[j].CUDA) > 0
	})
	var pick TorchPick
	var fallback *TorchVariant // fits as far as known, arch list unknown
	for i, v := range vs {
		if v.CUDA == "" || (v.OS != "" && v.OS != goosOr(m.GOOS)) {
			continue
		}
		if m.Driver != "" {
			if chk := CheckDriver(v.CUDA, m.Driver, m.GOOS); chk.Status == DriverTooOld {
				pick.Passed = append(pick.Passed, fmt.Sprintf("%s: CUDA %s needs driver %s or newer", v.Name, v.CUDA, chk.Need))
				continue
			}
		}
		if len(m.GPUs) > 0 {
			archs, ptx, known := TorchArchs(rel.Version, v.Name)
			if !known {
				if fallback == nil {
					fallback = &vs[i]
				}
				continue
			}
			if miss := missingArchs(archs, ptx, m.GPUs); len(miss) > 0 {
				pick.Passed = append(pick.Passed, fmt.Sprintf("%s: no kernels for the GPU's %s (it has %s)", v.Name, strings.Join(miss, ", "), smList(archs, ptx)))
				continue
			}
		}
		return pick.with(rel, v, m), nil
	}
	if fallback != nil {
		pick.Unverified = fmt.Sprintf("the GPU architectures of %s are not in cudaenv's tables", fallback.Name)
		return pick.with(rel, *fallback, m), nil
	}
	if len(pick.Passed) == 0 {
		return pick, fmt.Errorf("torch %s has no CUDA build for %s", rel.Version, goosOr(m.GOOS))
	}
	return pick, fmt.Errorf("no CUDA build of torch %s runs on this machine: %s", rel.Version, strings.Join(pick.Passed, "; "))
}

func (p TorchPick) with(rel TorchRelease, v TorchVariant, m Machine) TorchPick {
	p.Variant, p.PyPI = v, v.PyPIDefault == goosOr(m.GOOS)
	index := v.Name
	if p.PyPI {
		index = ""
	}
	if p.Pip = PipLine(rel.Version, index); p.Pip != "" {
		p.UV = "uv " + p.Pip
		if !p.PyPI {
			p.UV = strings.Replace(p.UV, " --index-url "+IndexURL(v.Name), " --torch-backend="+v.Name, 1)
		}
	}
	return p
}

// missingArchs are the GPUs (as sm_XY) a build's kernels do not run on.
func missingArchs(archs []string, ptx string, gpus []string) []string {
	var out []string
	for _, g := range gpus {
		if !ArchRuns(archs, ptx, g) {
			if sm := SM(g); sm != "" && !containsString(out, sm) {
				out = append(out, sm)
			}
		}
	}
	return out
}

func smList(archs []string, ptx string) string {
	var sms []string
	for _, a := range archs {
		sms = append(sms, SM(a))
	}
	if ptx != "" {
		sms = append(sms, "PTX "+strings.Replace(SM(ptx), "sm_", "compute_", 1))
	}
	return strings.Join(sms, " ")
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// pythonRange reads the leading "3.10-3.14" of a release's Python field.
func pythonRange(s string) (lo, hi string, ok bool) {
	f := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '(' })
	if len(f) == 0 {
		return "", "", false
	}
	lo, hi, ok = strings.Cut(f[0], "-")
	if !ok || len(versionParts(lo)) != 2 || len(versionParts(hi)) != 2 {
		return "", "", false
	}
	return lo, hi, true
}
