package image

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

func TestASecondImageSendsOnlyTheLayersTheRegistryLacks(t *testing.T) {
	w := newWorld(t, nil)
	reg := newRegistry(t)
	first := w.mustMake(Request{Select: minimal12().Select, Push: reg.host + "/team/cuda:12.4"})
	sent := reg.sent()
	if len(sent) != len(first.Images[0].Layers)+1 {
		t.Errorf("first push sent %d blobs, want the %d layers and the config", len(sent), len(first.Images[0].Layers))
	}
	if wr := first.Written[0]; wr.Uploaded != len(sent) || wr.Had != 0 || !strings.HasPrefix(wr.Ref, reg.host+"/team/cuda@sha256:") {
		t.Errorf("first push reported %+v", wr)
	}

	// The same toolkit with cuDNN: only cuDNN's layers and a config go.
	req := minimal12()
	req.Select.Args = []string{"12.4", "cudnn@9.5"}
	req.Push = reg.host + "/team/cuda:12.4-cudnn"
	second := w.mustMake(req)
	sent = reg.sent()
	old := digests(first.Images[0].Layers)
	var added []string
	for _, d := range digests(second.Images[0].Layers) {
		if !slices.Contains(old, d) {
			added = append(added, d)
		}
	}
	if len(added) == 0 || len(added) == len(second.Images[0].Layers) {
		t.Fatalf("the second image shares %d of its %d layers", len(second.Images[0].Layers)-len(added), len(second.Images[0].Layers))
	}
	for _, d := range sent {
		if slices.Contains(old, d) {
			t.Errorf("a layer the registry had was sent again: %s", d)
		}
	}
	for _, d := range added {
		if !slices.Contains(sent, d) {
			t.Errorf("a new layer was not sent: %s", d)
		}
	}
	if len(sent) != len(added)+1 {
		t.Errorf("sent %d blobs, want %d new layers and the config", len(sent), len(added))
	}
	if wr := second.Written[0]; wr.Had != len(old) || wr.Uploaded != len(sent) {
		t.Errorf("second push reported %+v; want %d had, %d sent", wr, len(old), len(sent))
	}

	// What the registry serves is the image built, and it has cuDNN's Env.
	ref, _ := name.ParseReference(req.Push)
	img, err := remote.Image(ref)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := img.Digest(); d != second.Digest {
		t.Errorf("registry has %s, built %s", d, second.Digest)
	}
	cfg, _ := img.ConfigFile()
	if !slices.ContainsFunc(cfg.Config.Env, func(kv string) bool { return strings.HasPrefix(kv, "CUDNN_PATH=/opt/cudaenv/cudnn/9.5.1.17-cuda12") }) {
		t.Errorf("env %v", cfg.Config.Env)
	}
}

func TestSeveralPlatformsMakeAnIndex(t *testing.T) {
	w := newWorld(t, nil)
	reg := newRegistry(t)
	req := minimal12()
	req.Select.Platforms = []string{"linux-x86_64", "linux-sbsa"}
	req.Push = reg.host + "/cuda:12.4"
	res := w.mustMake(req)
	if !res.Index || len(res.Images) != 2 {
		t.Fatalf("result %+v", res)
	}
	ref, _ := name.ParseReference(req.Push)
	idx, err := remote.Index(ref)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var plats []string
	for _, d := range im.Manifests {
		plats = append(plats, d.Platform.String())
	}
	if !slices.Equal(plats, []string{"linux/amd64", "linux/arm64"}) {
		t.Errorf("platforms %v", plats)
	}
	if _, err := w.make(Request{Select: req.Select, Outputs: []string{"docker-archive:" + t.TempDir() + "/x.tar"}}); err == nil || !strings.Contains(err.Error(), "a docker-archive holds one platform") {
		t.Errorf("a docker-archive of two platforms: %v", err)
	}
}

