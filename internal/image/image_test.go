package image

import (
	"archive/tar"
	"context"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/cudaenv/cudaenv/fetch/fetchtest"
	"github.com/cudaenv/cudaenv/fetch/pypi/pypitest"
	"github.com/cudaenv/cudaenv/internal/install"
)

func TestTwoBuildsOnTwoMachinesGiveTheSameLayersAndImage(t *testing.T) {
	mirror := fetchtest.NewMirror(t, fetchtest.Options{})
	a := newWorld(t, mirror).mustMake(minimal12("oci:" + filepath.Join(t.TempDir(), "a")))
	// Another cache, another work folder, other cores: the same bytes.
	prev := runtime.GOMAXPROCS(1)
	b := newWorld(t, mirror).mustMake(Request{Select: minimal12().Select, Outputs: []string{"oci:" + filepath.Join(t.TempDir(), "b")}, Jobs: 1})
	runtime.GOMAXPROCS(prev)
	if !slices.Equal(digests(a.Images[0].Layers), digests(b.Images[0].Layers)) {
		t.Errorf("layers differ:\n%v\n%v", digests(a.Images[0].Layers), digests(b.Images[0].Layers))
	}
	if a.Digest != b.Digest {
		t.Errorf("image digests differ: %s, %s", a.Digest, b.Digest)
	}
}

func TestEveryComponentIsALayerOfItsOwnUnderThePrefix(t *testing.T) {
	w := newWorld(t, nil)
	dir := filepath.Join(t.TempDir(), "oci")
	res := w.mustMake(minimal12("oci:" + dir))
	img := readLayout(t, dir, "12.4.1")
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	var comps []string
	for i, l := range layers {
		names := tarNames(t, l)
		comp := m.Layers[i].Annotations[KeyComponent]
		if comp == "" {
			// The entry's own layer: the version link and install's layout links.
			for _, want := range []string{"opt/cudaenv/cuda/12.4.1 -> 12.4", "opt/cudaenv/cuda/12.4/lib64 -> lib", "opt/cudaenv/cuda/12.4/targets/x86_64-linux/include -> ../../include"} {
				if !slices.Contains(names, want) {
					t.Errorf("the entry's layer lacks %q: %v", want, names)
				}
			}
			continue
		}
		comps = append(comps, comp)
		if m.Layers[i].Annotations[KeyArchiveSHA256] == "" || m.Layers[i].Annotations[KeyEntry] != "cuda/12.4.1" {
			t.Errorf("layer %d's annotations: %v", i, m.Layers[i].Annotations)
		}
		for _, n := range names {
			if !strings.HasPrefix(n, "opt/") {
				t.Errorf("%s: %s is outside the prefix", comp, n)
			}
		}
		if comp == "cuda_nvcc" && !slices.Contains(names, "opt/cudaenv/cuda/12.4/bin/nvcc") {
			t.Errorf("cuda_nvcc's layer lacks bin/nvcc: %v", names)
		}
		if comp != "cuda_nvcc" && slices.Contains(names, "opt/cudaenv/cuda/12.4/bin/nvcc") {
			t.Errorf("%s's layer holds bin/nvcc", comp)
		}
	}
	slices.Sort(comps)
	if want := []string{"cuda_cccl", "cuda_cudart", "cuda_nvcc"}; !slices.Equal(comps, want) {
		t.Errorf("component layers %v, want %v", comps, want)
	}
	if len(res.Images[0].Layers) != len(layers) {
		t.Errorf("the result names %d layers, the image has %d", len(res.Images[0].Layers), len(layers))
	}
}

func TestTheConfigActivatesTheToolkitAsNVIDIAsImagesDo(t *testing.T) {
	w := newWorld(t, nil)
	dir := filepath.Join(t.TempDir(), "oci")
	w.mustMake(minimal12("oci:" + dir))
	cfg, err := readLayout(t, dir, "12.4.1").ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, kv := range cfg.Config.Env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	want := map[string]string{
		"PATH":                       "/opt/cudaenv/cuda/12.4.1/bin:" + defaultPath,
		"LD_LIBRARY_PATH":            "/opt/cudaenv/cuda/12.4.1/lib64",
		"CUDA_HOME":                  "/opt/cudaenv/cuda/12.4.1",
		"CUDA_PATH":                  "/opt/cudaenv/cuda/12.4.1",
		"CUDACXX":                    "/opt/cudaenv/cuda/12.4.1/bin/nvcc",
		"NVIDIA_REQUIRE_CUDA":        "cuda>=12.4",
		"NVIDIA_VISIBLE_DEVICES":     "all",
		"NVIDIA_DRIVER_CAPABILITIES": "compute,utility",
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s=%q, want %q", k, env[k], v)
		}
	}
	if cfg.OS != "linux" || cfg.Architecture != "amd64" {
		t.Errorf("platform %s/%s", cfg.OS, cfg.Architecture)
	}
	if got := cfg.Config.Labels[KeySelection]; got != "12.4.1" {
		t.Errorf("selection label %q", got)
	}
	if got := cfg.Config.Labels[KeyComponents]; !strings.Contains(got, "cuda_nvcc@12.4.131") {
		t.Errorf("components label %q", got)
	}
}

