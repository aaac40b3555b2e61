package install

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cudaenv/cudaenv/fetch/pypi/pypitest"
	"github.com/cudaenv/cudaenv/internal/bundle"
	"github.com/cudaenv/cudaenv/internal/dirs"
	"github.com/cudaenv/cudaenv/store"
)

func export(t *testing.T, in *Installer, req ExportRequest) ([]byte, *Exported) {
	t.Helper()
	var buf bytes.Buffer
	ex, err := in.Export(context.Background(), req, &buf)
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), ex
}

// airGapped is an installer for another machine: its own store and
// cache, and a mirror URL nothing answers.
func airGapped(t *testing.T, w *world) (*Installer, *store.Store) {
	root := filepath.Join(t.TempDir(), "air gapped")
	st := store.New(dirs.Dirs{Root: filepath.Join(root, "root"), Cache: filepath.Join(root, "cache")})
	return w.installer(t, func(o *Options) {
		o.Store, o.CacheDir, o.Mirror = st, filepath.Join(root, "cache"), "http://127.0.0.1:1"
	}), st
}

func TestABundleInstallsOnAMachineWithNoNetwork(t *testing.T) {
	w := newWorld(t)
	data, ex := export(t, w.installer(t), ExportRequest{Args: []string{"12.4", "cudnn@9.5"}, Profile: "minimal", Platforms: []string{"linux-x86_64", "linux-sbsa"}})
	var got []string
	for _, e := range ex.Entries {
		got = append(got, e.Kind+" "+e.Name+" "+e.Platform)
	}
	want := []string{"cuda 12.4.1 linux-x86_64", "cudnn 9.5.1.17-cuda12 linux-x86_64", "cuda 12.4.1 linux-sbsa", "cudnn 9.5.1.17-cuda12 linux-sbsa"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("entries = %q, want %q", got, want)
	}
	if list, _ := w.store.List(store.CUDA); len(list) != 0 {
		t.Errorf("export installed %v", list)
	}
	if w.mirror.ArchiveRequests("cuda_nvcc") != 2 {
		t.Errorf("nvcc fetched %d times, want once per platform", w.mirror.ArchiveRequests("cuda_nvcc"))
	}
	// The same request again comes from the cache and makes the same bytes.
	w.mirror.ResetCounts()
	again, _ := export(t, w.installer(t), ExportRequest{Args: []string{"12.4", "cudnn@9.5"}, Profile: "minimal", Platforms: []string{"linux-x86_64", "linux-sbsa"}})
	if !bytes.Equal(again, data) || w.mirror.ArchiveRequests("cuda_nvcc") != 0 {
		t.Errorf("second export: same bytes %v, nvcc fetched %d times", bytes.Equal(again, data), w.mirror.ArchiveRequests("cuda_nvcc"))
	}

	in, st := airGapped(t, w)
	w.mirror.Close()
	res, err := in.Import(context.Background(), bytes.NewReader(data), ImportRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].Label != "CUDA 12.4.1" || res[1].Label != "cuDNN 9.5.1.17-cuda12" || res[0].Outcome != Installed {
		t.Fatalf("results = %+v", res)
	}
	e, _ := st.Get(store.CUDA, "12.4.1")
	if e.Receipt.Platform != "linux-x86_64" || e.Receipt.Source != "nvidia" || len(e.Receipt.Components) != 3 || len(e.Receipt.ManifestSHA256) != 64 {
		t.Errorf("receipt = %+v", e.Receipt)
	}
	if _, err := os.Stat(filepath.Join(e.Dir, "bin", "nvcc")); err != nil {
		t.Error(err)
	}
	if des, _ := os.ReadDir(filepath.Dir(st.Dirs.Cache + "/x")); len(des) != 0 {
		t.Errorf("left in the cache: %v", des)
	}
	// Again: already installed; with another platform, that platform's.
	res, err = in.Import(context.Background(), bytes.NewReader(data), ImportRequest{})
	if err != nil || res[0].Outcome != AlreadyInstalled {
		t.Errorf("again: %+v, %v", res, err)
	}
	res, err = in.Import(context.Background(), bytes.NewReader(data), ImportRequest{Platform: "linux-sbsa", Force: true})
	if err != nil || res[0].Entry.Receipt.Platform != "linux-sbsa" {
		t.Errorf("sbsa: %+v, %v", res, err)
	}
	_, err = in.Import(context.Background(), bytes.NewReader(data), ImportRequest{Platform: "windows-x86_64"})
	if err == nil || !strings.Contains(err.Error(), "has nothing for windows-x86_64 (it has: linux-x86_64, linux-sbsa)") {
		t.Errorf("windows: %v", err)
	}
}

