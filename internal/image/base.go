package image

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// What a base image may be. A base comes from anywhere, so everything
// read of it is bounded and checked against its digest; its layers are
// never unpacked, only copied (or mounted) byte for byte, checked against
// their digests as they are read.
const (
	// maxManifest bounds an index or manifest (the OCI distribution spec
	// has registries accept 4 MiB).
	maxManifest = 4 << 20
	// maxConfig bounds an image config; real ones are a few KiB, with a
	// long history some hundred.
	maxConfig = 8 << 20
	// maxLayers bounds the layers of a base (overlayfs stacks at most
	// 128 on most kernels).
	maxLayers = 500
	// maxLayerSize bounds one base layer's declared size.
	maxLayerSize = 64 << 30
)

// base is a base image for one platform.
type base struct {
	ref    string // as given
	img    v1.Image
	cfg    *v1.ConfigFile
	docker bool // a Docker schema 2 manifest: the image keeps Docker media types
	digest v1.Hash
}

// BaseError is a base image that cannot be used, and why.
type BaseError struct {
	Ref string
	Err error
}

func (e *BaseError) Error() string { return "base " + e.Ref + ": " + e.Err.Error() }
func (e *BaseError) Unwrap() error { return e.Err }

// openBases opens the base for each platform.
func openBases(ctx context.Context, ref string, platforms []string, reg *Registry) (map[string]*base, error) {
	out := map[string]*base{}
	var src baseSource
	if dir, ok := strings.CutPrefix(ref, "oci:"); ok {
		ls, err := openLayoutBase(dir)
		if err != nil {
			return nil, &BaseError{ref, err}
		}
		src = ls
	} else {
		r, err := parseRef("--base", ref)
		if err != nil {
			return nil, err
		}
		src = &registryBase{ref: r, reg: reg, ctx: ctx}
	}
	for _, p := range platforms {
		plat, err := ociPlatform(p)
		if err != nil {
			return nil, err
		}
		b, err := src.image(plat)
		if err == nil {
			err = checkBase(b, plat)
		}
		if err != nil {
			return nil, &BaseError{ref, plain(err)}
		}
		b.ref = ref
		out[p] = b
	}
	return out, nil
}

type baseSource interface {
	image(v1.Platform) (*base, error)
}

// checkBase holds a base to what an image may be built on: a manifest of
// an image, a config of a bounded size for the platform, a bounded number
// of layers of known kinds and sane sizes, one diff_id per layer.
func checkBase(b *base, plat v1.Platform) error {
	m, err := b.img.Manifest()
	if err != nil {
		return err
	}
	if m.Config.Size <= 0 || m.Config.Size > maxConfig {
		return fmt.Errorf("its config is %d bytes; refusing a config outside 1 byte to %d MiB", m.Config.Size, maxConfig>>20)
	}
	if len(m.Layers) > maxLayers {
		return fmt.Errorf("it has %d layers, more than %d", len(m.Layers), maxLayers)
	}
	for _, l := range m.Layers {
		if !l.MediaType.IsLayer() || !l.MediaType.IsDistributable() {
			return fmt.Errorf("layer %s is of type %q, which cudaenv does not copy", l.Digest, l.MediaType)
		}
		if l.Size < 0 || l.Size > maxLayerSize {
			return fmt.Errorf("layer %s says it is %d bytes; refusing it", l.Digest, l.Size)
		}
	}
	cfg, err := b.img.ConfigFile()
	if err != nil {
		return fmt.Errorf("its config: %w", err)
	}
	if len(cfg.RootFS.DiffIDs) != len(m.Layers) {
		return fmt.Errorf("its config lists %d layers, its manifest %d", len(cfg.RootFS.DiffIDs), len(m.Layers))
	}
	if cfg.OS != plat.OS || cfg.Architecture != plat.Architecture {
		return fmt.Errorf("it is for %s/%s, not %s/%s", cfg.OS, cfg.Architecture, plat.OS, plat.Architecture)
	}
	b.cfg = cfg
	b.docker = m.MediaType == types.DockerManifestSchema2
	b.digest, err = b.img.Digest()
	return err
}

// pick chooses the manifest of a platform from an index.
func pick(im *v1.IndexManifest, plat v1.Platform) (v1.Descriptor, error) {
	var have []string
	for _, d := range im.Manifests {
		if d.Platform == nil {
			continue
		}
		if d.Platform.OS == plat.OS && d.Platform.Architecture == plat.Architecture && (plat.Variant == "" || d.Platform.Variant == plat.Variant) {
			return d, nil
		}
		have = append(have, d.Platform.String())
	}
	return v1.Descriptor{}, fmt.Errorf("it has no image for %s (it has: %s)", plat.String(), strings.Join(have, ", "))
}

