package fetch

import (
	"encoding/json"
	"path/filepath"
)

// CachedReleases lists a product's releases from every release index
// cached under cacheDir (one per mirror, see Client.Releases), in no set
// order and possibly repeated, without asking any server: shell completion
// uses it and must never download. Unreadable or foreign files are skipped.
func CachedReleases(cacheDir string, p Product) []string {
	if cacheDir == "" || checkProduct(p) != nil {
		return nil
	}
	// The layout of Client.indexPath, with any cache key.
	paths, _ := filepath.Glob(filepath.Join(cacheDir, "index", "*", string(p)+".json"))
	var out []string
	for _, path := range paths {
		out = append(out, readCachedIndex(path)...)
	}
	return out
}

// maxCachedIndex bounds what a corrupt cache file makes completion read.
const maxCachedIndex = 4 << 20

func readCachedIndex(path string) []string {
	// As every cache file that decides something (readOwnFile): no link
	// followed, no named pipe waited on, another user's not believed.
	data, _, err := readOwnFile(path, maxCachedIndex)
	if err != nil {
		return nil
	}
	var idx struct {
		Releases []string `json:"releases"` // only these: a bad date or base does not hide them
	}
	if json.Unmarshal(data, &idx) != nil {
		return nil
	}
	var out []string
	for _, v := range idx.Releases {
		if versionRE().MatchString(v) {
			out = append(out, v)
		}
	}
	return out
}
