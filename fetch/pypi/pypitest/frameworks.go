package pypitest

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/cudaenv/cudaenv/fetch/fetchtest"
	"github.com/cudaenv/cudaenv/fetch/pypi"
)

// ServeMode is how the index lets a framework wheel's metadata be read.
type ServeMode int

const (
	// ServeMetadata lists the wheel with core-metadata (PEP 658/714) and
	// serves its METADATA at <wheel URL>.metadata.
	ServeMetadata ServeMode = iota
	// ServeRanges offers no .metadata file and answers Range requests,
	// refusing (403) a whole-file GET of a wheel larger than 64 KiB, as a
	// client that must not download a 500 MB wheel is tested against.
	ServeRanges
	// ServeWhole offers no .metadata file and ignores Range: every GET gets
	// the whole file.
	ServeWhole
)

// FrameworkWheel is a wheel of a framework (torch, jax-cuda13-plugin,
// tensorflow, the cuda-toolkit meta-package, ...) with the METADATA given.
type FrameworkWheel struct {
	Project, Version string
	Build            string // optional build tag: torch-2.10.0-3-...
	Python           string // python tag; default cp312
	// ABI is the abi tag: default the python tag for cp3N, else none
	// (cp38-abi3: ABI "abi3").
	ABI            string
	Platform       string   // wheel platform tag; default manylinux_2_28_x86_64
	RequiresPython string   // listed on the page, e.g. ">=3.10"
	Requires       []string // Requires-Dist lines
	ProvidesExtra  []string
	Serve          ServeMode
	// Padding adds that many stored (incompressible) bytes, so the wheel
	// is too big to be read whole.
	Padding int
	// Metadata, when set, is the METADATA served and zipped as is
	// (hostile or malformed ones); else it is built from the fields above.
	Metadata string
	// BadRange answers every range request with the file's first bytes,
	// labelled as such (a server that ignores the offset).
	BadRange bool
	// Zip64Entries, when set, ends the wheel with a zip64 end of central
	// directory record claiming that many entries (its directory holds
	// the real ones): archive/zip sizes its list of entries from it.
	Zip64Entries uint64
	// Zip64DirSize, when set with Zip64Entries, is the size of the
	// central directory that record claims.
	Zip64DirSize uint64
	// ClaimSHA256, when set, is the sha256 the index page lists for the
	// wheel instead of its own (a hostile index claiming an honest
	// wheel's).
	ClaimSHA256 string
	// ClaimSize, when set, is the size the index page lists and the
	// server serves: zeros, then the wheel's bytes at the end (so the
	// archive is found where a reader looks for it).
	ClaimSize int64
}

// Frameworks adds framework wheels to the index, each project listed with
// its wheels (several versions of one project may be given).
func Frameworks(ws ...FrameworkWheel) Option {
	return func(c *config) { c.frameworks = append(c.frameworks, ws...) }
}

