package install

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/cudaenv/cudaenv/fetch"
	"github.com/cudaenv/cudaenv/fetch/pypi"
)

// A wheel record says that this user saw an index list a wheel of a
// project with a sha256: index/pypi-<index key>/wheels/<sha256>.json in
// the download cache. It is what PyPI has instead of a cached manifest:
// offline, a locked wheel's sha256 is believed only with a record that
// this user (or root) wrote; one that another user planted in a shared
// cache is not.
type wheelRecord struct {
	Project string `json:"project"`
	File    string `json:"file"`
	// SHA256 repeats the file's name, so that a record renamed by whoever
	// owns a shared cache's folder vouches for nothing.
	SHA256 string `json:"sha256"`
}

// wheelRecordPath is the record of a sha256 for an index, inside the cache.
func wheelRecordPath(indexURL, sum string) string {
	key := sha256.Sum256([]byte(indexURL))
	return filepath.Join("index", "pypi-"+hex.EncodeToString(key[:6]), "wheels", sum+".json")
}

// rememberWheel writes the record of a wheel the index lists with sum.
// A record that cannot be written only costs a later --offline install.
func (in *Installer) rememberWheel(indexURL, project, file, sum string) {
	if in.opts.CacheDir == "" || len(sum) != 64 || strings.Trim(sum, "0123456789abcdef") != "" {
		return
	}
	data, err := json.Marshal(wheelRecord{Project: pypi.NormalizeProject(project), File: file, SHA256: sum})
	if err != nil {
		return
	}
	_ = in.client.WriteTrusted(wheelRecordPath(indexURL, sum), data)
}

// rememberWheels records the wheels of a plan made from the index's pages.
func (in *Installer) rememberWheels(indexURL string, arts []fetch.Artifact) {
	for _, a := range arts {
		in.rememberWheel(indexURL, a.Name, a.RelativePath, a.SHA256)
	}
}

// recalledWheels checks, offline, that this user's records say the index
// listed each locked wheel (a.Name's, by file name) with the lock's sha256.
func (in *Installer) recalledWheels(indexURL string, arts []fetch.Artifact) error {
	for _, a := range arts {
		how := "no record of it"
		if in.opts.CacheDir != "" {
			data, err := in.client.ReadTrusted(wheelRecordPath(indexURL, a.SHA256))
			var r wheelRecord
			switch {
			case errors.Is(err, fetch.ErrForeign):
				how = "its record in the download cache was written by another user and is not believed"
			case errors.Is(err, fs.ErrNotExist):
			case err != nil:
				how = "its record cannot be read: " + err.Error()
			case json.Unmarshal(data, &r) != nil || r.Project != pypi.NormalizeProject(a.Name) || r.File != a.RelativePath || r.SHA256 != a.SHA256:
				how = "the record of that sha256 names another wheel"
			default:
				continue
			}
		}
		return fmt.Errorf("%w: %s (%s): nothing this user fetched from %s lists the locked sha256 %s (%s), and a wheel in the download cache is believed only as the index lists it; run without --offline", fetch.ErrOffline, a.Component, a.RelativePath, indexURL, a.SHA256, how)
	}
	return nil
}
