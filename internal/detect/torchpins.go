package detect

import (
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// torchCUDAPins reads the CUDA requirements of the torch dist-info in
// site whose METADATA names version.
func (h Host) torchCUDAPins(site, version string) []string {
	for _, entry := range h.readNames(site, maxSiteEntries) {
		stem, ok := strings.CutSuffix(entry, ".dist-info")
		if !ok || frameworkOf(strings.ToLower(stem)) != "torch" {
			continue
		}
		meta := h.readCappedFile(filepath.Join(site, entry, "METADATA"), maxMetadataBytes)
		if vs := metadataField(meta, "Version"); len(vs) != 1 || vs[0] != version {
			continue
		}
		var pins []string
		for _, req := range metadataField(meta, "Requires-Dist") {
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
