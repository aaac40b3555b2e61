// Package bundle reads and writes cudaenv's offline bundles: one ordinary
// tar file whose first member, cudaenv-bundle.json, is an index of every
// other member (name, size, sha256) and of the versions the bundle
// installs; then the release manifests (or wheel lists) and the original
// archives (or wheels), laid out like NVIDIA's server
// (cuda/redist/redistrib_12.4.1.json, cuda/redist/cuda_nvcc/…), so that an
// unpacked bundle is also a file:// mirror.
//
// A bundle is hostile input. The index is read first, capped in size and
// checked (names are plain relative paths, listed once, with 64-hex
// sha256s) before any other byte is read. Then every member must be a
// regular file the index lists (not sparse: its holes would unpack to more
// than the bundle holds), appear once, have the listed size, be allowed
// that size by the caller (Reader.Allow) before a byte of it is written,
// and hash to the listed sha256; and every listed file must appear. Members
// are written only under their sha256, never under their names, so no
// name can place a file anywhere. What the manifests say about the
// archives is checked by the installer, which reads them.
package bundle

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// IndexName is the bundle's first member.
const IndexName = "cudaenv-bundle.json"

// Format names this layout; a bundle of another format is refused.
const Format = "cudaenv-bundle/1"

// Limits on what a bundle may claim; real bundles are far below them.
const (
	MaxIndexSize = 1 << 20 // bytes of cudaenv-bundle.json
	MaxFiles     = 10000
	MaxEntries   = 1000
	MaxFileSize  = 1 << 40
	maxNameLen   = 512
)

// Index is cudaenv-bundle.json.
type Index struct {
	Format  string  `json:"format"`
	Entries []Entry `json:"entries"`
	Files   []File  `json:"files"`
}

// Entry is one version the bundle installs, for one platform.
type Entry struct {
	Kind      string `json:"kind"`                 // cuda or cudnn
	Name      string `json:"name"`                 // the store entry: 12.4.1, 9.5.1.17-cuda12
	Source    string `json:"source"`               // nvidia (archives) or pypi (wheels)
	Release   string `json:"release"`              // the manifest's release: 12.4.1, 9.5.1
	Platform  string `json:"platform"`             // linux-x86_64, …
	Profile   string `json:"profile,omitempty"`    // minimal, default, full; none for an explicit list
	CUDAMajor int    `json:"cuda_major,omitempty"` // cuDNN: the CUDA major of the build
	// URL is where the exporter got the files (for the receipt).
	URL string `json:"url,omitempty"`
	// Manifest is the member holding NVIDIA's manifest (nvidia) or the
	// wheel list (pypi) the archives are checked against.
	Manifest   string   `json:"manifest"`
	Components []string `json:"components"` // component ids, sorted
}

// File is one member after the index.
type File struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Wheels is a pypi entry's manifest member: the wheels the exporter
// verified against its PyPI index.
type Wheels struct {
	ManifestSHA256 string  `json:"manifest_sha256,omitempty"` // of the NVIDIA release manifest the versions come from
	Wheels         []Wheel `json:"wheels"`
}

// Wheel is one wheel of a Wheels list; its member is pypi/<File>.
type Wheel struct {
	Component string `json:"component"`
	Project   string `json:"project"`
	Version   string `json:"version"`
	Platform  string `json:"platform"`
	File      string `json:"file"`
	SHA256    string `json:"sha256"`
	Size      int64  `json:"size"`
}

var (
	// Compiled on first use: package init stays free.
	sha256RE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{64}$`) })
	nameRE     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9._+@=-]+$`) }) // one path segment
	idRE       = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9._-]+$`) })
	platformRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(linux|windows)-[a-z0-9_]+$`) })
)