// MetadataText is the METADATA the index builds for w.
func (w FrameworkWheel) MetadataText() string {
	if w.Metadata != "" {
		return w.Metadata
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: a test wheel\n", w.Project, w.Version)
	for _, r := range w.Requires {
		fmt.Fprintf(&b, "Requires-Dist: %s\n", r)
	}
	for _, e := range w.ProvidesExtra {
		fmt.Fprintf(&b, "Provides-Extra: %s\n", e)
	}
	b.WriteString("Description-Content-Type: text/markdown\n\n# A description\n\nRequires-Dist: not-a-header\n")
	return b.String()
}

// Filename is the wheel's file name.
func (w FrameworkWheel) Filename() string {
	py := w.Python
	if py == "" {
		py = "cp312"
	}
	abi := py
	if !strings.HasPrefix(py, "cp") {
		abi = "none"
	}
	if w.ABI != "" {
		abi = w.ABI
	}
	plat := w.Platform
	if plat == "" {
		plat = "manylinux_2_28_x86_64"
	}
	parts := []string{strings.ReplaceAll(pypi.NormalizeProject(w.Project), "-", "_"), w.Version}
	if w.Build != "" {
		parts = append(parts, w.Build)
	}
	return strings.Join(append(parts, py, abi, plat), "-") + ".whl"
}

func (w FrameworkWheel) build() ([]byte, error) {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	stamp := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	dist := strings.ReplaceAll(pypi.NormalizeProject(w.Project), "-", "_") + "-" + w.Version + ".dist-info/"
	pkg := strings.ReplaceAll(pypi.NormalizeProject(w.Project), "-", "_")
	entries := []struct {
		name, body string
		method     uint16
	}{
		{pkg + "/__init__.py", "__version__ = " + fmt.Sprintf("%q", w.Version) + "\n", zip.Deflate},
		{pkg + "/padding.bin", strings.Repeat("\x00", w.Padding), zip.Store},
		{dist + "METADATA", w.MetadataText(), zip.Deflate},
		{dist + "WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: false\n", zip.Deflate},
		{dist + "RECORD", "", zip.Deflate},
	}
	for _, e := range entries {
		f, err := zw.CreateHeader(&zip.FileHeader{Name: e.name, Method: e.method, Modified: stamp})
		if err != nil {
			return nil, err
		}
		if _, err := f.Write([]byte(e.body)); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	if w.Zip64Entries == 0 {
		return b.Bytes(), nil
	}
	return w.zip64End(b.Bytes()), nil
}

// zip64End ends data with a zip64 end record claiming w.Zip64Entries
// entries; with ClaimSize, the locator counts from the start of the bytes
// served (zeros first).
func (w FrameworkWheel) zip64End(data []byte) []byte {
	at := uint64(0)
	if w.ClaimSize > 0 {
		at = uint64(w.ClaimSize) - (56 + 20 + 22) // the record, its locator, the end record
	}
	return fetchtest.Zip64End(data, w.Zip64Entries, w.Zip64DirSize, at)
}

// claimed is the bytes a wheel is served as: its data, after zeros up to
// ClaimSize when that is set.
type claimed struct {
	data []byte
	size int64
}

func (c claimed) ReadAt(p []byte, off int64) (int, error) {
	if off >= c.size {
		return 0, io.EOF
	}
	n := 0
	start := c.size - int64(len(c.data))
	for n < len(p) && off+int64(n) < c.size {
		pos := off + int64(n)
		if pos < start {
			k := min(int64(len(p)-n), start-pos)
			clear(p[n : n+int(k)])
			n += int(k)
			continue
		}
		n += copy(p[n:], c.data[pos-start:])
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// addFrameworks builds the framework wheels into the index's projects.
func (ix *Index) addFrameworks() {
	for _, fw := range ix.cfg.frameworks {
		data, err := fw.build()
		if err != nil {
			ix.tb.Fatalf("pypitest: build %s: %v", fw.Filename(), err)
		}
		project := pypi.NormalizeProject(fw.Project)
		p := ix.projects[project]
		if p == nil {
			p = &projectFiles{}
			ix.projects[project] = p
		}
		sum := sha256.Sum256(data)
		wh := Wheel{Project: project, Version: fw.Version, Filename: fw.Filename(), SHA256: hex.EncodeToString(sum[:]), Data: data}
		p.fixed = append(p.fixed, wh)
		ix.frameworks[wh.Filename] = fw
	}
}

// metadataOf is the core-metadata a page lists for a file: its sha256
// when the index serves the .metadata file, else "".
func (ix *Index) metadataOf(filename string) string {
	text, ok := ix.metadataText(filename)
	if !ok {
		return ""
	}
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

// metadataText is the .metadata file served for a wheel, if any: a
// framework wheel's when it is served so, a generated wheel's always.
func (ix *Index) metadataText(filename string) (string, bool) {
	if fw, ok := ix.frameworks[filename]; ok {
		return fw.MetadataText(), fw.Serve == ServeMetadata
	}
	if wh, ok := ix.Wheel(filename); ok && wh.Metadata != "" {
		return wh.Metadata, true
	}
	return "", false
}

// requiresPython is what the page lists as a file's Requires-Python.
func (ix *Index) requiresPython(filename string) string {
	return ix.frameworks[filename].RequiresPython
}

// serveFramework serves a framework wheel or its .metadata as its
// ServeMode says; false when name is no framework file.
func (ix *Index) serveFramework(w http.ResponseWriter, r *http.Request, name string) bool {
	if base, ok := strings.CutSuffix(name, ".metadata"); ok {
		text, ok := ix.metadataText(base)
		if !ok {
			http.NotFound(w, r)
			return true
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write([]byte(text))
		return true
	}
	fw, ok := ix.frameworks[name]
	if !ok {
		return false
	}
	wh, _ := ix.Wheel(name)
	var body io.ReadSeeker = bytes.NewReader(wh.Data)
	size := int64(len(wh.Data))
	if fw.ClaimSize > 0 {
		body, size = io.NewSectionReader(claimed{wh.Data, fw.ClaimSize}, 0, fw.ClaimSize), fw.ClaimSize
	}
	switch fw.Serve {
	case ServeWhole:
		r.Header.Del("Range")
	case ServeRanges:
		if r.Header.Get("Range") == "" && r.Method == http.MethodGet && size > 64<<10 {
			http.Error(w, "whole-file downloads of big wheels are refused here", http.StatusForbidden)
			return true
		}
		if fw.BadRange && r.Header.Get("Range") != "" {
			var start, end int
			if _, err := fmt.Sscanf(r.Header.Get("Range"), "bytes=%d-%d", &start, &end); err == nil && end >= start {
				n := min(end-start+1, len(wh.Data))
				w.Header().Set("Content-Range", fmt.Sprintf("bytes 0-%d/%d", n-1, len(wh.Data)))
				w.WriteHeader(http.StatusPartialContent)
				_, _ = w.Write(wh.Data[:n])
				return true
			}
		}
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	http.ServeContent(w, r, name, time.Time{}, body)
	return true
}

// listedSize is the size the index page gives a file.
func (ix *Index) listedSize(wh Wheel) int64 {
	if fw, ok := ix.frameworks[wh.Filename]; ok && fw.ClaimSize > 0 {
		return fw.ClaimSize
	}
	return int64(len(wh.Data))
}