func TestLibrariesOffLeavesTheLoaderPathAlone(t *testing.T) {
	w := newWorld(t, nil)
	req := minimal12("oci:" + filepath.Join(t.TempDir(), "oci"))
	req.Select.Args = append(req.Select.Args, "libraries=off")
	res := w.mustMake(req)
	for _, kv := range res.Images[0].Env {
		if strings.HasPrefix(kv, "LD_LIBRARY_PATH=") {
			t.Errorf("libraries=off, and the image sets %s", kv)
		}
	}
	if !slices.Contains(res.Images[0].Env, "CUDA_HOME=/opt/cudaenv/cuda/12.4.1") {
		t.Errorf("env %v", res.Images[0].Env)
	}
}

func TestADockerArchiveIsWhatDockerLoadReads(t *testing.T) {
	w := newWorld(t, nil)
	file := filepath.Join(t.TempDir(), "cuda.tar")
	req := minimal12("docker-archive:" + file)
	req.Tag = "example.com/team/cuda:12.4"
	res := w.mustMake(req)
	tag, _ := name.NewTag("example.com/team/cuda:12.4")
	img, err := tarball.ImageFromPath(file, &tag)
	if err != nil {
		t.Fatal(err)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range layers {
		d, err := l.Digest()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, d.String())
		// What docker load checks: each layer's tar against the config's diff_ids.
		names := tarNames(t, l)
		if len(names) == 0 {
			t.Errorf("layer %s is empty", d)
		}
	}
	if !slices.Equal(got, digests(res.Images[0].Layers)) {
		t.Errorf("archive layers %v, built %v", got, digests(res.Images[0].Layers))
	}
	// A docker-archive keeps the config and the layers; docker load
	// makes its own manifest.
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.Config.Env, res.Images[0].Env) {
		t.Errorf("archive env %v, built %v", cfg.Config.Env, res.Images[0].Env)
	}
	if _, err := w.make(Request{Select: minimal12().Select, Outputs: []string{"docker-archive:" + file}, Tag: "bad tag!"}); err == nil || !strings.Contains(err.Error(), `image --tag "bad tag!"`) {
		t.Errorf("a bad tag: %v", err)
	}
}

func TestLayerBytesDependOnTheFilesOnly(t *testing.T) {
	// The same tree, with other times, modes beyond x, and a hard link:
	// the same layer.
	nodes := []node{
		{name: "bin", typ: tar.TypeDir, mode: 0o755},
		{name: "bin/tool", typ: tar.TypeReg, mode: 0o755, size: 3 << 20, src: bigFile(t, 3<<20)},
		{name: "lib", typ: tar.TypeDir, mode: 0o755},
		{name: "lib/libx.so", typ: tar.TypeSymlink, mode: 0o777, link: "libx.so.1"},
	}
	var got []string
	for _, procs := range []int{1, 3, 8} {
		prev := runtime.GOMAXPROCS(procs)
		b, err := writeLayer(context.Background(), under("opt/x", nodes), filepath.Join(t.TempDir(), "l.tar.gz"))
		runtime.GOMAXPROCS(prev)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, b.digest.String())
	}
	if got[0] != got[1] || got[1] != got[2] {
		t.Errorf("the layer depends on the cores: %v", got)
	}
}

func TestAnImageOfNVIDIAsWheelsHasALayerPerWheel(t *testing.T) {
	ix := pypitest.New(t)
	var res [2]*Result
	for i := range res {
		w := newWorld(t, nil)
		w.opts.PyPIIndex = ix.URL()
		dir := filepath.Join(t.TempDir(), "oci")
		res[i] = w.mustMake(Request{Select: install.ImageRequest{Args: []string{"13"}, Source: "pypi", Profile: "minimal", Platforms: []string{"linux-x86_64"}}, Outputs: []string{"oci:" + dir}})
		img := readLayout(t, dir, res[i].Tag[strings.LastIndexByte(res[i].Tag, ':')+1:])
		m, _ := img.Manifest()
		layers, _ := img.Layers()
		found := false
		for j, l := range layers {
			names := tarNames(t, l)
			if slices.ContainsFunc(names, func(n string) bool {
				return strings.HasPrefix(n, "opt/cudaenv/cuda/13.") && strings.HasSuffix(n, "/bin/nvcc")
			}) {
				found = true
				if !strings.HasPrefix(m.Layers[j].Annotations[KeyArchive], "nvidia_cuda_nvcc") {
					t.Errorf("nvcc is in the layer of %s", m.Layers[j].Annotations[KeyArchive])
				}
			}
		}
		if !found {
			t.Errorf("no layer holds bin/nvcc")
		}
	}
	if !slices.Equal(digests(res[0].Images[0].Layers), digests(res[1].Images[0].Layers)) || res[0].Digest != res[1].Digest {
		t.Errorf("two builds from the same wheels differ")
	}
}

func TestThePrefixIsAPlainAbsoluteFolder(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", DefaultPrefix},
		{"/opt/cuda stack", "/opt/cuda stack"},
		{"opt/cudaenv", "not an absolute path"},
		{"/", "the root folder"},
		{"/opt/../etc", "not a clean path"},
		{"/opt/cudaenv/", "not a clean path"},
		{"/opt/a:b", "':' would split PATH"},
		{"/opt/a\nb", "a control character"},
	} {
		got, err := checkPrefix(tc.in)
		if err != nil {
			got = err.Error()
		}
		if !strings.Contains(got, tc.want) {
			t.Errorf("%q: %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestTheEnvCarriesNoShellState(t *testing.T) {
	res := newWorld(t, nil).mustMake(minimal12("oci:" + filepath.Join(t.TempDir(), "oci")))
	for _, kv := range res.Images[0].Env {
		if strings.HasPrefix(kv, "__CUDAENV_STATE=") {
			t.Errorf("the image's Env has %s", kv)
		}
	}
}
