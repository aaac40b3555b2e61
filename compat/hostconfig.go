package compat

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// HostLimits are the host compilers an nvcc accepts, as its own
// include/crt/host_config.h states them. Empty or zero fields mean the file
// sets no limit of that kind.
type HostLimits struct {
	GCCMax   string // newest GCC: "13" means any 13.x; old toolkits say "5.3"
	ClangMin string // oldest clang, e.g. "3.3"
	ClangMax string // newest clang major, e.g. "20"
	MSVCMin  int    // oldest _MSC_VER accepted, e.g. 1920
	MSVCMax  int    // newest _MSC_VER accepted, e.g. 1950
}

// ErrNoHostLimits is returned by ParseHostConfig for a file that states no
// host compiler limit at all.
var ErrNoHostLimits = errors.New("no host compiler limits found")

var (
	reGCCMax   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`__GNUC__\s*>\s*(\d+)`) })
	reGCCMinor = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`__GNUC__\s*==\s*(\d+)\s*&&\s*__GNUC_MINOR__\s*>\s*(\d+)`)
	})
	reGCCMessage = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`gcc versions later than ([0-9.]+[0-9])`) })
	reClangGE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`__clang_major__\s*>=\s*(\d+)`) })
	reClangGT    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`__clang_major__\s*>\s*(\d+)`) })
	reClangLT    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`__clang_major__\s*<\s*(\d+)`) })
	reClangMinor = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`__clang_major__\s*==\s*(\d+)\s*\)\s*&&\s*\(\s*__clang_minor__\s*<\s*(\d+)`)
	})
	reClangMessage = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`less than (\d+) and greater than ([0-9.]+[0-9])`) })
	reMSVCLT       = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`_MSC_VER\s*<\s*(\d+)`) })
	reMSVCGE       = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`_MSC_VER\s*>=\s*(\d+)`) })
	reMSVCGT       = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`_MSC_VER\s*>\s*(\d+)`) })
	reDirective    = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^\s*#\s*(if|ifdef|ifndef|elif|else|endif|error)\b(.*)$`)
	})
	errGCCText      = "unsupported GNU version"
	errClangText    = "unsupported clang version"
	errMSVCText     = "unsupported Microsoft Visual Studio version"
	hostConfigLimit = 4 << 20
)

// ParseHostConfig reads the host compiler limits from the text of a
// toolkit's include/crt/host_config.h. A limit counts only when its #error is
// there: a condition whose #error was deleted (a patched toolkit) limits
// nothing. It returns ErrNoHostLimits when no limit is found.
func ParseHostConfig(src []byte) (HostLimits, error) {
	if len(src) > hostConfigLimit {
		return HostLimits{}, fmt.Errorf("parse host_config.h: %d bytes is too large", len(src))
	}
	var lim HostLimits
	var conds []string // condition of each open #if, innermost last
	for _, line := range joinContinuations(string(src)) {
		m := reDirective().FindStringSubmatch(line)
		if m == nil {
			continue
		}
		arg := stripComment(m[2])
		switch m[1] {
		case "if", "ifdef", "ifndef":
			conds = append(conds, arg)
		case "elif":
			if len(conds) > 0 {
				conds[len(conds)-1] = arg
			}
		case "else":
			if len(conds) > 0 {
				conds[len(conds)-1] = ""
			}
		case "endif":
			if len(conds) > 0 {
				conds = conds[:len(conds)-1]
			}
		case "error":
			cond := ""
			if len(conds) > 0 {
				cond = conds[len(conds)-1]
			}
			lim.apply(cond, arg)
		}
	}
	if lim == (HostLimits{}) {
		return lim, ErrNoHostLimits
	}
	return lim, nil
}