func TestABundleOfWheelsInstallsOffline(t *testing.T) {
	w := newWorld(t)
	ix := pypitest.New(t)
	in := w.installer(t, func(o *Options) { o.PyPIIndex = ix.URL() })
	data, _ := export(t, in, ExportRequest{Args: []string{"12.4", "cudnn@9.5"}, Source: "pypi", Components: []string{"cuda_cudart", "libcublas"}})
	off, st := airGapped(t, w)
	res, err := off.Import(context.Background(), bytes.NewReader(data), ImportRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].Components != 2 {
		t.Fatalf("results = %+v", res)
	}
	if _, err := os.Stat(filepath.Join(res[1].Entry.Dir, "lib", "libcudnn.so.9")); err != nil {
		t.Errorf("cuDNN from wheels: %v", err)
	}
	if e, _ := st.Get(store.CUDA, "12.4.1"); e.Receipt.Source != "pypi" {
		t.Errorf("receipt = %+v", e.Receipt)
	}
}

// rewrite unpacks a bundle, lets edit change its index and files, and
// packs it again with an index that matches the files' new sizes and
// sha256s: a tampered bundle that is consistent with itself, so only the
// checks against the manifests can catch it.
func rewrite(t *testing.T, data []byte, edit func(ix *bundle.Index, files map[string][]byte)) []byte {
	t.Helper()
	tr := tar.NewReader(bytes.NewReader(data))
	var ix bundle.Index
	files := map[string][]byte{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		if h.Name == bundle.IndexName {
			json.Unmarshal(b, &ix)
			continue
		}
		files[h.Name] = b
	}
	edit(&ix, files)
	var kept []bundle.File
	for _, f := range ix.Files {
		if b, ok := files[f.Name]; ok {
			kept = append(kept, bundle.File{Name: f.Name, Size: int64(len(b)), SHA256: sha256Hex(b)})
		}
	}
	ix.Files = kept
	var out bytes.Buffer
	if err := bundle.Write(&out, ix, func(f bundle.File) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(files[f.Name])), nil }); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func TestATamperedBundleInstallsNothing(t *testing.T) {
	w := newWorld(t)
	data, _ := export(t, w.installer(t), ExportRequest{Args: []string{"12.4", "cudnn@9.5"}, Profile: "minimal"})
	manifest := "cuda/redist/redistrib_12.4.1.json"
	var nvcc string
	rewrite(t, data, func(ix *bundle.Index, files map[string][]byte) {
		for n := range files {
			if strings.Contains(n, "/cuda_nvcc/") {
				nvcc = n
			}
		}
	})
	tests := []struct {
		desc string
		edit func(ix *bundle.Index, files map[string][]byte)
		want string
	}{
		{"an archive changed, with the index made to match", func(ix *bundle.Index, files map[string][]byte) {
			files[nvcc] = append(files[nvcc], 0)
		}, "is not what its manifest lists"},
		{"the manifest swapped, with the index made to match", func(ix *bundle.Index, files map[string][]byte) {
			files[manifest] = bytes.Replace(files[manifest], []byte(`"cuda_nvcc"`), []byte(`"cuda_nvcX"`), 1)
		}, "cuda_nvcc"},
		{"an archive's sha256 rewritten in the manifest", func(ix *bundle.Index, files map[string][]byte) {
			var m map[string]any
			json.Unmarshal(files[manifest], &m)
			m["cuda_nvcc"].(map[string]any)["linux-x86_64"].(map[string]any)["sha256"] = strings.Repeat("0", 64)
			files[manifest], _ = json.Marshal(m)
		}, "is not what its manifest lists"},
		{"a file no version uses", func(ix *bundle.Index, files map[string][]byte) {
			files["cuda/redist/extra.sh"] = []byte("#!/bin/sh\n")
			ix.Files = append(ix.Files, bundle.File{Name: "cuda/redist/extra.sh"})
		}, "it holds cuda/redist/extra.sh, which none of its versions uses"},
		{"a version renamed", func(ix *bundle.Index, files map[string][]byte) {
			ix.Entries[0].Name = "12.4.2"
		}, "its manifest makes it 12.4.1, not 12.4.2"},
		{"the manifest moved", func(ix *bundle.Index, files map[string][]byte) {
			files["cuda/redist/redistrib_12.4.2.json"] = files[manifest]
			delete(files, manifest)
			for i := range ix.Files { // in its place: ahead of the archives it lists
				if ix.Files[i].Name == manifest {
					ix.Files[i].Name = "cuda/redist/redistrib_12.4.2.json"
				}
			}
			ix.Entries[0].Release = "12.4.2"
			ix.Entries[0].Manifest = "cuda/redist/redistrib_12.4.2.json"
		}, "its manifest is release 12.4.1, not 12.4.2"},
		{"the cuDNN archive left out", func(ix *bundle.Index, files map[string][]byte) {
			for n := range files {
				if strings.HasPrefix(n, "cudnn/redist/cudnn/") {
					delete(files, n)
				}
			}
		}, "which the bundle lacks"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			in, st := airGapped(t, w)
			_, err := in.Import(context.Background(), bytes.NewReader(rewrite(t, data, tt.edit)), ImportRequest{})
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "nothing was installed") {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			for _, k := range []store.Kind{store.CUDA, store.Cudnn} {
				if list, _ := st.List(k); len(list) != 0 {
					t.Errorf("installed %+v", list)
				}
			}
			if des, _ := os.ReadDir(st.Dirs.Cache); len(des) != 0 {
				t.Errorf("left in the cache: %v", des)
			}
		})
	}
}

