package compat

import (
	"fmt"
	"strings"
)

// CudnnRelease says which CUDA majors a cuDNN release is built for.
type CudnnRelease struct {
	Label      string // release label, "9.5.1"
	Version    string // library version, "9.5.1.17" ("" if not recorded)
	CUDAMajors []int  // e.g. [11 12]: NVIDIA ships a cuda11 and a cuda12 variant
	Exact      bool   // the release asked about is in the table
	Note       string // why the answer is approximate
	Source     string
}

// Supports reports whether the release has a variant for CUDA major.
func (c CudnnRelease) Supports(major int) bool {
	for _, m := range c.CUDAMajors {
		if m == major {
			return true
		}
	}
	return false
}

// Cudnn looks up a cuDNN release by label ("9.5.1") or library version
// ("9.5.1.17"). "9.5" means the newest 9.5 release. A release missing from the
// table is answered from the nearest lower one, and Note says so (the CUDA
// majors changed between 9.8 and 9.12, so such answers are a guess).
func Cudnn(version string) (CudnnRelease, bool) {
	asked, parts := normalize(version, 0)
	if parts == 0 {
		return CudnnRelease{}, false
	}
	var exact, prefix, lower *cudnnRow
	for i := range cudnnRows {
		r := &cudnnRows[i]
		if CompareVersions(r.label, asked) == 0 && parts >= 3 || r.version != "" && r.version == asked {
			exact = r
		}
		if parts == 2 && majorMinor(r.label) == asked && (prefix == nil || CompareVersions(r.label, prefix.label) > 0) {
			prefix = r
		}
		if CompareVersions(r.label, asked) < 0 && (lower == nil || CompareVersions(r.label, lower.label) > 0) {
			lower = r
		}
	}
	var row *cudnnRow
	note := ""
	switch {
	case exact != nil:
		row = exact
	case prefix != nil:
		row = prefix
		note = fmt.Sprintf("%s stands for every %s release; using %s, the newest known", version, asked, row.label)
	case lower != nil:
		row = lower
		note = fmt.Sprintf("%s is not in the table; using %s, the nearest lower release", version, row.label)
	default:
		return CudnnRelease{}, false
	}
	return CudnnRelease{
		Label:      row.label,
		Version:    row.version,
		CUDAMajors: append([]int(nil), row.cudaMajors...),
		Exact:      row == exact,
		Note:       note,
		Source:     row.source,
	}, true
}

// CudnnMajors returns the CUDA majors a cuDNN release is built for (see
// Cudnn for how releases missing from the table are answered), or nil.
func CudnnMajors(version string) []int {
	c, ok := Cudnn(version)
	if !ok {
		return nil
	}
	return c.CUDAMajors
}

// CudnnVariant names the variant of a cuDNN archive for a CUDA major: "cuda12".
func CudnnVariant(major int) string { return "cuda" + itoa(major) }

// ParseCudnnVariant turns "cuda12" (or "12", "cu12") into 12, or -1.
func ParseCudnnVariant(s string) int {
	s = strings.TrimPrefix(strings.TrimPrefix(strings.ToLower(s), "cuda"), "cu")
	return Major(s)
}

// CudnnReleases returns every cuDNN release in the table, oldest first.
func CudnnReleases() []CudnnRelease {
	out := make([]CudnnRelease, 0, len(cudnnRows))
	for _, r := range cudnnRows {
		out = append(out, CudnnRelease{Label: r.label, Version: r.version, CUDAMajors: append([]int(nil), r.cudaMajors...), Exact: true, Source: r.source})
	}
	return out
}
