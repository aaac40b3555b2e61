package install

import (
	"fmt"

	"github.com/cudaenv/cudaenv/fetch/pypi"
	"github.com/cudaenv/cudaenv/internal/version"
)

// productSpecs adds a spec for each library a framework wheel pins
// besides cuDNN (NCCL, cuSPARSELt, NVSHMEM, …), and the lines that say
// so. Install takes them from PyPI unless --source is typed: the wheel
// pins that very wheel.
func productSpecs(specs []version.Spec, pins []pypi.ProductPin) ([]version.Spec, []string, error) {
	var lines []string
	for _, p := range pins {
		t, ok := version.ToolNamed(p.Library)
		if !ok || !t.Library() {
			continue
		}
		if p.Err != nil {
			lines = append(lines, fmt.Sprintf("%s → %s left out: %v", p.From, t.Title(), p.Err))
			continue
		}
		v, err := version.Parse(p.Version)
		if err != nil {
			return nil, nil, fmt.Errorf("install --for: the pins name %s %q: %w", t.Title(), p.Version, err)
		}
		dup := false
		for _, s := range specs {
			dup = dup || s.Tool == t
		}
		if dup {
			continue
		}
		specs = append(specs, version.Spec{Tool: t, Kind: version.Prefix, Prefix: v})
		lines = append(lines, fmt.Sprintf("%s → %s %s", p.From, t.Title(), v))
	}
	return specs, lines, nil
}