// CheckName refuses member names that are not plain relative paths: empty
// or '.'/'..' segments, absolute paths, backslashes, NUL and control
// characters, anything outside a small character set.
func CheckName(name string) error {
	switch {
	case name == "" || len(name) > maxNameLen:
		return fmt.Errorf("member name %q is empty or longer than %d bytes", name, maxNameLen)
	case strings.HasPrefix(name, "/"):
		return fmt.Errorf("member name %q is absolute", name)
	case path.Clean(name) != name:
		return fmt.Errorf("member name %q is not a clean relative path", name)
	}
	for _, seg := range strings.Split(name, "/") {
		if seg == "." || seg == ".." || !nameRE().MatchString(seg) {
			return fmt.Errorf("member name %q has a segment that is not a plain file name", name)
		}
	}
	return nil
}

// Check validates an index on its own: the format, the limits, every
// name, size and sha256, and that each entry's manifest is listed.
func (ix *Index) Check() error {
	if ix.Format != Format {
		return fmt.Errorf("format %q is not %s; is this a cudaenv bundle, and is this cudaenv older than the one that wrote it?", ix.Format, Format)
	}
	if len(ix.Entries) == 0 {
		return errors.New("the index lists no versions")
	}
	if len(ix.Entries) > MaxEntries || len(ix.Files) > MaxFiles {
		return fmt.Errorf("the index lists %d versions and %d files; a bundle holds at most %d and %d", len(ix.Entries), len(ix.Files), MaxEntries, MaxFiles)
	}
	listed := make(map[string]bool, len(ix.Files))
	for _, f := range ix.Files {
		if err := CheckName(f.Name); err != nil {
			return err
		}
		if f.Name == IndexName {
			return fmt.Errorf("the index lists itself")
		}
		if listed[f.Name] {
			return fmt.Errorf("the index lists %s twice", f.Name)
		}
		listed[f.Name] = true
		if f.Size < 0 || f.Size > MaxFileSize {
			return fmt.Errorf("%s: size %d is out of range", f.Name, f.Size)
		}
		if !sha256RE().MatchString(f.SHA256) {
			return fmt.Errorf("%s: sha256 %q is not 64 lower-case hex digits", f.Name, f.SHA256)
		}
	}
	for _, e := range ix.Entries {
		what := e.Kind + " " + e.Name
		switch {
		case !slices.Contains(Kinds, e.Kind):
			return fmt.Errorf("version %q: kind %q is neither cuda nor cudnn nor a library cudaenv installs (%s)", e.Name, e.Kind, strings.Join(Kinds[2:], ", "))
		case e.Source != "nvidia" && e.Source != "pypi":
			return fmt.Errorf("%s: source %q is neither nvidia nor pypi", what, e.Source)
		case !idRE().MatchString(e.Name) || !idRE().MatchString(e.Release):
			return fmt.Errorf("%s: name %q or release %q is not a version", what, e.Name, e.Release)
		case !platformRE().MatchString(e.Platform):
			return fmt.Errorf("%s: %q is not a platform key", what, e.Platform)
		case e.Profile != "" && !idRE().MatchString(e.Profile):
			return fmt.Errorf("%s: profile %q is not a profile name", what, e.Profile)
		case e.CUDAMajor < 0 || e.CUDAMajor > 1000:
			return fmt.Errorf("%s: CUDA major %d is out of range", what, e.CUDAMajor)
		case !utf8.ValidString(e.URL) || len(e.URL) > 2048 || strings.ContainsAny(e.URL, "\x00\n\r"):
			return fmt.Errorf("%s: url is not a one-line URL", what)
		case !listed[e.Manifest]:
			return fmt.Errorf("%s: its manifest %q is not among the bundle's files", what, e.Manifest)
		case len(e.Components) == 0:
			return fmt.Errorf("%s: no components", what)
		}
		for _, id := range e.Components {
			if !idRE().MatchString(id) {
				return fmt.Errorf("%s: component %q is not a component id", what, id)
			}
		}
	}
	return nil
}

// Kinds are the entry kinds a bundle may hold: the store's kinds.
var Kinds = []string{"cuda", "cudnn", "nccl", "cusparselt", "cutensor", "cudss", "nvshmem"}

