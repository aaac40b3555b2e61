package image

import (
	"fmt"
	"maps"
	"strconv"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/cudaenv/cudaenv/internal/envdiff"
	"github.com/cudaenv/cudaenv/internal/install"
)

// Label and annotation keys cudaenv writes (reverse DNS of
// cudaenv.github.io).
const (
	keyPrefix = "io.github.cudaenv."
	// KeySelection is what the image's activation selects, as
	// CUDAENV_VERSION takes it: "12.4.1 cudnn@9.5.1.17".
	KeySelection = keyPrefix + "selection"
	// KeyComponents lists every component: "cuda_nvcc@12.4.131 …".
	KeyComponents = keyPrefix + "components"
	// KeyLock is the lock the image was built from: "<file> sha256:<hex>".
	KeyLock = keyPrefix + "lock"
	// KeyPrefix is the folder the files are under.
	KeyPrefix = keyPrefix + "prefix"
	// KeyFormat is LayerFormat.
	KeyFormat = keyPrefix + "layer-format"

	// On each layer's descriptor: the entry, the component, its version,
	// and the archive (or wheel) file and sha256 it was built from.
	KeyEntry          = keyPrefix + "entry"
	KeyComponent      = keyPrefix + "component"
	KeyVersion        = keyPrefix + "component.version"
	KeyArchive        = keyPrefix + "component.file"
	KeyArchiveSHA256  = keyPrefix + "component.sha256"
	annotationBase    = "org.opencontainers.image.base.name"
	annotationBaseDgt = "org.opencontainers.image.base.digest"
	// AnnotationRefName names an image in an OCI layout.
	AnnotationRefName = "org.opencontainers.image.ref.name"
)

// defaultPath is the PATH a container gets when its image sets none
// (Docker's and containerd's default): the activation's entries go in
// front of it, so an image without a base still works as one.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// ociPlatform is the OCI platform of an NVIDIA platform key.
func ociPlatform(p string) (v1.Platform, error) {
	switch p {
	case "linux-x86_64":
		return v1.Platform{OS: "linux", Architecture: "amd64"}, nil
	case "linux-sbsa", "linux-aarch64":
		return v1.Platform{OS: "linux", Architecture: "arm64"}, nil
	case "linux-ppc64le":
		return v1.Platform{OS: "linux", Architecture: "ppc64le"}, nil
	}
	return v1.Platform{}, fmt.Errorf("no container platform for %s; use linux-x86_64 or linux-sbsa", p)
}

// PlatformKey is the NVIDIA platform key a --platform names: the key
// itself, or a container platform (linux/amd64, linux/arm64).
func PlatformKey(s string) string {
	switch strings.ToLower(s) {
	case "linux/amd64", "linux/x86_64":
		return "linux-x86_64"
	case "linux/arm64", "linux/arm64/v8", "linux/aarch64":
		return "linux-sbsa"
	case "linux/ppc64le":
		return "linux-ppc64le"
	}
	return s
}

// nvidiaEnv are the NVIDIA Container Toolkit's variables as NVIDIA's CUDA
// images set them: the driver must run CUDA major.minor (without the
// brand= alternatives, which hold only with the cuda-compat package those
// images carry), all GPUs, the compute and utility driver libraries. A
// base's own VISIBLE_DEVICES and DRIVER_CAPABILITIES are kept.
func nvidiaEnv(env envdiff.Env, cuda *install.ImageEntry) {
	if cuda != nil {
		v := cuda.Version
		mm := strconv.Itoa(v.Major())
		if len(v) > 1 {
			mm += "." + strconv.Itoa(v[1])
		}
		env["NVIDIA_REQUIRE_CUDA"] = "cuda>=" + mm
	}
	if _, ok := env["NVIDIA_VISIBLE_DEVICES"]; !ok {
		env["NVIDIA_VISIBLE_DEVICES"] = "all"
	}
	if _, ok := env["NVIDIA_DRIVER_CAPABILITIES"]; !ok {
		env["NVIDIA_DRIVER_CAPABILITIES"] = "compute,utility"
	}
}

// labels are what names the image's contents, as config labels (docker
// inspect shows them) and as manifest annotations.
func labels(entries []*install.ImageEntry, selector, prefix string, c *install.ImageContents) map[string]string {
	var comps []string
	for _, e := range entries {
		for _, comp := range e.Components {
			comps = append(comps, comp.ID+"@"+comp.Version)
		}
	}
	out := map[string]string{
		KeySelection:  selector,
		KeyComponents: strings.Join(comps, " "),
		KeyPrefix:     prefix,
		KeyFormat:     LayerFormat,
	}
	if c.Lock != "" {
		out[KeyLock] = lockName(c.Lock) + " sha256:" + c.LockSHA256
	}
	return out
}

func lockName(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}

// layerAnnotations name what a layer was built from.
func layerAnnotations(e *install.ImageEntry, c install.ImageComponent) map[string]string {
	return map[string]string{
		KeyEntry:         string(e.Kind) + "/" + e.Name,
		KeyComponent:     c.ID,
		KeyVersion:       c.Version,
		KeyArchive:       c.File,
		KeyArchiveSHA256: c.SHA256,
	}
}

// configFile sets what cudaenv decides in an image's config (the base's,
// or an empty one, with the layers appended): the platform, the
// activation's Env with the NVIDIA variables, and the labels.
func configFile(cfg *v1.ConfigFile, plat v1.Platform, env envdiff.Env, lbl map[string]string) *v1.ConfigFile {
	cfg.OS, cfg.Architecture, cfg.Variant = plat.OS, plat.Architecture, plat.Variant
	cfg.Config.Env = env.Pairs()
	if cfg.Config.Labels == nil {
		cfg.Config.Labels = map[string]string{}
	}
	maps.Copy(cfg.Config.Labels, lbl)
	return cfg
}

// historyOf is a layer's history entry.
func historyOf(e *install.ImageEntry, what string) v1.History {
	return v1.History{Created: v1.Time{Time: epoch}, CreatedBy: "cudaenv image: " + e.Label + " " + what, Comment: "cudaenv"}
}