// registryBase is a base from a registry, read through go-containerregistry
// (which checks every blob and every manifest named by digest against it)
// over Registry's transport (which bounds manifests, and every read in
// time).
type registryBase struct {
	ref name.Reference
	reg *Registry
	ctx context.Context
}

func (r *registryBase) image(plat v1.Platform) (*base, error) {
	opts := r.reg.options(r.ctx, r.ref.Context())
	desc, err := remote.Get(r.ref, opts...)
	if err != nil {
		return nil, err
	}
	switch {
	case desc.MediaType.IsIndex():
		im, err := v1.ParseIndexManifest(bytes.NewReader(desc.Manifest))
		if err != nil {
			return nil, err
		}
		d, err := pick(im, plat)
		if err != nil {
			return nil, err
		}
		if d.Size > maxManifest {
			return nil, fmt.Errorf("its %s manifest is %d bytes, more than %d MiB", plat.String(), d.Size, maxManifest>>20)
		}
		img, err := remote.Image(r.ref.Context().Digest(d.Digest.String()), opts...)
		if err != nil {
			return nil, err
		}
		return &base{img: img}, nil
	case desc.MediaType.IsImage():
		img, err := desc.Image()
		if err != nil {
			return nil, err
		}
		return &base{img: img}, nil
	}
	return nil, fmt.Errorf("it is a %q, not an image", desc.MediaType)
}

// layoutBase is a base from an OCI image layout on disk.
type layoutBase struct {
	dir  string
	desc v1.Descriptor // what index.json names
}

// openLayoutBase reads DIR's index.json (DIR:NAME picks the entry whose
// org.opencontainers.image.ref.name is NAME).
func openLayoutBase(spec string) (*layoutBase, error) {
	dir, want := spec, ""
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		if i := strings.LastIndexByte(spec, ':'); i > 0 {
			dir, want = spec[:i], spec[i+1:]
		}
	}
	data, err := readBounded(filepath.Join(dir, "index.json"), maxManifest)
	if err != nil {
		return nil, err
	}
	im, err := v1.ParseIndexManifest(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("index.json: %w", err)
	}
	var found []v1.Descriptor
	var names []string
	for _, d := range im.Manifests {
		n := d.Annotations[AnnotationRefName]
		if n != "" {
			names = append(names, n)
		}
		if want == "" || n == want {
			found = append(found, d)
		}
	}
	switch {
	case len(found) == 1:
		return &layoutBase{dir: dir, desc: found[0]}, nil
	case want != "":
		return nil, fmt.Errorf("no image named %q in %s (it has: %s)", want, dir, strings.Join(names, ", "))
	case len(found) == 0:
		return nil, fmt.Errorf("%s holds no image", dir)
	}
	return nil, fmt.Errorf("%s holds %d images; name one: oci:%s:NAME (names: %s)", dir, len(found), dir, strings.Join(names, ", "))
}

