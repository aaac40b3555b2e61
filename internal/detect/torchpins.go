package detect

import (
	"context"
	"regexp"
	"strings"
	"sync"

	"github.com/cudaenv/cudaenv/internal/venv"
)

// torchCUDAPins reads the CUDA requirements of the torch dist-info in
// site whose METADATA names version.
func (h Host) torchCUDAPins(ctx context.Context, site, version string) []string {
	for _, d := range venv.Dists(ctx, h.file(site), func(name string) bool { return name == "torch" }) {
		if d.Version != version {
			continue
		}
		var pins []string
		for _, req := range d.Requires {
			req, _, _ = strings.Cut(req, ";")
			req = strings.TrimSpace(req)
			name := requirementName(req)
			if name == "" || !strings.HasPrefix(name, "nvidia_") && name != "cuda_toolkit" || !reCUDAPin().MatchString(req) {
				continue
			}
			pins = append(pins, req)
		}
		return pins
	}
	return nil
}

var (
	rePythonVersion = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]{1,2}\.[0-9]{1,3}$`) })
	// reCUDAPin is a requirement as NVIDIA's and PyTorch's are written:
	// name[extras] and version clauses, nothing a terminal acts on.
	reCUDAPin = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}(\[[A-Za-z0-9._,-]{1,200}\])? ?\(?(?:(?:==|>=|<=|~=|!=|<|>)[A-Za-z0-9.*+!_-]{1,60},? ?){1,4}\)?$`)
	})
)