func TestExportRefusesWhatItCannotBundle(t *testing.T) {
	w := newWorld(t)
	in := w.installer(t)
	for _, tt := range []struct {
		req  ExportRequest
		want string
	}{
		{ExportRequest{}, "bundle export needs versions"},
		{ExportRequest{Args: []string{"cudnn@9.5"}}, "cuDNN is built per CUDA major"},
		{ExportRequest{Args: []string{"12.4"}, Platforms: []string{"../x"}}, "is not an NVIDIA platform key"},
		{ExportRequest{Args: []string{"12.4"}, Profile: "huge"}, "unknown profile"},
	} {
		if _, err := in.Export(context.Background(), tt.req, io.Discard); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: err = %v, want %q", tt.req, err, tt.want)
		}
	}
}

// A bundle's wheel list, like a lock, comes from whoever made the bundle:
// it cannot make another project's wheel a CUDA component, and a wheel is
// unpacked only when its METADATA is the project and version planned.
func TestABundleOfWheelsIsHeldToTheComponentsProjects(t *testing.T) {
	w := newWorld(t)
	ix := pypitest.New(t)
	in := w.installer(t, func(o *Options) { o.PyPIIndex = ix.URL() })
	data, _ := export(t, in, ExportRequest{Args: []string{"12.4"}, Source: "pypi", Components: []string{"cuda_cudart", "libcublas"}})
	// editWheels rewrites the wheel list and the wheels it names.
	editWheels := func(edit func(wl *bundle.Wheels, files map[string][]byte)) func(*bundle.Index, map[string][]byte) {
		return func(ix *bundle.Index, files map[string][]byte) {
			list := ix.Entries[0].Manifest
			var wl bundle.Wheels
			if err := json.Unmarshal(files[list], &wl); err != nil {
				t.Fatal(err)
			}
			edit(&wl, files)
			for n := range files { // a renamed wheel goes at the end, after its list
				if _, ok := ix.Lookup(n); !ok {
					ix.Files = append(ix.Files, bundle.File{Name: n})
				}
			}
			for i, wh := range wl.Wheels {
				b := files["pypi/"+wh.File]
				wl.Wheels[i].SHA256, wl.Wheels[i].Size = sha256Hex(b), int64(len(b))
			}
			files[list], _ = json.Marshal(wl)
		}
	}
	find := func(wl *bundle.Wheels, comp string) *bundle.Wheel {
		for i := range wl.Wheels {
			if wl.Wheels[i].Component == comp {
				return &wl.Wheels[i]
			}
		}
		t.Fatalf("no %s wheel in %+v", comp, wl)
		return nil
	}
	tests := []struct {
		desc string
		edit func(wl *bundle.Wheels, files map[string][]byte)
		want string
	}{
		{"a component's wheel renamed to another project", func(wl *bundle.Wheels, files map[string][]byte) {
			wh := find(wl, "cuda_cudart")
			evil := "totally_legit_pkg-" + wh.Version + "-py3-none-manylinux2014_x86_64.whl"
			files["pypi/"+evil] = files["pypi/"+wh.File]
			delete(files, "pypi/"+wh.File)
			wh.File, wh.Project = evil, "totally-legit-pkg"
		}, "is not a wheel of nvidia-cuda-runtime-cu12"},
		{"another component's wheel under the right name", func(wl *bundle.Wheels, files map[string][]byte) {
			rt, blas := find(wl, "cuda_cudart"), find(wl, "libcublas")
			files["pypi/"+rt.File] = files["pypi/"+blas.File]
		}, "its METADATA says it is"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			hostile := rewrite(t, data, editWheels(tt.edit))
			off, st := airGapped(t, w)
			_, err := off.Import(context.Background(), bytes.NewReader(hostile), ImportRequest{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if list, _ := st.List(store.CUDA); len(list) != 0 {
				t.Errorf("installed %+v", list)
			}
		})
	}
}
