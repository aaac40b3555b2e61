package pypi

import (
	"cmp"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// version is the part of PEP 440 that NVIDIA's wheels use: a numeric
// release, optional pre-release, post-release and dev parts, and a local
// label.
type version struct {
	release  []uint64
	preKind  int // 0 none, 1 a, 2 b, 3 rc
	pre      uint64
	hasPost  bool
	post     uint64
	hasDev   bool
	dev      uint64
	local    string
	original string
}

// plainVersion is the grammar of every version cudaenv installs or writes
// into a receipt: digits and dots. Component versions from manifests, the
// catalog and requirements must match it; PEP 440's richer forms are only
// ever compared.
var plainVersion = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]+(\.[0-9]+)*$`) })

// checkPlainVersion says, quoting it, why v is not a plain version.
func checkPlainVersion(what, v string) error {
	if plainVersion().MatchString(v) {
		return nil
	}
	return fmt.Errorf("%s version %s is not digits and dots; refusing it", what, strconv.Quote(v))
}

var versionPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^v?(\d+(?:\.\d+)*)` +
		`(?:[-_.]?(a|b|c|rc|alpha|beta|pre|preview)[-_.]?(\d*))?` +
		`(?:(?:[-_.]?(post|rev|r)[-_.]?(\d*))|-(\d+))?` +
		`(?:[-_.]?dev[-_.]?(\d*))?` +
		`(?:\+([a-z0-9]+(?:[-_.][a-z0-9]+)*))?$`)
})

func parseVersion(s string) (version, bool) {
	m := versionPattern().FindStringSubmatch(strings.ToLower(strings.TrimSpace(s)))
	if m == nil {
		return version{}, false
	}
	v := version{original: s}
	for _, seg := range strings.Split(m[1], ".") {
		n, err := strconv.ParseUint(seg, 10, 64)
		if err != nil {
			return version{}, false
		}
		v.release = append(v.release, n)
	}
	num := func(s string) uint64 { n, _ := strconv.ParseUint(s, 10, 64); return n }
	switch m[2] {
	case "":
	case "a", "alpha":
		v.preKind, v.pre = 1, num(m[3])
	case "b", "beta":
		v.preKind, v.pre = 2, num(m[3])
	default:
		v.preKind, v.pre = 3, num(m[3])
	}
	if m[4] != "" {
		v.hasPost, v.post = true, num(m[5])
	} else if m[6] != "" {
		v.hasPost, v.post = true, num(m[6])
	}
	if strings.Contains(strings.TrimPrefix(m[0], m[1]), "dev") {
		v.hasDev, v.dev = true, num(m[7])
	}
	v.local = strings.NewReplacer("-", ".", "_", ".").Replace(m[8])
	return v, true
}

func compareRelease(a, b []uint64) int {
	for i := 0; i < max(len(a), len(b)); i++ {
		var x, y uint64
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if c := cmp.Compare(x, y); c != 0 {
			return c
		}
	}
	return 0
}

// compare orders versions as PEP 440 does for the parts modelled here:
// dev < pre-release < final < post-release.
func (v version) compare(w version) int {
	if c := compareRelease(v.release, w.release); c != 0 {
		return c
	}
	// A bare dev release sorts before any pre-release of the same release.
	key := func(x version) (int, uint64) {
		switch {
		case x.preKind != 0:
			return x.preKind, x.pre
		case x.hasDev && !x.hasPost:
			return 0, 0
		}
		return 4, 0
	}
	ka, na := key(v)
	kb, nb := key(w)
	if c := cmp.Compare(ka, kb); c != 0 {
		return c
	}
	if c := cmp.Compare(na, nb); c != 0 {
		return c
	}
	postKey := func(x version) int64 {
		if !x.hasPost {
			return -1
		}
		return int64(x.post)
	}
	if c := cmp.Compare(postKey(v), postKey(w)); c != 0 {
		return c
	}
	devKey := func(x version) int64 {
		if !x.hasDev {
			return 1 << 62
		}
		return int64(x.dev)
	}
	if c := cmp.Compare(devKey(v), devKey(w)); c != 0 {
		return c
	}
	return strings.Compare(v.local, w.local)
}

// SameVersion reports whether two version strings name the same release
// under PEP 440: 13.0 == 13.0.0, 12.04 == 12.4, 1.0.post1 == 1.0-1.
// Strings that are not PEP 440 versions compare case-insensitively.
func SameVersion(a, b string) bool {
	va, okA := parseVersion(a)
	vb, okB := parseVersion(b)
	if !okA || !okB {
		return strings.EqualFold(a, b)
	}
	return va.compare(vb) == 0
}

// isPostOf reports whether v is a post-release of base (12.4.127.post1 of
// 12.4.127), with no pre-release or dev part.
func isPostOf(v, base string) bool {
	pv, ok1 := parseVersion(v)
	pb, ok2 := parseVersion(base)
	return ok1 && ok2 && pv.hasPost && !pv.hasDev && pv.preKind == 0 && pv.local == "" &&
		!pb.hasPost && !pb.hasDev && pb.preKind == 0 && compareRelease(pv.release, pb.release) == 0
}

// compareVersions orders PEP 440 versions by value and other strings after
// them, as text.
func compareVersions(a, b string) int {
	va, okA := parseVersion(a)
	vb, okB := parseVersion(b)
	switch {
	case okA && okB:
		if c := va.compare(vb); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	case okA:
		return -1
	case okB:
		return 1
	}
	return strings.Compare(a, b)
}
