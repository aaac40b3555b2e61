package fetch

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Product names a directory of NVIDIA's redist server.
type Product string

// Products cudaenv knows how to install.
const (
	CUDA  Product = "cuda"
	CUDNN Product = "cudnn"
	// The libraries beside cuDNN, each built per CUDA major. NCCL and
	// NVSHMEM have no redist manifest: PyPI is their only source.
	NCCL       Product = "nccl"
	CUSPARSELT Product = "cusparselt"
	CUTENSOR   Product = "cutensor"
	CUDSS      Product = "cudss"
	NVSHMEM    Product = "nvshmem"
)

// Redist reports whether NVIDIA publishes redist manifests of p.
func (p Product) Redist() bool { return p != NCCL && p != NVSHMEM }

// Manifest is a decoded redistrib_<version>.json.
type Manifest struct {
	Version string // release_label, or the version from the file name when the label is missing
	Date    string // release_date
	Product string // release_product as written ("cuda", "cudnn", "cudnn-v8-9-cuda-12"); may be empty
	SHA256  string // of the raw manifest bytes, lower-case hex
	Raw     []byte // the manifest's bytes as read (offline bundles carry them)
	// Components by id ("cuda_nvcc", "cudnn").
	Components map[string]*Component
}

// Component is one top-level object of a manifest.
type Component struct {
	ID          string
	Name        string
	License     string
	LicensePath string
	Version     string
	Variants    []string // cuda_variant, e.g. ["11", "12"]
	// Platforms by key ("linux-x86_64", "windows-x86_64", "source", ...).
	Platforms map[string]*PlatformEntry
}

// PlatformEntry is what a component offers for one platform: a plain
// artifact, per-CUDA variants keyed like "cuda12", or (cuDNN 9.27
// windows-arm64) both at once.
type PlatformEntry struct {
	Artifact *Artifact
	Variants map[string]*Artifact
}

// Artifact is one downloadable archive.
type Artifact struct {
	Component    string // component id
	Name         string // component display name
	License      string // component license name
	Version      string // component version
	Platform     string
	Variant      string // "cuda12", or "" for plain artifacts
	RelativePath string // as in the manifest, relative to the product directory
	SHA256       string // lower-case hex
	Size         int64
	URL          string // product directory + RelativePath; filled by Client.Manifest

	// Unpack, if set, extracts the verified archive f (size bytes) into
	// dest in place of the built-in tar/zip extraction: other sources
	// (PyPI wheels) bring their own layout. f is the file Fetch opened and
	// checked, so a cache file replaced meanwhile cannot be what is
	// unpacked. It must write only below dest, never through a link
	// (pypi.ExtractWheel writes through a rootfs.Tree); Fetch then checks
	// every link in the finished tree.
	Unpack func(ctx context.Context, f *os.File, size int64, dest string) error

	// Reuse, if set, is tried before the archive is obtained: it installs
	// the artifact into dest from elsewhere (the cache of unpacked wheels)
	// and reports whether it did. If not, the archive is obtained and
	// unpacked as usual. It writes as Unpack does.
	Reuse func(ctx context.Context, dest string) (bool, error)

	problem string // why the manifest entry is unusable, found while decoding
}

// Decode parses a manifest. fileVersion is the version from the file name
// (redistrib_<fileVersion>.json) and is used when release_label is missing
// (11.8.0, 12.1.1). Decode reads generic JSON and is lenient: values of
// unexpected types are ignored, and artifacts with unusable fields (a path
// that is absolute or climbs out with "..", a malformed sha256 or size) are
// kept but refused by Manifest.Select and Client.Fetch, so one odd entry
// does not make the whole release unreadable.
func Decode(data []byte, fileVersion string) (*Manifest, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("decode manifest %s: %w", fileVersion, err)
	}
	if top == nil {
		return nil, fmt.Errorf("decode manifest %s: not a JSON object", fileVersion)
	}
	sum := sha256.Sum256(data)
	m := &Manifest{SHA256: hex.EncodeToString(sum[:]), Raw: data, Components: map[string]*Component{}}
	for key, raw := range top {
		switch kindOf(raw) {
		case '"':
			var s string
			if json.Unmarshal(raw, &s) != nil {
				continue
			}
			switch key {
			case "release_label":
				m.Version = s
			case "release_date":
				m.Date = s
			case "release_product":
				m.Product = s
			}
		case '{':
			if c := decodeComponent(key, raw); c != nil {
				m.Components[key] = c
			}
		}
	}
	if m.Version == "" {
		m.Version = fileVersion
	}
	if m.Version == "" {
		return nil, errors.New("decode manifest: no release_label and no version from the file name")
	}
	if !versionRE().MatchString(m.Version) {
		return nil, fmt.Errorf("decode manifest %s: release %s is not a version (digits and dots)", fileVersion, strconv.Quote(m.Version))
	}
	return m, nil
}

// kindOf returns the first significant byte of a JSON value.
func kindOf(raw json.RawMessage) byte {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return 0
	}
	return raw[0]
}