func (l *layoutBase) image(plat v1.Platform) (*base, error) {
	d := l.desc
	if d.MediaType.IsIndex() {
		data, err := l.blob(d, maxManifest)
		if err != nil {
			return nil, err
		}
		im, err := v1.ParseIndexManifest(bytes.NewReader(data))
		if err != nil {
			return nil, err
		}
		if d, err = pick(im, plat); err != nil {
			return nil, err
		}
	}
	if !d.MediaType.IsImage() {
		return nil, fmt.Errorf("it names a %q, not an image", d.MediaType)
	}
	raw, err := l.blob(d, maxManifest)
	if err != nil {
		return nil, err
	}
	m, err := v1.ParseManifest(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	if m.Config.Size <= 0 || m.Config.Size > maxConfig {
		return nil, fmt.Errorf("its config is %d bytes; refusing a config outside 1 byte to %d MiB", m.Config.Size, maxConfig>>20)
	}
	cfg, err := l.blob(m.Config, maxConfig)
	if err != nil {
		return nil, err
	}
	img, err := partial.CompressedToImage(&layoutImage{l: l, raw: raw, m: m, cfg: cfg, mt: d.MediaType})
	if err != nil {
		return nil, err
	}
	return &base{img: img}, nil
}

// blobPath is where a layout keeps a blob; only sha256 digests name one.
func (l *layoutBase) blobPath(h v1.Hash) (string, error) {
	if h.Algorithm != "sha256" || len(h.Hex) != 64 {
		return "", fmt.Errorf("digest %s: only sha256 digests are read", h)
	}
	return filepath.Join(l.dir, "blobs", "sha256", h.Hex), nil
}

// blob reads a small blob whole: at most limit bytes, exactly the
// descriptor's size, and its digest.
func (l *layoutBase) blob(d v1.Descriptor, limit int64) ([]byte, error) {
	if d.Size < 0 || d.Size > limit {
		return nil, fmt.Errorf("%s is %d bytes; refusing more than %d MiB", d.Digest, d.Size, limit>>20)
	}
	p, err := l.blobPath(d.Digest)
	if err != nil {
		return nil, err
	}
	rc, err := openBlob(p, d)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

// openBlob opens a layout's blob for reading, checked as it is read: a
// regular file (no link, no device), of the descriptor's size, whose
// bytes hash to its digest (the reader fails at the end otherwise).
func openBlob(p string, d v1.Descriptor) (io.ReadCloser, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, fmt.Errorf("blob %s: %w", d.Digest, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("blob %s is not a plain file", d.Digest)
	}
	if fi.Size() != d.Size {
		return nil, fmt.Errorf("blob %s is %d bytes; its descriptor says %d", d.Digest, fi.Size(), d.Size)
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	return &verifier{r: f, c: f, want: d, h: sha256.New()}, nil
}

// verifier passes a blob through and fails at its end unless it was
// exactly the descriptor's size and digest.
type verifier struct {
	r    io.Reader
	c    io.Closer
	want v1.Descriptor
	h    hash.Hash
	n    int64
}

func (v *verifier) Read(p []byte) (int, error) {
	if left := v.want.Size - v.n + 1; int64(len(p)) > left {
		p = p[:left]
	}
	n, err := v.r.Read(p)
	v.h.Write(p[:n])
	v.n += int64(n)
	if v.n > v.want.Size {
		return n, fmt.Errorf("blob %s is larger than its descriptor's %d bytes", v.want.Digest, v.want.Size)
	}
	if errors.Is(err, io.EOF) {
		if v.n != v.want.Size {
			return n, fmt.Errorf("blob %s is %d bytes; its descriptor says %d", v.want.Digest, v.n, v.want.Size)
		}
		if got := hex.EncodeToString(v.h.Sum(nil)); got != v.want.Digest.Hex {
			return n, fmt.Errorf("blob %s has sha256 %s: not what its digest says; refusing it", v.want.Digest, got)
		}
	}
	return n, err
}

func (v *verifier) Close() error { return v.c.Close() }

// readBounded reads a small file of a layout: a plain file of at most
// limit bytes.
func readBounded(p string, limit int64) ([]byte, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a plain file", p)
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%s is %d bytes; refusing more than %d MiB", p, fi.Size(), limit>>20)
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, limit))
}

// layoutImage is a base's image in a layout, as partial completes it.
type layoutImage struct {
	l   *layoutBase
	raw []byte
	m   *v1.Manifest
	cfg []byte
	mt  types.MediaType
}

func (i *layoutImage) RawConfigFile() ([]byte, error)      { return i.cfg, nil }
func (i *layoutImage) MediaType() (types.MediaType, error) { return i.mt, nil }
func (i *layoutImage) RawManifest() ([]byte, error)        { return i.raw, nil }

func (i *layoutImage) LayerByDigest(h v1.Hash) (partial.CompressedLayer, error) {
	for _, d := range i.m.Layers {
		if d.Digest == h {
			return &layoutLayer{l: i.l, d: d}, nil
		}
	}
	if i.m.Config.Digest == h {
		return &layoutLayer{l: i.l, d: i.m.Config}, nil
	}
	return nil, fmt.Errorf("blob %s is not in the image", h)
}

// layoutLayer is a base layer in a layout, read checked.
type layoutLayer struct {
	l *layoutBase
	d v1.Descriptor
}

func (l *layoutLayer) Digest() (v1.Hash, error)            { return l.d.Digest, nil }
func (l *layoutLayer) Size() (int64, error)                { return l.d.Size, nil }
func (l *layoutLayer) MediaType() (types.MediaType, error) { return l.d.MediaType, nil }

func (l *layoutLayer) Compressed() (io.ReadCloser, error) {
	p, err := l.l.blobPath(l.d.Digest)
	if err != nil {
		return nil, err
	}
	return openBlob(p, l.d)
}
