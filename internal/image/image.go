// Package image builds container images of CUDA toolkits and NVIDIA's
// libraries without a container engine: one layer per component (per
// NVIDIA archive or wheel), each built deterministically (sorted entries,
// fixed owners, modes and times, a fixed compressor and level), so that a
// component gives the same layer digest on any machine and in any image;
// files under a fixed prefix, laid out as in the store; the config's Env
// what cudaenv's activation sets for that prefix. Images are written as an
// OCI layout or a docker-archive, or pushed to a registry (only the blobs
// it lacks), optionally on a base image whose layers are copied, never
// unpacked.
package image

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/cudaenv/cudaenv/internal/envdiff"
	"github.com/cudaenv/cudaenv/internal/install"
	"github.com/cudaenv/cudaenv/store"
)

// DefaultPrefix is the folder an image's files are under, laid out as in
// the store: /opt/cudaenv/cuda/12.4.1, /opt/cudaenv/cudnn/9.5.1.17-cuda12.
const DefaultPrefix = "/opt/cudaenv"

// Request is one `cudaenv image`.
type Request struct {
	// Select is what the image holds, planned as install plans it.
	Select install.ImageRequest
	// Prefix is the folder the files go under; "" means DefaultPrefix.
	Prefix string
	// Base is the image to put the layers on (a registry reference, or
	// oci:DIR[:NAME]); "" means none: the image holds only the toolkit.
	Base string
	// Outputs are where the image is written: oci:DIR (an OCI image
	// layout, created or added to) or docker-archive:FILE (what docker
	// load reads; one platform).
	Outputs []string
	// Push is a registry reference to push the image to; "" means none.
	Push string
	// Tag names the image in a docker-archive (and, its tag, in an OCI
	// layout); "" means cudaenv/<product>:<version>.
	Tag string
	// Registry is how registries are reached (bases, pushes).
	Registry *Registry
	// Jobs are the layers built at once; <= 0 means one per CPU core.
	Jobs int
	// Reporter hears the plan's events and shows the downloads and layers
	// (install's); nil hears nothing.
	Reporter install.Reporter
	// Layer, if set, hears each layer as it is done.
	Layer func(Layer)
}

// Layer is one layer the build made.
type Layer struct {
	Platform  string
	Entry     string // CUDA 12.4.1
	Component string // cuda_nvcc; "" for the entry's own layers (Own says which)
	// Own is which of the entry's own layers it is: OwnLinks (the version
	// link and install's layout links) or OwnGenerated (the files install
	// writes: link stubs, version files, CMake packages); "" for a
	// component's.
	Own      string
	Version  string
	Digest   v1.Hash
	Size     int64 // compressed
	Unpacked int64 // the tar's size
}

// Image is the image of one platform.
type Image struct {
	Platform   string
	Digest     v1.Hash
	Layers     []Layer // cudaenv's, in order, after the base's
	BaseLayers int
	Env        []string // the config's, KEY=VALUE
}

// Result is what a build made and where it went.
type Result struct {
	Images []Image
	// Digest is the image's (one platform) or the index's (several).
	Digest  v1.Hash
	Index   bool
	Tag     string
	Written []Written
}

// Written is one output.
type Written struct {
	Where string // oci:DIR, docker-archive:FILE, or the reference pushed
	Ref   string // the name it has there (ref.name, tag, reference@digest)
	// Pushes only: blobs sent, those the registry had, those it mounted
	// from another repository, and the bytes sent.
	Uploaded, Had, Mounted int
	UploadedBytes          int64
}

