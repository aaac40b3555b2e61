package doctor

import (
	"fmt"
	"strings"
)

// IDProducts is the check of the libraries selected beside cuDNN (NCCL,
// cuSPARSELt, cuTENSOR, cuDSS, NVSHMEM); reported only when one is.
const IDProducts = "products"

// Product is one selected library besides cuDNN.
type Product struct {
	Title        string // NCCL
	Name         string // nccl
	Version      string // 2.30.7
	Dir          string
	VariantMajor int    // CUDA major of the installed build; 0 if unknown
	Damage       string // as Toolkit.Damage
}

// ProductsCheck judges the selected libraries against the selected CUDA
// (cudaVersion, "" when none): each must be built for its major, and whole.
func ProductsCheck(libs []Product, cudaVersion string) Check {
	c := Check{ID: IDProducts, Status: OK}
	major := 0
	if cudaVersion != "" {
		fmt.Sscanf(cudaVersion, "%d", &major)
	}
	var good, bad, hints []string
	for _, l := range libs {
		switch {
		case l.Damage != "":
			bad = append(bad, fmt.Sprintf("%s %s at %s is damaged: %s", l.Title, l.Version, l.Dir, l.Damage))
			hints = append(hints, fmt.Sprintf("repair it: cudaenv verify --repair %s@%s --cuda-major %d", l.Name, l.Version, l.VariantMajor))
		case major > 0 && l.VariantMajor > 0 && l.VariantMajor != major:
			bad = append(bad, fmt.Sprintf("%s %s is the CUDA %d build, but CUDA %s is selected", l.Title, l.Version, l.VariantMajor, cudaVersion))
			hints = append(hints, fmt.Sprintf("install the matching build: cudaenv install %s@%s --cuda-major %d", l.Name, l.Version, major))
		case l.VariantMajor > 0:
			good = append(good, fmt.Sprintf("%s %s (CUDA %d build)", l.Title, l.Version, l.VariantMajor))
		default:
			good = append(good, fmt.Sprintf("%s %s (its CUDA build is not recorded)", l.Title, l.Version))
		}
	}
	if len(bad) > 0 {
		c.Status, c.Message, c.Hint = Fail, strings.Join(bad, "; "), strings.Join(hints, "; ")
		return c
	}
	c.Message = strings.Join(good, ", ")
	if cudaVersion != "" {
		c.Message += " match CUDA " + cudaVersion
	} else {
		c.Message += "; no toolkit selected to compare them with"
	}
	return c
}
