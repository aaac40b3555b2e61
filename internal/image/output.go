package image

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/match"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/cudaenv/cudaenv/internal/atomicfile"
)

func (o output) write(ctx context.Context, top taggable, tag name.Tag, reg *Registry, set layerSet) (Written, error) {
	switch o.kind {
	case "oci":
		return writeLayout(o.dest, top, tag.TagStr(), set)
	case "docker-archive":
		img, ok := top.(v1.Image)
		if !ok {
			return Written{}, errors.New("image: a docker-archive holds one platform")
		}
		err := atomicfile.WriteWith(o.dest, 0o644, func(f *os.File) error {
			if err := tarball.Write(tag, img, f); err != nil {
				return err
			}
			return f.Sync()
		})
		if err != nil {
			return Written{}, fmt.Errorf("image: write %s: %w", o.dest, err)
		}
		return Written{Where: "docker-archive:" + o.dest, Ref: tag.String()}, nil
	}
	return push(ctx, o.ref, top, reg)
}

// writeLayout adds the image (or index) to the OCI layout at dir, created
// if need be, named ref: what the layout had under that name is replaced,
// blobs it already has are not written again, and the layers built in the
// work folder are linked in where they can be (same disk) instead of
// copied.
func writeLayout(dir string, top taggable, ref string, set layerSet) (Written, error) {
	where := "oci:" + dir
	fail := func(err error) (Written, error) { return Written{}, fmt.Errorf("image: write %s: %w", where, err) }
	var p layout.Path
	isLayout, err := layoutOrEmpty(dir)
	switch {
	case err != nil:
		return fail(err)
	case isLayout:
		if p, err = layout.FromPath(dir); err != nil {
			return fail(err)
		}
	default:
		if p, err = layout.Write(dir, empty.Index); err != nil {
			return fail(err)
		}
	}
	blobs := filepath.Join(dir, "blobs", "sha256")
	if err := os.MkdirAll(blobs, 0o755); err != nil {
		return fail(err)
	}
	for _, c := range set {
		dst := filepath.Join(blobs, c.b.digest.Hex)
		if _, err := os.Lstat(dst); err == nil {
			continue
		}
		// Best effort: go-containerregistry copies what is not linked.
		_ = os.Link(c.b.path, dst)
	}
	named := match.Annotation(AnnotationRefName, ref)
	opt := layout.WithAnnotations(map[string]string{AnnotationRefName: ref})
	switch t := top.(type) {
	case v1.Image:
		err = p.ReplaceImage(t, named, opt)
	case v1.ImageIndex:
		err = p.ReplaceIndex(t, named, opt)
	}
	if err != nil {
		return fail(err)
	}
	return Written{Where: where, Ref: ref}, nil
}

// layoutOrEmpty reports whether dir is an OCI layout; when it is not,
// it must be missing or empty (an image is never written among other
// files).
func layoutOrEmpty(dir string) (bool, error) {
	if _, err := os.Stat(filepath.Join(dir, "oci-layout")); err == nil {
		return true, nil
	}
	des, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	if len(des) > 0 {
		return false, fmt.Errorf("%s holds files and is no OCI layout (no oci-layout file); name a new or empty folder", dir)
	}
	return false, nil
}

// push sends the image (or index) to a registry: blobs it has are not
// sent (checked one by one), layers of a base in the same registry are
// mounted where it allows.
func push(ctx context.Context, ref name.Reference, top taggable, reg *Registry) (Written, error) {
	r := *reg
	r.count = newPushCount()
	opts := r.options(ctx, ref.Context())
	var err error
	switch t := top.(type) {
	case v1.Image:
		err = remote.Write(ref, t, opts...)
	case v1.ImageIndex:
		err = remote.WriteIndex(ref, t, opts...)
	}
	if err != nil {
		return Written{}, fmt.Errorf("image: push %s: %w", ref, plain(err))
	}
	d, err := top.Digest()
	if err != nil {
		return Written{}, err
	}
	w := Written{Where: ref.String(), Ref: ref.Context().Digest(d.String()).String()}
	c := r.count
	c.mu.Lock()
	defer c.mu.Unlock()
	w.Uploaded, w.Had, w.Mounted, w.UploadedBytes = len(c.uploadedSet), len(c.hadSet), len(c.mount), c.bytes
	return w, nil
}
