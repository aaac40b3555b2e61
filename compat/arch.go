package compat

import (
	"sort"
	"strconv"
	"strings"
)

// Arch is a GPU compute capability and the CUDA releases that can target it.
type Arch struct {
	Capability string // "9.0"
	Name       string // "Hopper"
	MinCUDA    string // first CUDA release (major.minor) whose nvcc targets it
	MaxCUDA    string // last one, "" while still supported
	Source     string
}

// SM returns the nvcc name of the capability: "sm_90".
func (a Arch) SM() string { return SM(a.Capability) }

// ArchInfo returns the table row for a compute capability ("9.0", "sm_90",
// "compute_90" and "90" are all accepted).
func ArchInfo(capability string) (Arch, bool) {
	c, ok := ParseCapability(capability)
	if !ok {
		return Arch{}, false
	}
	for _, r := range archRows {
		if r.capability == c {
			return Arch{Capability: r.capability, Name: r.arch, MinCUDA: r.minCUDA, MaxCUDA: r.maxCUDA, Source: r.source}, true
		}
	}
	return Arch{}, false
}

// Archs returns every row of the table, lowest capability first.
func Archs() []Arch {
	var out []Arch
	for _, r := range archRows {
		out = append(out, Arch{Capability: r.capability, Name: r.arch, MinCUDA: r.minCUDA, MaxCUDA: r.maxCUDA, Source: r.source})
	}
	sort.SliceStable(out, func(i, j int) bool { return CompareVersions(out[i].Capability, out[j].Capability) < 0 })
	return out
}

// ArchsFor returns the compute capabilities the nvcc of a CUDA release can
// target, lowest first, from the table. Prefer the toolkit's own
// `nvcc --list-gpu-arch` when it can be run.
func ArchsFor(cuda string) []string {
	mm := majorMinor(cuda)
	if mm == "" {
		return nil
	}
	var out []string
	for _, r := range archRows {
		if CompareVersions(r.minCUDA, mm) > 0 {
			continue
		}
		if r.maxCUDA != "" && CompareVersions(r.maxCUDA, mm) < 0 {
			continue
		}
		out = append(out, r.capability)
	}
	sort.Slice(out, func(i, j int) bool { return CompareVersions(out[i], out[j]) < 0 })
	return out
}

// SM turns a capability "9.0" into "sm_90" and "12.0" into "sm_120".
func SM(capability string) string {
	c, ok := ParseCapability(capability)
	if !ok {
		return ""
	}
	return "sm_" + strings.Replace(c, ".", "", 1)
}

// ParseCapability normalizes a compute capability to "major.minor". It accepts
// "9.0", "sm_90", "compute_90", "sm_90a" (the suffix is dropped) and "90".
func ParseCapability(s string) (string, bool) {
	s = strings.TrimSpace(strings.ToLower(s))
	s = strings.TrimPrefix(strings.TrimPrefix(s, "sm_"), "compute_")
	s = strings.TrimRight(s, "af")
	if s == "" {
		return "", false
	}
	if i := strings.IndexByte(s, '.'); i >= 0 {
		maj, err1 := strconv.Atoi(s[:i])
		min, err2 := strconv.Atoi(s[i+1:])
		if err1 != nil || err2 != nil || maj < 0 || min < 0 {
			return "", false
		}
		return strconv.Itoa(maj) + "." + strconv.Itoa(min), true
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 10 {
		return "", false
	}
	return strconv.Itoa(n/10) + "." + strconv.Itoa(n%10), true
}
