package compat

import (
	"strconv"
	"strings"
)

// CompareVersions compares two dotted version strings numerically, part by
// part ("12.10" > "12.9"; a missing part counts as 0, so "12.4" == "12.4.0").
// It serves CUDA, cuDNN, PyTorch and driver versions ("550.54.15") alike.
// Anything after the leading digits of a part ("0a0", "1+cu124") is ignored.
// It returns -1, 0 or +1.
// Driver tables: rows, drivers and torch builds differ in precision and suffixes.
func CompareVersions(a, b string) int {
	as, bs := versionParts(a), versionParts(b)
	for i := 0; i < len(as) || i < len(bs); i++ {
		var x, y int
		if i < len(as) {
			x = as[i]
		}
		if i < len(bs) {
			y = bs[i]
		}
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
	}
	return 0
}

// DriverAtLeast reports whether driver version have is min or newer
// ("550.54.15" >= "525.60.13"). An empty have or min is never enough.
func DriverAtLeast(have, min string) bool {
	if have == "" || min == "" {
		return false
	}
	return CompareVersions(have, min) >= 0
}

// versionParts returns the numeric parts of v, stopping at the first part that
// does not start with a digit. "2.5.1+cu124" gives [2 5 1].
func versionParts(v string) []int {
	v = strings.TrimSpace(v)
	if i := strings.IndexAny(v, "+ "); i >= 0 {
		v = v[:i]
	}
	var out []int
	for _, f := range strings.Split(v, ".") {
		j := 0
		for j < len(f) && f[j] >= '0' && f[j] <= '9' {
			j++
		}
		if j == 0 {
			break
		}
		n, err := strconv.Atoi(f[:j])
		if err != nil {
			break
		}
		out = append(out, n)
		if j < len(f) {
			break
		}
	}
	return out
}

// normalize returns v's numeric parts, padded with zeros to n parts, joined
// with dots, and how many parts v itself had.
func normalize(v string, n int) (string, int) {
	ps := versionParts(v)
	given := len(ps)
	for len(ps) < n {
		ps = append(ps, 0)
	}
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = strconv.Itoa(p)
	}
	return strings.Join(s, "."), given
}

// majorMinor returns "12.4" for "12.4.1" (and "12" for "12").
func majorMinor(v string) string {
	ps := versionParts(v)
	if len(ps) == 0 {
		return ""
	}
	if len(ps) == 1 {
		return strconv.Itoa(ps[0])
	}
	return strconv.Itoa(ps[0]) + "." + strconv.Itoa(ps[1])
}

// Major returns the first number of a version ("12.4.1" gives 12), or -1.
func Major(v string) int {
	ps := versionParts(v)
	if len(ps) == 0 {
		return -1
	}
	return ps[0]
}
