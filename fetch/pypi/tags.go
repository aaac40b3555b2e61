package pypi

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Which wheels a CPython on a platform installs, and which it prefers, is
// PEP 425 as pip (packaging.tags.sys_tags) ranks it. For CPython 3.M:
//
//	cp3M-cp3M-P, cp3M-abi3-P, cp3M-none-P,
//	cp3(M-1)-abi3-P … cp32-abi3-P,
//	py3M-none-P, py3-none-P, py3(M-1)-none-P … py30-none-P,
//	cp3M-none-any, py3M-none-any, py3-none-any, py3(M-1)-none-any … py30-none-any
//
// where P runs over the platform's tags, best first: on Linux every
// manylinux_2_N (the newest glibc first, each legacy alias —
// manylinux2014, manylinux2010, manylinux1 — right after its glibc's
// tag), then linux_<arch>; on a musl target musllinux_1_N likewise;
// win_amd64 or win_arm64 on Windows. A target glibc of 0 takes every
// manylinux tag: cudaenv plans for a platform, not for this host's libc.

// WheelTarget is the interpreter and platform a wheel is chosen for.
type WheelTarget struct {
	Platform string // redist platform: linux-x86_64, linux-sbsa, windows-x86_64, windows-arm64
	Python   string // CPython 3.N: "3.12"
	// Glibc is the newest glibc minor (2.Glibc) the target has; 0 means
	// any. Musl, when set, makes the target a musl one (musllinux_1_Musl
	// and older).
	Glibc, Musl int
}

var pythonMinor = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^3\.([0-9]{1,2})$`) })

// minor is N of Python 3.N.
func (t WheelTarget) minor() (int, error) {
	m := pythonMinor().FindStringSubmatch(t.Python)
	if m == nil {
		return 0, fmt.Errorf("python version %q: want 3.N, e.g. 3.12", t.Python)
	}
	return strconv.Atoi(m[1])
}

// arch is the machine part of the platform's wheel tags.
func (t WheelTarget) arch() string {
	switch t.Platform {
	case LinuxX86_64:
		return "x86_64"
	case LinuxSBSA, "linux-aarch64":
		return "aarch64"
	}
	return ""
}

// interpreterRank is the rank of a python tag with an abi tag for
// CPython 3.minor on a platform-specific wheel (platform true) or a pure
// one; -1 when the pair does not fit.
func interpreterRank(py, abi string, minor int, platform bool) int {
	cp := "cp3" + strconv.Itoa(minor)
	pyIndex := func(tag string) int { // py3M, py3, py3(M-1) … py30
		switch {
		case tag == "py3"+strconv.Itoa(minor):
			return 0
		case tag == "py3":
			return 1
		}
		k, ok := pyMinor(tag, "py3")
		if !ok || k >= minor {
			return -1
		}
		return 2 + (minor - 1 - k)
	}
	pyCount := minor + 2
	if platform {
		switch {
		case py == cp && abi == cp:
			return 0
		case py == cp && abi == "abi3":
			return 1
		case py == cp && abi == "none":
			return 2
		case abi == "abi3":
			// cp3(M-1)-abi3 … cp32-abi3.
			if k, ok := pyMinor(py, "cp3"); ok && k >= 2 && k < minor {
				return 3 + (minor - 1 - k)
			}
			return -1
		case abi == "none":
			if i := pyIndex(py); i >= 0 {
				return minor + 1 + i
			}
		}
		return -1
	}
	base := minor + 1 + pyCount
	switch {
	case abi != "none":
		return -1
	case py == cp:
		return base
	}
	if i := pyIndex(py); i >= 0 {
		return base + 1 + i
	}
	return -1
}

// pyMinor is k of a tag prefix+k ("cp38" with "cp3" → 8).
func pyMinor(tag, prefix string) (int, bool) {
	s, ok := strings.CutPrefix(tag, prefix)
	if !ok || s == "" || len(s) > 2 || strings.Trim(s, "0123456789") != "" {
		return 0, false
	}
	k, err := strconv.Atoi(s)
	return k, err == nil
}

// platformTagRank ranks a platform tag for the target, 0 best; -1 when it
// does not fit. "any" is for pure wheels and is not ranked here.
func (t WheelTarget) platformTagRank(tag string) int {
	switch t.Platform {
	case WindowsX86_64:
		if tag == "win_amd64" {
			return 0
		}
		return -1
	case WindowsARM64:
		if tag == "win_arm64" {
			return 0
		}
		return -1
	}
	arch := t.arch()
	if arch == "" {
		return -1
	}
	const newest = 999 // ranks glibc and musl minors below it
	if t.Musl > 0 {
		if rest, ok := strings.CutPrefix(tag, "musllinux_1_"); ok {
			if n, ok := archMinor(rest, arch); ok && n <= t.Musl {
				return 2 * (newest - n)
			}
			return -1
		}
		if tag == "linux_"+arch {
			return 2 * (newest + 1)
		}
		return -1
	}
	if tag == "linux_"+arch {
		return 2 * (newest + 1)
	}
	n, alias := -1, 0
	switch tag {
	case "manylinux2014_" + arch:
		n, alias = 17, 1
	case "manylinux2010_" + arch:
		n, alias = 12, 1
	case "manylinux1_" + arch:
		n, alias = 5, 1
	default:
		rest, ok := strings.CutPrefix(tag, "manylinux_2_")
		if !ok {
			return -1
		}
		if n, ok = archMinor(rest, arch); !ok {
			return -1
		}
	}
	if n > newest || (t.Glibc > 0 && n > t.Glibc) {
		return -1
	}
	// The legacy aliases exist for x86_64 and i686 (2010, 1) and aarch64
	// too (2014); pip offers each only where a glibc that old is offered.
	return 2*(newest-n) + alias
}

// archMinor reads "N_arch" (the rest of manylinux_2_N_arch or
// musllinux_1_N_arch).
func archMinor(rest, arch string) (int, bool) {
	num, ok := strings.CutSuffix(rest, "_"+arch)
	if !ok || num == "" || len(num) > 3 || strings.Trim(num, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(num)
	return n, err == nil
}

// tagRank is the rank of a wheel for the target as pip orders candidates
// of one version: lower is better; ok is false when no tag of the wheel
// fits. Each of the wheel's compressed tag sets is tried.
func (t WheelTarget) tagRank(w WheelName) (int, bool) {
	minor, err := t.minor()
	if err != nil {
		return 0, false
	}
	const platformSlots = 1 << 12
	best, found := 0, false
	for _, plat := range w.Platforms {
		pure := plat == "any"
		pr := 0
		if !pure {
			if pr = t.platformTagRank(plat); pr < 0 {
				continue
			}
		}
		for _, py := range w.Python {
			for _, abi := range w.ABI {
				ir := interpreterRank(py, abi, minor, !pure)
				if ir < 0 {
					continue
				}
				r := ir*platformSlots + pr
				if !found || r < best {
					best, found = r, true
				}
			}
		}
	}
	return best, found
}

// TagRank ranks a wheel file name for CPython python on platform: lower
// is better, ok false when pip would not install it there.
func TagRank(filename, platform, python string) (rank int, ok bool) {
	w, err := ParseWheelName(filename)
	if err != nil {
		return 0, false
	}
	return WheelTarget{Platform: platform, Python: python}.tagRank(w)
}