// apply records the limit an #error with message msg under condition cond sets.
func (h *HostLimits) apply(cond, msg string) {
	switch {
	case strings.Contains(msg, errGCCText):
		if m := reGCCMinor().FindStringSubmatch(cond); m != nil {
			h.GCCMax = m[1] + "." + m[2]
		} else if m := reGCCMax().FindStringSubmatch(cond); m != nil {
			h.GCCMax = m[1]
		} else if m := reGCCMessage().FindStringSubmatch(msg); m != nil {
			h.GCCMax = m[1]
		}
	case strings.Contains(msg, errClangText):
		if m := reClangGE().FindStringSubmatch(cond); m != nil {
			h.ClangMax = strconv.Itoa(atoi(m[1]) - 1)
		} else if m := reClangGT().FindStringSubmatch(cond); m != nil {
			h.ClangMax = m[1]
		} else if m := reClangMessage().FindStringSubmatch(msg); m != nil {
			h.ClangMax = strconv.Itoa(atoi(m[1]) - 1)
		}
		if m := reClangMinor().FindStringSubmatch(cond); m != nil {
			h.ClangMin = m[1] + "." + m[2]
		} else if m := reClangLT().FindStringSubmatch(cond); m != nil {
			h.ClangMin = m[1]
		} else if m := reClangMessage().FindStringSubmatch(msg); m != nil {
			h.ClangMin = nextMinor(m[2])
		}
	case strings.Contains(msg, errMSVCText):
		if m := reMSVCLT().FindStringSubmatch(cond); m != nil {
			h.MSVCMin = atoi(m[1])
		}
		if m := reMSVCGE().FindStringSubmatch(cond); m != nil {
			h.MSVCMax = atoi(m[1]) - 1
		} else if m := reMSVCGT().FindStringSubmatch(cond); m != nil {
			h.MSVCMax = atoi(m[1])
		}
	}
}

// AcceptsGCC reports whether nvcc accepts GCC version v ("13.2.0").
func (h HostLimits) AcceptsGCC(v string) bool {
	if h.GCCMax == "" {
		return true
	}
	if len(versionParts(h.GCCMax)) == 1 {
		return Major(v) <= Major(h.GCCMax)
	}
	return CompareVersions(majorMinor(v), h.GCCMax) <= 0
}

// AcceptsClang reports whether nvcc accepts clang version v ("17.0.6").
func (h HostLimits) AcceptsClang(v string) bool {
	if h.ClangMax != "" && Major(v) > Major(h.ClangMax) {
		return false
	}
	if h.ClangMin != "" && CompareVersions(majorMinor(v), h.ClangMin) < 0 {
		return false
	}
	return true
}

// AcceptsMSVC reports whether nvcc accepts cl.exe with _MSC_VER mscVer (1939).
func (h HostLimits) AcceptsMSVC(mscVer int) bool {
	if h.MSVCMin != 0 && mscVer < h.MSVCMin {
		return false
	}
	if h.MSVCMax != 0 && mscVer > h.MSVCMax {
		return false
	}
	return true
}

// Accepts reports whether nvcc accepts a compiler of kind "gcc", "clang" or
// "msvc" (version: its _MSC_VER) at version v. Unknown kinds are accepted.
func (h HostLimits) Accepts(kind, v string) bool {
	switch kind {
	case "gcc":
		return h.AcceptsGCC(v)
	case "clang":
		return h.AcceptsClang(v)
	case "msvc":
		return h.AcceptsMSVC(atoi(v))
	}
	return true
}

// String describes the limits: "GCC <= 13, clang 3.3-18, MSVC 1910-1949".
func (h HostLimits) String() string {
	var parts []string
	if h.GCCMax != "" {
		parts = append(parts, "GCC <= "+h.GCCMax)
	}
	switch {
	case h.ClangMin != "" && h.ClangMax != "":
		parts = append(parts, "clang "+h.ClangMin+"-"+h.ClangMax)
	case h.ClangMax != "":
		parts = append(parts, "clang <= "+h.ClangMax)
	}
	if h.MSVCMin != 0 || h.MSVCMax != 0 {
		parts = append(parts, fmt.Sprintf("MSVC %d-%d", h.MSVCMin, h.MSVCMax))
	}
	if len(parts) == 0 {
		return "no host compiler limits"
	}
	return strings.Join(parts, ", ")
}

// joinContinuations splits src into lines, joining backslash-continued ones.
func joinContinuations(src string) []string {
	raw := strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n")
	var out []string
	var cur strings.Builder
	for _, l := range raw {
		if strings.HasSuffix(l, "\\") {
			cur.WriteString(strings.TrimSuffix(l, "\\"))
			cur.WriteByte(' ')
			continue
		}
		cur.WriteString(l)
		out = append(out, cur.String())
		cur.Reset()
	}
	return out
}

func stripComment(s string) string {
	if i := strings.Index(s, "/*"); i >= 0 {
		s = s[:i]
	}
	if i := strings.Index(s, "//"); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

// nextMinor turns the "greater than 3.2" of a message into the oldest accepted "3.3".
func nextMinor(v string) string {
	ps := versionParts(v)
	if len(ps) < 2 {
		return strconv.Itoa(ps[0] + 1)
	}
	return strconv.Itoa(ps[0]) + "." + strconv.Itoa(ps[1]+1)
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
