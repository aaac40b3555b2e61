package install

import (
	"fmt"
	"path/filepath"

	"github.com/cudaenv/cudaenv/internal/bundle"
)

// extractBundle unpacks a checked bundle into tmp/archives, after making
// sure the disk has room for all of it, and caps each member before any
// of it is written at what its role allows: a manifest (or wheel list) at
// maxManifestSize, an archive (or wheel) at the size a manifest extracted
// before it lists. The index alone would let a member be 1 TiB.
func extractBundle(br *bundle.Reader, tmp string, req ImportRequest) (map[string]string, error) {
	ix := &br.Index
	var total int64
	for _, f := range ix.Files {
		total += f.Size
	}
	free := req.FreeSpace
	if free == nil {
		free = freeSpace
	}
	if have, err := free(tmp); err == nil && have >= 0 && total > have {
		// MiB rounded up for the need and down for the room, so the
		// figures never look as if it fits.
		return nil, fmt.Errorf("the bundle holds %d MiB and %s has %d MiB free; free some space (cudaenv cache prune) or point CUDAENV_CACHE_DIR at a disk with room", (total+1<<20-1)>>20, filepath.Dir(tmp), have>>20)
	}
	manifest := map[string]bool{}
	for _, e := range ix.Entries {
		manifest[e.Manifest] = true
	}
	listed := map[string]int64{} // members the manifests read so far list, with their sizes
	planned := make([]bool, len(ix.Entries))
	br.Allow = func(f bundle.File, done map[string]string) error {
		if manifest[f.Name] {
			if f.Size > maxManifestSize {
				return fmt.Errorf("member %s is a manifest of %d bytes; none is more than %d", f.Name, f.Size, maxManifestSize)
			}
			return nil
		}
		for i, e := range ix.Entries {
			if planned[i] || done[e.Manifest] == "" {
				continue
			}
			planned[i] = true
			pl, err := entryPlan(ix, done, e, map[string]bool{})
			if err != nil {
				return fmt.Errorf("%s %s (%s): %w", e.Kind, e.Name, e.Platform, err)
			}
			for _, a := range pl.Artifacts {
				listed[memberName(pl, a)] = a.Size
			}
		}
		size, ok := listed[f.Name]
		switch {
		case !ok:
			return fmt.Errorf("it holds %s, which none of its versions uses (no manifest ahead of it lists it)", f.Name)
		case f.Size != size:
			return fmt.Errorf("member %s is %d bytes; its manifest lists %d", f.Name, f.Size, size)
		}
		return nil
	}
	return br.Extract(filepath.Join(tmp, "archives"))
}