// Make builds the image the request describes and writes (or pushes) it.
func Make(ctx context.Context, in *install.Installer, req Request) (*Result, error) {
	prefix, err := checkPrefix(req.Prefix)
	if err != nil {
		return nil, err
	}
	outs, err := parseOutputs(req.Outputs, req.Push)
	if err != nil {
		return nil, err
	}
	if req.Base != "" && !strings.HasPrefix(req.Base, "oci:") {
		// Said before anything is planned or built.
		if _, err := parseRef("--base", req.Base); err != nil {
			return nil, err
		}
	}
	reg := req.Registry
	if reg == nil {
		reg = &Registry{}
	}
	contents, err := in.ImageContents(ctx, req.Select)
	if err != nil {
		return nil, err
	}
	tag, err := imageTag(req.Tag, contents)
	if err != nil {
		return nil, err
	}
	for _, o := range outs {
		if o.kind == "docker-archive" && len(contents.Platforms) > 1 {
			return nil, fmt.Errorf("image: a docker-archive holds one platform, and %d are asked for; use --output oci:DIR or --push for several", len(contents.Platforms))
		}
	}
	var bases map[string]*base
	if req.Base != "" {
		if bases, err = openBases(ctx, req.Base, contents.Platforms, reg); err != nil {
			return nil, err
		}
	}
	contents.Track(req.Reporter)
	defer contents.Close()
	work, done, err := in.WorkDir()
	if err != nil {
		return nil, fmt.Errorf("image: %w", err)
	}
	defer done()
	layers, err := buildLayers(ctx, in, contents, prefix, work, req.Jobs, req.Layer)
	if err != nil {
		return nil, err
	}
	res := &Result{Tag: tag.String()}
	var imgs []v1.Image
	for _, platform := range contents.Platforms {
		img, info, err := assemble(ctx, contents, platform, layers, bases[platform], prefix, work, req.Layer)
		if err != nil {
			return nil, err
		}
		imgs = append(imgs, img)
		res.Images = append(res.Images, info)
	}
	var top taggable
	if len(imgs) == 1 {
		top = imgs[0]
		res.Digest = res.Images[0].Digest
	} else {
		idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
		for i, img := range imgs {
			plat, _ := ociPlatform(contents.Platforms[i])
			idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &plat}})
		}
		top, res.Index = idx, true
		if res.Digest, err = idx.Digest(); err != nil {
			return nil, err
		}
	}
	for _, o := range outs {
		w, err := o.write(ctx, top, tag, reg, layers)
		if err != nil {
			return nil, err
		}
		res.Written = append(res.Written, w)
	}
	return res, nil
}

// taggable is an image or an index.
type taggable interface {
	Digest() (v1.Hash, error)
	MediaType() (types.MediaType, error)
	RawManifest() ([]byte, error)
}

// checkPrefix is the prefix, "" meaning DefaultPrefix: an absolute, clean
// slash path without ':' (the separator of the PATH lists it goes into),
// control characters or backslashes, and not the root itself.
func checkPrefix(p string) (string, error) {
	if p == "" {
		return DefaultPrefix, nil
	}
	bad := func(why string) error {
		return fmt.Errorf("image --prefix %q: %s; name a folder like %s", p, why, DefaultPrefix)
	}
	switch {
	case !strings.HasPrefix(p, "/"):
		return "", bad("not an absolute path")
	case p == "/":
		return "", bad("the root folder")
	case path.Clean(p) != p:
		return "", bad("not a clean path (no trailing /, //, . or ..)")
	case strings.ContainsAny(p, ":\\"):
		return "", bad("':' would split PATH and LD_LIBRARY_PATH, and '\\' is no separator in a Linux image")
	case len(p) > 200:
		return "", bad("longer than 200 characters")
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f {
			return "", bad("a control character")
		}
	}
	return p, nil
}

// output is one place the image goes.
type output struct {
	kind string         // oci, docker-archive, push
	dest string         // the folder or file
	ref  name.Reference // a push's
}