// Lookup returns the listed file of a name.
func (ix *Index) Lookup(name string) (File, bool) {
	for _, f := range ix.Files {
		if f.Name == name {
			return f, true
		}
	}
	return File{}, false
}

// Write writes a bundle: the index first, then each listed file in the
// index's order, read from open and checked against its size and sha256
// as it is copied (a cache that changed since it was verified makes a
// bundle nobody could import). Headers are fixed (mode 0644, owner 0,
// time 0), so the same contents make the same bytes.
func Write(w io.Writer, ix Index, open func(File) (io.ReadCloser, error)) error {
	ix.Format = Format
	if err := ix.Check(); err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	data, err := json.MarshalIndent(ix, "", "  ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	if len(data) > MaxIndexSize {
		return fmt.Errorf("bundle: the index would be %d bytes, more than %d; export fewer versions at once", len(data), MaxIndexSize)
	}
	tw := tar.NewWriter(w)
	if err := tw.WriteHeader(header(IndexName, int64(len(data)))); err != nil {
		return err
	}
	if _, err := tw.Write(data); err != nil {
		return err
	}
	for _, f := range ix.Files {
		if err := writeMember(tw, f, open); err != nil {
			return fmt.Errorf("bundle: %s: %w", f.Name, err)
		}
	}
	return tw.Close()
}

func header(name string, size int64) *tar.Header {
	return &tar.Header{Typeflag: tar.TypeReg, Name: name, Size: size, Mode: 0o644, ModTime: time.Unix(0, 0), Format: tar.FormatPAX}
}

func writeMember(tw *tar.Writer, f File, open func(File) (io.ReadCloser, error)) error {
	r, err := open(f)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := tw.WriteHeader(header(f.Name, f.Size)); err != nil {
		return err
	}
	h := sha256.New()
	n, err := io.Copy(tw, io.TeeReader(io.LimitReader(r, f.Size), h))
	if err != nil {
		return err
	}
	if n != f.Size {
		return fmt.Errorf("%d bytes, not %d", n, f.Size)
	}
	if sum := hex.EncodeToString(h.Sum(nil)); sum != f.SHA256 {
		return fmt.Errorf("sha256 %s, not %s as verified earlier", sum, f.SHA256)
	}
	return nil
}

// Reader reads a bundle whose index has been read and checked.
type Reader struct {
	Index Index
	// Allow, if not nil, is asked about each member before any of it is
	// written, with the paths of the members extracted so far: the index
	// alone would let a member be 1 TiB, so the caller caps each at what
	// its role allows (a manifest's cap, the size a manifest lists).
	Allow func(f File, done map[string]string) error
	tr    *tar.Reader
}

// Open reads and checks the index, the bundle's first member, and
// nothing more.
func Open(r io.Reader) (*Reader, error) {
	tr := tar.NewReader(r)
	hdr, err := tr.Next()
	if err != nil {
		return nil, fmt.Errorf("not a cudaenv bundle (not a tar file: %v)", err)
	}
	if hdr.Name != IndexName {
		return nil, fmt.Errorf("not a cudaenv bundle: its first member is %q, not %s", hdr.Name, IndexName)
	}
	if !regular(hdr) {
		return nil, fmt.Errorf("not a cudaenv bundle: its index is a %s, not a regular file", typeName(hdr))
	}
	if hdr.Size > MaxIndexSize {
		return nil, fmt.Errorf("its index is %d bytes, more than the %d any bundle needs; refusing it", hdr.Size, MaxIndexSize)
	}
	data, err := io.ReadAll(io.LimitReader(tr, MaxIndexSize+1))
	if err != nil {
		return nil, fmt.Errorf("read the index: %w", err)
	}
	var ix Index
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ix); err != nil {
		return nil, fmt.Errorf("its index is not valid: %w", err)
	}
	if err := ix.Check(); err != nil {
		return nil, fmt.Errorf("its index is not valid: %w", err)
	}
	return &Reader{Index: ix, tr: tr}, nil
}