// baseImage is a Docker-typed image with two layers and a config as a
// distribution's would have.
func baseImage(t *testing.T, arch string) v1.Image {
	t.Helper()
	img, err := random.Image(512, 2)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", arch
	cf.Config.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "LD_LIBRARY_PATH=/usr/local/lib"}
	cf.Config.Cmd = []string{"/bin/bash"}
	cf.Config.User = "1000"
	cf.Config.WorkingDir = "/work"
	cf.Config.Labels = map[string]string{"org.example.team": "ml"}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func TestABaseKeepsItsLayersAndConfig(t *testing.T) {
	w := newWorld(t, nil)
	reg := newRegistry(t)
	base := baseImage(t, "amd64")
	baseRef, _ := name.ParseReference(reg.host + "/distro:1")
	if err := remote.Write(baseRef, base); err != nil {
		t.Fatal(err)
	}
	ociBase := t.TempDir()
	p, err := layout.Write(ociBase, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	// The same base as an OCI-typed image in a layout.
	oci := mutate.MediaType(base, types.OCIManifestSchema1)
	if err := p.AppendImage(oci); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ desc, base string }{
		{"from a registry", baseRef.String()},
		{"from an OCI layout", "oci:" + ociBase},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			bl, _ := base.Layers()
			var baseBlobs []string
			for _, l := range bl {
				d, _ := l.Digest()
				baseBlobs = append(baseBlobs, "/v2/cuda/blobs/"+d.String())
			}
			reg.mangle = func(w http.ResponseWriter, r *http.Request, next http.Handler) bool {
				if r.Method == http.MethodHead && slices.Contains(baseBlobs, r.URL.Path) {
					http.Error(w, "blob unknown to this repository", http.StatusNotFound)
					return true
				}
				// go-containerregistry's registry has no mounts: answer
				// one from the base's repository as a registry that has
				// them does.
				if m := r.URL.Query().Get("mount"); r.Method == http.MethodPost && r.URL.Query().Get("from") == "distro" && slices.Contains(baseBlobs, "/v2/cuda/blobs/"+m) {
					w.Header().Set("Docker-Content-Digest", m)
					w.Header().Set("Location", "/v2/cuda/blobs/"+m)
					w.WriteHeader(http.StatusCreated)
					return true
				}
				return false
			}
			defer func() { reg.mangle = nil }()
			req := minimal12()
			req.Base = tc.base
			req.Push = reg.host + "/cuda:on-distro-" + strings.ReplaceAll(tc.desc, " ", "-")
			res := w.mustMake(req)
			ref, _ := name.ParseReference(req.Push)
			img, err := remote.Image(ref)
			if err != nil {
				t.Fatal(err)
			}
			il, _ := img.Layers()
			if len(il) != len(bl)+len(res.Images[0].Layers) || res.Images[0].BaseLayers != len(bl) {
				t.Fatalf("%d layers; the base has %d, cudaenv made %d", len(il), len(bl), len(res.Images[0].Layers))
			}
			for i := range bl {
				a, _ := bl[i].Digest()
				b, _ := il[i].Digest()
				if a != b {
					t.Errorf("base layer %d: %s, image has %s", i, a, b)
				}
			}
			// A base in the registry pushed to is mounted from its
			// repository, not sent again (issue #32). This registry
			// keeps blobs for all repositories at once; the mangle
			// makes it answer as registries that keep them per
			// repository do, so the push must ask for a mount.
			if w := res.Written[0]; tc.base == baseRef.String() && (w.Mounted != len(bl) || w.Uploaded != len(res.Images[0].Layers)+1) {
				t.Errorf("pushed beside its base: %d blobs mounted, %d sent; want the base's %d layers mounted, cudaenv's %d layers and a config sent", w.Mounted, w.Uploaded, len(bl), len(res.Images[0].Layers))
			}
			cfg, _ := img.ConfigFile()
			if cfg.Config.User != "1000" || cfg.Config.WorkingDir != "/work" || !slices.Equal(cfg.Config.Cmd, []string{"/bin/bash"}) || cfg.Config.Labels["org.example.team"] != "ml" {
				t.Errorf("the base's config is not kept: %+v", cfg.Config)
			}
			for _, want := range []string{
				"PATH=/opt/cudaenv/cuda/12.4.1/bin:/usr/local/bin:/usr/bin:/bin",
				"LD_LIBRARY_PATH=/opt/cudaenv/cuda/12.4.1/lib64:/usr/local/lib",
				"LANG=C.UTF-8",
			} {
				if !slices.Contains(cfg.Config.Env, want) {
					t.Errorf("env lacks %s: %v", want, cfg.Config.Env)
				}
			}
		})
	}
	// A base for another machine is refused, before anything is built.
	req := minimal12("oci:" + t.TempDir() + "/out")
	armRef, _ := name.ParseReference(reg.host + "/distro:arm")
	if err := remote.Write(armRef, baseImage(t, "arm64")); err != nil {
		t.Fatal(err)
	}
	req.Base = armRef.String()
	if _, err := w.make(req); err == nil || !strings.Contains(err.Error(), "it is for linux/arm64, not linux/amd64") {
		t.Errorf("an arm64 base under an x86_64 toolkit: %v", err)
	}
}