// componentIDRE is what a component id may be: it names folders in
// messages, receipts and locks, so nothing else from a manifest is taken.
var componentIDRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.+-]{0,99}$`) })

func decodeComponent(id string, raw json.RawMessage) *Component {
	if !componentIDRE().MatchString(id) {
		return nil // not a component cudaenv can name
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil || fields == nil {
		return nil
	}
	c := &Component{ID: id, Platforms: map[string]*PlatformEntry{}}
	platforms := map[string]json.RawMessage{}
	for key, v := range fields {
		switch kindOf(v) {
		case '"':
			var s string
			if json.Unmarshal(v, &s) != nil {
				continue
			}
			switch key {
			case "name":
				c.Name = s
			case "license":
				c.License = s
			case "license_path":
				c.LicensePath = s
			case "version":
				c.Version = s
			}
		case '[':
			if key == "cuda_variant" {
				var list []json.RawMessage
				if json.Unmarshal(v, &list) == nil {
					for _, e := range list {
						var s string
						if json.Unmarshal(e, &s) == nil {
							c.Variants = append(c.Variants, s)
						}
					}
				}
			}
		case '{':
			platforms[key] = v
		}
	}
	for key, v := range platforms {
		if p := c.decodePlatform(key, v); p != nil {
			c.Platforms[key] = p
		}
	}
	return c
}

func (c *Component) decodePlatform(platform string, raw json.RawMessage) *PlatformEntry {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil || fields == nil {
		return nil
	}
	p := &PlatformEntry{}
	if _, ok := fields["relative_path"]; ok {
		p.Artifact = c.decodeArtifact(platform, "", fields)
	}
	for key, v := range fields {
		if kindOf(v) != '{' {
			continue
		}
		var vf map[string]json.RawMessage
		if json.Unmarshal(v, &vf) != nil || vf == nil {
			continue
		}
		if _, ok := vf["relative_path"]; !ok {
			continue
		}
		if p.Variants == nil {
			p.Variants = map[string]*Artifact{}
		}
		p.Variants[key] = c.decodeArtifact(platform, key, vf)
	}
	if p.Artifact == nil && p.Variants == nil {
		return nil
	}
	return p
}

func (c *Component) decodeArtifact(platform, variant string, f map[string]json.RawMessage) *Artifact {
	a := &Artifact{
		Component: c.ID, Name: c.Name, License: c.License, Version: c.Version,
		Platform: platform, Variant: variant,
	}
	var problems []string
	if json.Unmarshal(f["relative_path"], &a.RelativePath) != nil {
		problems = append(problems, "relative_path is not a string")
	}
	if json.Unmarshal(f["sha256"], &a.SHA256) != nil {
		problems = append(problems, "sha256 is not a string")
	}
	a.SHA256 = strings.ToLower(a.SHA256)
	switch raw := f["size"]; kindOf(raw) {
	case '"':
		var s string
		_ = json.Unmarshal(raw, &s)
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			problems = append(problems, fmt.Sprintf("size %q is not a number", s))
		}
		a.Size = n
	case 0:
		problems = append(problems, "size is missing")
	default:
		var n json.Number
		if json.Unmarshal(raw, &n) != nil {
			problems = append(problems, "size is not a number")
			break
		}
		v, err := n.Int64()
		if err != nil {
			problems = append(problems, fmt.Sprintf("size %s is not a whole number", n))
		}
		a.Size = v
	}
	a.problem = strings.Join(problems, "; ")
	return a
}

var sha256RE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{64}$`) })

// check reports why a cannot be downloaded and extracted safely.
func (a *Artifact) check() error {
	what := a.Component
	if a.Variant != "" {
		what += " " + a.Variant
	}
	if a.Component == "" {
		what = "artifact"
	}
	// The version goes into receipts and messages: digits and dots only,
	// as for every other version cudaenv reads.
	okVersion := versionRE().MatchString(a.Version)
	ver := a.Version
	if !okVersion {
		ver = strconv.Quote(ver)
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s %s (%s): %s", what, ver, a.Platform, fmt.Sprintf(format, args...))
	}
	if a.problem != "" {
		return fail("%s", a.problem)
	}
	if !okVersion {
		return fail("the version is not digits and dots; refusing it")
	}
	if err := checkRelativePath(a.RelativePath); err != nil {
		return fail("%v", err)
	}
	if !sha256RE().MatchString(a.SHA256) {
		return fail("sha256 %q is not 64 hex digits", a.SHA256)
	}
	if a.Size <= 0 {
		return fail("size %d is not positive", a.Size)
	}
	return nil
}

// checkRelativePath refuses manifest paths that could leave the product
// directory or mean different things on different systems.
func checkRelativePath(p string) error {
	switch {
	case p == "":
		return errors.New("relative_path is empty")
	case strings.ContainsAny(p, "\\\x00"):
		return fmt.Errorf("relative_path %q contains a backslash or NUL", p)
	case strings.HasPrefix(p, "/") || (len(p) >= 2 && p[1] == ':'):
		return fmt.Errorf("relative_path %q is absolute", p)
	case strings.Contains(p, "://") || strings.ContainsAny(p, "?#"):
		return fmt.Errorf("relative_path %q is not a plain path", p)
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." || seg == "." || seg == "" {
			return fmt.Errorf("relative_path %q has an empty, '.' or '..' segment", p)
		}
	}
	if path.Clean(p) != p {
		return fmt.Errorf("relative_path %q is not clean", p)
	}
	return nil
}

// ComponentIDs returns the component ids, sorted.
func (m *Manifest) ComponentIDs() []string {
	ids := make([]string, 0, len(m.Components))
	for id := range m.Components {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Platforms returns every platform key any component offers, sorted.
func (m *Manifest) Platforms() []string {
	set := map[string]bool{}
	for _, c := range m.Components {
		for p := range c.Platforms {
			set[p] = true
		}
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// setURLs fills Artifact.URL from the product directory URL (ending in "/").
func (m *Manifest) setURLs(productDir string) {
	for _, c := range m.Components {
		for _, p := range c.Platforms {
			if p.Artifact != nil {
				p.Artifact.URL = artifactURL(productDir, p.Artifact.RelativePath)
			}
			for _, a := range p.Variants {
				a.URL = artifactURL(productDir, a.RelativePath)
			}
		}
	}
}

func artifactURL(productDir, rel string) string {
	if checkRelativePath(rel) != nil {
		return ""
	}
	return productDir + escapePath(rel)
}