func regular(h *tar.Header) bool {
	return (h.Typeflag == tar.TypeReg || h.Typeflag == '\x00') && !sparse(h) //nolint:staticcheck // old tars write '\0' for TypeReg
}

// sparse reports a PAX sparse file: a regular file whose GNU.sparse.*
// records make archive/tar fill holes with zeros, so a few KiB of bundle
// read as a terabyte. (The old GNU sparse type is not TypeReg.)
func sparse(h *tar.Header) bool {
	for k := range h.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return true
		}
	}
	return false
}

// Extract reads every member after the index and writes each into dir as
// dir/<sha256>, after checking it against the index (see the package
// comment). It returns the paths by member name. On error, what it wrote
// is removed and nothing should be installed.
func (r *Reader) Extract(dir string) (map[string]string, error) {
	want := make(map[string]File, len(r.Index.Files))
	for _, f := range r.Index.Files {
		want[f.Name] = f
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	paths := make(map[string]string, len(want))
	fail := func(err error) (map[string]string, error) {
		for _, p := range paths {
			os.Remove(p)
		}
		return nil, err
	}
	for {
		hdr, err := r.tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fail(fmt.Errorf("read the bundle: %w", err))
		}
		f, listed := want[hdr.Name]
		switch {
		case !regular(hdr):
			return fail(fmt.Errorf("member %s is a %s; a bundle holds regular files only", strconv.Quote(hdr.Name), typeName(hdr)))
		case !listed:
			return fail(fmt.Errorf("member %s is not in the bundle's index", strconv.Quote(hdr.Name)))
		case paths[hdr.Name] != "":
			return fail(fmt.Errorf("member %s appears twice", strconv.Quote(hdr.Name)))
		case hdr.Size != f.Size:
			return fail(fmt.Errorf("member %s is %d bytes; the index says %d", hdr.Name, hdr.Size, f.Size))
		}
		if r.Allow != nil {
			if err := r.Allow(f, paths); err != nil {
				return fail(err)
			}
		}
		p, err := keep(dir, f, r.tr)
		if err != nil {
			return fail(err)
		}
		paths[hdr.Name] = p
	}
	for _, f := range r.Index.Files {
		if paths[f.Name] == "" {
			return fail(fmt.Errorf("the index lists %s, which the bundle lacks (a cut-off copy?)", f.Name))
		}
	}
	return paths, nil
}

// keep copies one member to dir/<sha256>, checking size and hash before
// the file gets its name.
func keep(dir string, f File, body io.Reader) (string, error) {
	final := filepath.Join(dir, f.SHA256)
	tmp, err := os.CreateTemp(dir, ".part-")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(body, f.Size+1))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("member %s: %w", f.Name, err)
	}
	if n != f.Size {
		return "", fmt.Errorf("member %s is %d bytes; the index says %d", f.Name, n, f.Size)
	}
	if sum := hex.EncodeToString(h.Sum(nil)); sum != f.SHA256 {
		return "", fmt.Errorf("member %s does not match the index: sha256 %s, the index says %s", f.Name, sum, f.SHA256)
	}
	if err := os.Rename(tmp.Name(), final); err != nil {
		return "", err
	}
	return final, nil
}

func typeName(h *tar.Header) string {
	if sparse(h) {
		return "sparse file"
	}
	switch t := h.Typeflag; t {
	case tar.TypeSymlink:
		return "symbolic link"
	case tar.TypeLink:
		return "hard link"
	case tar.TypeDir:
		return "directory"
	case tar.TypeChar, tar.TypeBlock:
		return "device"
	case tar.TypeFifo:
		return "FIFO"
	case tar.TypeGNUSparse:
		return "sparse file"
	}
	return fmt.Sprintf("member of tar type %q", h.Typeflag)
}
