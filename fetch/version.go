package fetch

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// versionRE accepts the release labels NVIDIA uses in redistrib_<version>.json
// names: dot-separated decimal numbers ("12.4.1", "8.9.7.29").
var versionRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]+(\.[0-9]+)*$`) })

// compareVersions compares dot-separated versions numerically field by
// field ("12.10" > "12.9"); a missing field counts as 0 only when the other
// side has more fields, so "12.4" < "12.4.0". Non-numeric fields compare as
// strings.
// Release listing: any label a server lists, unlike version.Parse's four parts.
func compareVersions(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		if c := compareField(as[i], bs[i]); c != 0 {
			return c
		}
	}
	switch {
	case len(as) < len(bs):
		return -1
	case len(as) > len(bs):
		return 1
	}
	return 0
}

func compareField(a, b string) int {
	ai, aerr := strconv.ParseUint(a, 10, 64)
	bi, berr := strconv.ParseUint(b, 10, 64)
	switch {
	case aerr == nil && berr == nil:
		switch {
		case ai < bi:
			return -1
		case ai > bi:
			return 1
		}
		return 0
	case aerr == nil:
		return -1 // numbers sort before words
	case berr == nil:
		return 1
	}
	return strings.Compare(a, b)
}

// sortVersions sorts versions oldest first and drops duplicates.
func sortVersions(vs []string) []string {
	slices.SortFunc(vs, compareVersions)
	return slices.Compact(vs)
}

// majorOf returns the leading number of a version, or 0.
func majorOf(v string) int {
	head, _, _ := strings.Cut(v, ".")
	n, err := strconv.Atoi(head)
	if err != nil {
		return 0
	}
	return n
}
