package pypi

import (
	"cmp"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// version is a PEP 440 version: epoch, release, pre-release, post-release,
// dev release and local label, compared as PEP 440 (and pip's packaging
// library) order them.
type version struct {
	epoch    uint64
	release  []uint64
	preKind  int // 0 none, 1 a, 2 b, 3 rc
	pre      uint64
	hasPost  bool
	post     uint64
	hasDev   bool
	dev      uint64
	local    string // normalized: lower case, '.' between segments
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

// versionPattern is PEP 440's permissive form (appendix B), lower-cased
// before matching.
var versionPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^v?(?:(\d+)!)?(\d+(?:\.\d+)*)` +
		`(?:[-_.]?(alpha|a|beta|b|preview|pre|c|rc)[-_.]?(\d*))?` +
		`(?:-(\d+)|[-_.]?(post|rev|r)[-_.]?(\d*))?` +
		`(?:[-_.]?(dev)[-_.]?(\d*))?` +
		`(?:\+([a-z0-9]+(?:[-_.][a-z0-9]+)*))?$`)
})

// maxVersionLen bounds what is parsed: real versions are a few dozen
// characters.
const maxVersionLen = 128

func parseVersion(s string) (version, bool) {
	if len(s) > maxVersionLen {
		return version{}, false
	}
	m := versionPattern().FindStringSubmatch(strings.ToLower(strings.TrimSpace(s)))
	if m == nil {
		return version{}, false
	}
	v := version{original: s}
	num := func(s string) (uint64, bool) {
		if s == "" {
			return 0, true
		}
		n, err := strconv.ParseUint(s, 10, 64)
		return n, err == nil
	}
	var ok bool
	if v.epoch, ok = num(m[1]); !ok {
		return version{}, false
	}
	for _, seg := range strings.Split(m[2], ".") {
		n, ok := num(seg)
		if !ok {
			return version{}, false
		}
		v.release = append(v.release, n)
	}
	switch m[3] {
	case "":
	case "a", "alpha":
		v.preKind = 1
	case "b", "beta":
		v.preKind = 2
	default: // c, rc, pre, preview
		v.preKind = 3
	}
	if v.pre, ok = num(m[4]); !ok {
		return version{}, false
	}
	switch {
	case m[5] != "":
		v.hasPost = true
		if v.post, ok = num(m[5]); !ok {
			return version{}, false
		}
	case m[6] != "":
		v.hasPost = true
		if v.post, ok = num(m[7]); !ok {
			return version{}, false
		}
	}
	if m[8] != "" {
		v.hasDev = true
		if v.dev, ok = num(m[9]); !ok {
			return version{}, false
		}
	}
	v.local = strings.NewReplacer("-", ".", "_", ".").Replace(m[10])
	return v, true
}

// isPre reports a pre-release or dev release: what PEP 440 installs only
// when asked for.
func (v version) isPre() bool { return v.preKind != 0 || v.hasDev }

// public is v without its local label.
func (v version) public() version {
	v.local = ""
	return v
}

// base is the epoch and release alone: 1.0 of 1.0rc1.post2.dev3+x.
func (v version) base() version {
	return version{epoch: v.epoch, release: v.release}
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

// compare orders versions as PEP 440 does: epoch, release (trailing zeros
// ignored), then dev < pre-release < final < post-release, then the local
// label (none first; numeric segments above alphanumeric ones).
func (v version) compare(w version) int {
	if c := cmp.Compare(v.epoch, w.epoch); c != 0 {
		return c
	}
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
		return int64(min(x.post, 1<<62))
	}
	if c := cmp.Compare(postKey(v), postKey(w)); c != 0 {
		return c
	}
	devKey := func(x version) int64 {
		if !x.hasDev {
			return 1 << 62
		}
		return int64(min(x.dev, 1<<61))
	}
	if c := cmp.Compare(devKey(v), devKey(w)); c != 0 {
		return c
	}
	return compareLocal(v.local, w.local)
}

// compareLocal orders local labels as PEP 440 does: none before any,
// segment by segment, a numeric segment after an alphanumeric one,
// numbers by value, text by text, a longer label after its prefix.
func compareLocal(a, b string) int {
	if a == b {
		return 0
	}
	if a == "" {
		return -1
	}
	if b == "" {
		return 1
	}
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < min(len(as), len(bs)); i++ {
		x, errX := strconv.ParseUint(as[i], 10, 64)
		y, errY := strconv.ParseUint(bs[i], 10, 64)
		var c int
		switch {
		case errX == nil && errY == nil:
			c = cmp.Compare(x, y)
		case errX == nil:
			c = 1
		case errY == nil:
			c = -1
		default:
			c = strings.Compare(as[i], bs[i])
		}
		if c != 0 {
			return c
		}
	}
	return cmp.Compare(len(as), len(bs))
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
		!pb.hasPost && !pb.hasDev && pb.preKind == 0 && pv.epoch == pb.epoch && compareRelease(pv.release, pb.release) == 0
}

// CompareVersions orders PEP 440 versions by value and other strings after
// them, as text.
func CompareVersions(a, b string) int { return compareVersions(a, b) }

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