func parseOutputs(outputs []string, push string) ([]output, error) {
	var out []output
	for _, o := range outputs {
		kind, dest, ok := strings.Cut(o, ":")
		if !ok || dest == "" || (kind != "oci" && kind != "docker-archive") {
			return nil, fmt.Errorf("image --output %q: use oci:DIR (an OCI image layout) or docker-archive:FILE (what docker load reads)", o)
		}
		// Said before anything is built: a file where a layout goes, a
		// folder where an archive goes.
		if fi, err := os.Stat(dest); err == nil {
			switch {
			case kind == "oci" && !fi.IsDir():
				return nil, fmt.Errorf("image --output %q: %s is a file; an OCI layout is a folder: name a new or empty one, or a layout", o, dest)
			case kind == "oci":
				if _, err := layoutOrEmpty(dest); err != nil {
					return nil, fmt.Errorf("image --output %q: %w", o, err)
				}
			case kind == "docker-archive" && fi.IsDir():
				return nil, fmt.Errorf("image --output %q: %s is a folder; name a file, e.g. docker-archive:cuda.tar", o, dest)
			}
		}
		out = append(out, output{kind: kind, dest: dest})
	}
	if push != "" {
		ref, err := parseRef("--push", push)
		if err != nil {
			return nil, err
		}
		out = append(out, output{kind: "push", dest: push, ref: ref})
	}
	if len(out) == 0 {
		return nil, errors.New("image needs somewhere to put the image: --output oci:DIR, --output docker-archive:FILE or --push REGISTRY/REPO:TAG")
	}
	return out, nil
}

// parseRef reads a registry reference given to flag (--push, --base),
// saying what one looks like rather than go-containerregistry's words
// (which name its Go API).
func parseRef(flag, ref string) (name.Reference, error) {
	if strings.Contains(ref, "://") {
		return nil, fmt.Errorf("image %s %q: name the registry without a scheme, e.g. ghcr.io/org/cuda:12.4 (plain HTTP is used only for a registry on this machine: localhost:5000/cuda:12.4)", flag, ref)
	}
	r, err := name.ParseReference(ref)
	if err != nil {
		return nil, fmt.Errorf("image %s %q: not a registry reference; name one like ghcr.io/org/cuda:12.4 or localhost:5000/cuda:12.4", flag, ref)
	}
	return r, nil
}

// imageTag is the tag given, or cudaenv/<kind>:<name> of the first entry.
func imageTag(tag string, c *install.ImageContents) (name.Tag, error) {
	if tag == "" {
		e := c.Entries[c.Platforms[0]][0]
		tag = "cudaenv/" + string(e.Kind) + ":" + e.Name
	}
	t, err := name.NewTag(tag)
	if err != nil {
		return name.Tag{}, fmt.Errorf("image --tag %q: %w", tag, err)
	}
	return t, nil
}

// component is one layer to build.
type component struct {
	platform string
	e        *install.ImageEntry
	c        install.ImageComponent
	dir      string // the entry's files, below the prefix
	b        *built
	nodes    []node // its tree, for the skeleton
}

func (c *component) key() string { return c.platform + "\x00" + c.e.Name + "\x00" + c.c.SHA256 }

// layerSet is every component's layer, by key.
type layerSet map[string]*component

