package doctor

import (
	"fmt"
	"strconv"
	"strings"
)

// IDProductPins is the check of the selected libraries against the exact
// pins of the installed torch (nvidia-nccl-cu13==2.30.7): torch loads the
// library its wheel pins, so a build against another one can disagree.
const IDProductPins = "product-pins"

// ProductPinsCheck compares the selected libraries with the exact pins of
// torchVersion's METADATA (pins as detect.Torch.CUDAPins has them). ok is
// false when torch pins none of the selected libraries exactly.
func ProductPinsCheck(libs []Product, torchVersion string, pins []string) (c Check, ok bool) {
	c = Check{ID: IDProductPins, Status: OK}
	var same, differ []string
	for _, l := range libs {
		for _, p := range pins {
			want, major, found := productPin(p, l.Name)
			if !found {
				continue
			}
			switch {
			case !sameRelease(want, l.Version):
				differ = append(differ, fmt.Sprintf("torch %s pins %s %s (%s), but %s %s is selected", torchVersion, l.Title, want, p, l.Title, l.Version))
			case l.VariantMajor > 0 && l.VariantMajor != major:
				differ = append(differ, fmt.Sprintf("torch %s pins the CUDA %d build of %s %s (%s), but the CUDA %d build is selected", torchVersion, major, l.Title, want, p, l.VariantMajor))
			default:
				same = append(same, fmt.Sprintf("%s %s", l.Title, l.Version))
			}
		}
	}
	if len(same)+len(differ) == 0 {
		return c, false
	}
	if len(differ) > 0 {
		c.Status, c.Message = Warn, strings.Join(differ, "; ")
		c.Hint = "select the pinned versions (e.g. in .cuda-version), or build against the selected ones knowing torch loads its own"
		return c, true
	}
	c.Message = strings.Join(same, ", ") + " as torch " + torchVersion + " pins"
	return c, true
}

// productPin reads an exact pin of library name from a requirement
// ("nvidia-nccl-cu13==2.30.7" or cuTENSOR's "cutensor-cu13==2.8.1"):
// the version and the CUDA major of the project.
func productPin(req, name string) (version string, major int, ok bool) {
	project, v, found := strings.Cut(req, "==")
	if !found || v == "" || strings.ContainsAny(v, "*,<>=!~ ;") {
		return "", 0, false
	}
	project = strings.ToLower(strings.TrimSpace(project))
	rest, found := strings.CutPrefix(project, "nvidia-"+name+"-cu")
	if !found {
		if rest, found = strings.CutPrefix(project, name+"-cu"); !found {
			return "", 0, false
		}
	}
	m, err := strconv.Atoi(rest)
	if err != nil || m <= 0 {
		return "", 0, false
	}
	return strings.TrimSpace(v), m, true
}

// sameRelease reports whether two dotted versions name one release, with
// missing trailing parts zero (0.8.1 is 0.8.1.0).
func sameRelease(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < max(len(pa), len(pb)); i++ {
		x, y := "0", "0"
		if i < len(pa) {
			x = pa[i]
		}
		if i < len(pb) {
			y = pb[i]
		}
		if strings.TrimLeft(x, "0") != strings.TrimLeft(y, "0") {
			return false
		}
	}
	return true
}