// buildLayers builds every component's layer, Jobs at once, the largest
// archive first: each is unpacked alone into the work folder, written as
// a layer and removed.
func buildLayers(ctx context.Context, in *install.Installer, contents *install.ImageContents, prefix, work string, jobs int, hear func(Layer)) (layerSet, error) {
	set := layerSet{}
	var todo []*component
	for _, platform := range contents.Platforms {
		for _, e := range contents.Entries[platform] {
			files, _ := entryDirs(e)
			for _, c := range e.Components {
				comp := &component{platform: platform, e: e, c: c, dir: files}
				if set[comp.key()] == nil {
					set[comp.key()] = comp
					todo = append(todo, comp)
				}
			}
		}
	}
	sort.SliceStable(todo, func(i, j int) bool { return todo[i].c.Size > todo[j].c.Size })
	if jobs <= 0 {
		jobs = runtime.NumCPU()
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int, len(todo))
	for i := range todo {
		next <- i
	}
	close(next)
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
		mu    sync.Mutex
	)
	for w := 0; w < min(jobs, len(todo)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if ctx.Err() != nil {
					return
				}
				c := todo[i]
				if err := buildOne(ctx, in, c, prefix, work, i); err != nil {
					once.Do(func() { first = err; cancel(err) })
					return
				}
				c.e.Done(c.c.ID)
				if hear != nil {
					mu.Lock()
					hear(Layer{Platform: c.platform, Entry: c.e.Label, Component: c.c.ID, Version: c.c.Version, Digest: c.b.digest, Size: c.b.size, Unpacked: c.b.raw})
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return nil, first
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return set, nil
}

func buildOne(ctx context.Context, in *install.Installer, c *component, prefix, work string, i int) error {
	dir := filepath.Join(work, fmt.Sprintf("c%d", i))
	defer in.RemoveUnpacked(dir)
	if err := in.UnpackComponent(ctx, c.e, c.c, dir); err != nil {
		return err
	}
	nodes, err := walkTree(dir)
	if err != nil {
		return fmt.Errorf("image %s: %s: %w", c.e.Label, c.c.ID, err)
	}
	b, err := writeLayer(ctx, under(layerPath(prefix, c.dir), nodes), filepath.Join(work, fmt.Sprintf("l%d.tar.gz", i)))
	if err != nil {
		return fmt.Errorf("image %s: %s: %w", c.e.Label, c.c.ID, err)
	}
	// The skeleton holds names only, but for the files finishing the
	// entry reads (the headers its link stubs are made from): those are
	// kept, bounded, until the image is assembled.
	inputs := install.FinishInputs()
	for j := range nodes {
		src := nodes[j].src
		nodes[j].src = ""
		if nodes[j].typ != tar.TypeReg || !slices.Contains(inputs, nodes[j].name) {
			continue
		}
		kept := filepath.Join(work, fmt.Sprintf("in%d-%d", i, j))
		if err := copyBounded(src, kept, install.MaxFinishInput); err != nil {
			return fmt.Errorf("image %s: %s: %w", c.e.Label, c.c.ID, err)
		}
		nodes[j].src = kept
	}
	c.b, c.nodes = b, nodes
	return nil
}

// assemble makes one platform's image: the base (or nothing) with a layer
// per component, each entry's own layers (its links, then the files
// install generates) after its components', and the config: the base's, with the activation's Env, the
// NVIDIA variables and the labels.
func assemble(ctx context.Context, contents *install.ImageContents, platform string, set layerSet, b *base, prefix, work string, hear func(Layer)) (v1.Image, Image, error) {
	info := Image{Platform: platform}
	plat, err := ociPlatform(platform)
	if err != nil {
		return nil, info, err
	}
	skel := &skeleton{root: filepath.Join(work, "skel-"+platform)}
	entries := contents.Entries[platform]
	lmt, docker := types.OCILayer, false
	var img v1.Image
	if b != nil {
		img, docker = b.img, b.docker
		if docker {
			lmt = types.DockerLayer
		}
		m, err := b.img.Manifest()
		if err != nil {
			return nil, info, err
		}
		info.BaseLayers = len(m.Layers)
	} else {
		img = mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	}
	var adds []mutate.Addendum
	add := func(e *install.ImageEntry, bl *built, what string, ann map[string]string, l Layer) {
		a := mutate.Addendum{Layer: &fileLayer{b: bl, mt: lmt}, History: historyOf(e, what), MediaType: lmt}
		if !docker {
			a.Annotations = ann
		}
		adds = append(adds, a)
		info.Layers = append(info.Layers, l)
	}
	var cuda *install.ImageEntry
	for i, e := range entries {
		if e.Kind == store.CUDA {
			cuda = e
		}
		files, _ := entryDirs(e)
		for _, c := range e.Components {
			comp := set[(&component{platform: platform, e: e, c: c}).key()]
			if err := skel.add(files, comp.nodes); err != nil {
				return nil, info, fmt.Errorf("image %s: %w", e.Label, err)
			}
			add(e, comp.b, c.ID+" "+c.Version, layerAnnotations(e, c),
				Layer{Platform: platform, Entry: e.Label, Component: c.ID, Version: c.Version, Digest: comp.b.digest, Size: comp.b.size, Unpacked: comp.b.raw})
		}
		links, err := skel.layout(e)
		if err != nil {
			return nil, info, fmt.Errorf("image %s: %w", e.Label, err)
		}
		// What install writes into a tree after unpacking it (link stubs,
		// version files, CMake packages), made from the same files: a
		// layer of its own, after the links it may be reached through.
		generated, err := skel.finish(e)
		if err != nil {
			return nil, info, err
		}
		for _, own := range []struct {
			kind  string
			nodes []node
		}{{OwnLinks, links}, {OwnGenerated, generated}} {
			if len(own.nodes) == 0 {
				continue
			}
			bl, err := writeLayer(ctx, withParents(layerPath(prefix, ""), own.nodes), filepath.Join(work, fmt.Sprintf("e-%s-%d-%s.tar.gz", platform, i, own.kind)))
			if err != nil {
				return nil, info, fmt.Errorf("image %s: %w", e.Label, err)
			}
			l := Layer{Platform: platform, Entry: e.Label, Own: own.kind, Digest: bl.digest, Size: bl.size, Unpacked: bl.raw}
			add(e, bl, own.kind, map[string]string{KeyEntry: string(e.Kind) + "/" + e.Name, KeyOwn: own.kind}, l)
			if hear != nil {
				hear(l)
			}
		}
	}
	img, err = mutate.Append(img, adds...)
	if err != nil {
		return nil, info, err
	}
	baseEnv := envdiff.Env{"PATH": defaultPath}
	if b != nil {
		baseEnv = envdiff.ParseEnv(b.cfg.Config.Env, "linux")
	}
	env, r := skel.activation(entries, contents.Options, prefix, baseEnv)
	nvidiaEnv(env, cuda)
	lbl := labels(entries, r.Selector(), prefix, contents)
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, info, err
	}
	cf = cf.DeepCopy()
	if b == nil {
		cf.Created = v1.Time{Time: epoch}
	}
	cf = configFile(cf, plat, env, lbl)
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return nil, info, err
	}
	if !docker {
		ann := lbl
		if b != nil {
			ann = map[string]string{annotationBase: b.ref, annotationBaseDgt: b.digest.String()}
			for k, v := range lbl {
				ann[k] = v
			}
		}
		img = mutate.Annotations(img, ann).(v1.Image)
	}
	info.Env = cf.Config.Env
	if info.Digest, err = img.Digest(); err != nil {
		return nil, info, err
	}
	return img, info, nil
}

// withParents puts nodes (slash paths below root) below root, with every
// folder above each of them that is not among them, all in walk order.
func withParents(root string, nodes []node) []node {
	have := map[string]bool{}
	var all []node
	for _, n := range nodes {
		n.name = path.Join(root, n.name)
		have[n.name] = true
		all = append(all, n)
	}
	for _, n := range nodes {
		for d := path.Dir(path.Join(root, n.name)); d != "." && d != "/" && !have[d]; d = path.Dir(d) {
			have[d] = true
			all = append(all, node{name: d, typ: tar.TypeDir, mode: 0o755})
		}
	}
	sort.Slice(all, func(i, j int) bool { return walkLess(all[i].name, all[j].name) })
	return all
}

// walkLess orders slash paths as a depth-first walk that reads each
// folder's names in byte order.
func walkLess(a, b string) bool {
	as, bs := strings.Split(a, "/"), strings.Split(b, "/")
	for i := 0; i < len(as) && i < len(bs); i++ {
		if as[i] != bs[i] {
			return as[i] < bs[i]
		}
	}
	return len(as) < len(bs)
}
