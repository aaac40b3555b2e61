package image

import (
	"archive/tar"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/cudaenv/cudaenv/fetch/pypi/pypitest"
	"github.com/cudaenv/cudaenv/internal/filelist"
	"github.com/cudaenv/cudaenv/internal/install"
)

// imageFile is one entry of an image's file system.
type imageFile struct {
	typ  byte
	link string
	body string
}

// imageFiles is an image's file system, its layers applied in order
// (slash paths without the leading slash); layer is each file's layer.
func imageFiles(t *testing.T, img v1.Image) (files map[string]imageFile, layer map[string]int) {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	files, layer = map[string]imageFile{}, map[string]int{}
	for i, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			name := strings.TrimSuffix(h.Name, "/")
			f := imageFile{typ: h.Typeflag, link: h.Linkname}
			if h.Typeflag == tar.TypeReg {
				b, err := io.ReadAll(tr)
				if err != nil {
					t.Fatal(err)
				}
				f.body = string(b)
			}
			files[name], layer[name] = f, i
		}
		rc.Close()
	}
	return files, layer
}

// treeFiles are the files and links of an installed entry, by slash path
// below it, without the store's receipt and file list.
func treeFiles(t *testing.T, dir string) map[string]imageFile {
	t.Helper()
	out := map[string]imageFile{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if rel == "receipt.json" || rel == filelist.Name {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			out[rel] = imageFile{typ: tar.TypeSymlink, link: target}
			return err
		}
		b, err := os.ReadFile(p)
		out[rel] = imageFile{typ: tar.TypeReg, body: string(b)}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// events records what an install or an image says.
type events struct {
	mu   sync.Mutex
	list []install.Event
}

func (r *events) Event(e install.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = append(r.list, e)
}

func (r *events) Progress(string) install.Progress { return nil }

func (r *events) needs() []install.Needs {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []install.Needs
	for _, e := range r.list {
		if n, ok := e.(install.Needs); ok {
			out = append(out, n)
		}
	}
	return out
}

// A toolkit from NVIDIA's wheels and cuDSS, installed and imaged: the
// image holds every file the installed trees hold, with the same bytes,
// the link stubs, version files and CMake package install writes
// included, and those in a layer of the entry's own.
func TestAnImageHoldsTheFilesInstallWritesWithTheSameBytes(t *testing.T) {
	ix := pypitest.New(t, pypitest.Releases("12.4.1"), pypitest.ExtraLibrary("cudss", "0.7.1.4", 12))
	w := newWorld(t, nil)
	w.opts.PyPIIndex = ix.URL()
	args := []string{"12.4", "cudss@0.7"}
	res, err := w.installer().Install(context.Background(), install.Request{Args: args, Source: "pypi", SourceTyped: true})
	if err != nil {
		t.Fatal(err)
	}
	installed := map[string]string{} // store entry dir -> its files' folder in the image
	var root string
	for _, r := range res {
		switch r.Entry.Name {
		case "12.4.1":
			installed[r.Entry.Dir] = "cuda/12.4"
			root = filepath.Dir(filepath.Dir(r.Entry.Dir))
		case "0.7.1.4-cuda12":
			installed[r.Entry.Dir] = "cudss/0.7.1.4-cuda12"
		}
	}
	if len(installed) != 2 {
		t.Fatalf("installed %+v", res)
	}
	for _, want := range []string{"12.4.1/lib/stubs/libcuda.so", "12.4.1/lib/stubs/libnvidia-ml.so", "12.4.1/version.json"} {
		if _, err := os.Stat(filepath.Join(root, "cuda", want)); err != nil {
			t.Fatalf("the install lacks what the image is compared with: %v", err)
		}
	}

	dir := filepath.Join(t.TempDir(), "oci")
	made := w.mustMake(Request{Select: install.ImageRequest{Args: args, Source: "pypi", SourceTyped: true, Platforms: []string{"linux-x86_64"}}, Prefix: root, Outputs: []string{"oci:" + dir}})
	img := readLayout(t, dir, "12.4.1")
	files, layer := imageFiles(t, img)
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	top := strings.TrimPrefix(root, "/")
	for entryDir, in := range installed {
		want := treeFiles(t, entryDir)
		for rel, f := range want {
			p := path.Join(top, in, rel)
			got, ok := files[p]
			switch {
			case !ok:
				t.Errorf("the image lacks %s/%s", in, rel)
			case got.typ != f.typ || got.link != f.link:
				t.Errorf("%s/%s is a %c -> %q in the image, a %c -> %q installed", in, rel, got.typ, got.link, f.typ, f.link)
			case got.body != f.body:
				t.Errorf("%s/%s differs from the installed file (%d bytes, %d installed)", in, rel, len(got.body), len(f.body))
			}
		}
		for p, f := range files {
			rel, ok := strings.CutPrefix(p, path.Join(top, in)+"/")
			if ok && f.typ != tar.TypeDir && want[rel].typ == 0 {
				t.Errorf("the image has %s/%s, which the installed tree has not", in, rel)
			}
		}
	}
	// What install generates is in the entry's own layer, not in a
	// component's (whose digest is the same in every image).
	for _, p := range []string{"cuda/12.4/lib/stubs/libcuda.so", "cuda/12.4/lib/stubs/libnvidia-ml.so", "cuda/12.4/version.json", "cuda/12.4/version.txt", "cudss/0.7.1.4-cuda12/lib/cmake/cudss/cudss-config.cmake"} {
		i, ok := layer[path.Join(top, p)]
		if !ok {
			continue // said above
		}
		ann := m.Layers[i].Annotations
		if ann[KeyOwn] != OwnGenerated || ann[KeyComponent] != "" {
			t.Errorf("%s is in a layer annotated %v", p, ann)
		}
	}
	env := map[string]string{}
	for _, kv := range made.Images[0].Env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	// As cudaenv env sets them for the installed entries: the stubs on the
	// link path, cuDSS's CMake package on the prefix path.
	if want := root + "/cuda/12.4.1/lib/stubs"; !slices.Contains(strings.Split(env["LIBRARY_PATH"], ":"), want) {
		t.Errorf("LIBRARY_PATH=%q lacks %s", env["LIBRARY_PATH"], want)
	}
	if want := root + "/cudss/0.7.1.4-cuda12"; env["CMAKE_PREFIX_PATH"] != want {
		t.Errorf("CMAKE_PREFIX_PATH=%q, want %q", env["CMAKE_PREFIX_PATH"], want)
	}
}

// cuSPARSELt's header includes cusparse.h: its image with a minimal CUDA
// holds libcusparse, as install adds it to the toolkit; with no CUDA of
// its major, a note says which image would.
func TestAnImageOfALibraryHoldsTheToolkitPiecesItNeeds(t *testing.T) {
	ix := pypitest.New(t, pypitest.Releases("13.0.3", "12.4.1"), pypitest.ExtraLibrary("cusparselt", "0.8.1", 13), pypitest.ExtraLibrary("cudss", "0.7.1.4", 12))
	w := newWorld(t, nil)
	w.opts.PyPIIndex = ix.URL()
	rec := &events{}
	w.opts.Reporter = rec
	res := w.mustMake(Request{Select: install.ImageRequest{Args: []string{"13.0", "cusparselt@0.8"}, Source: "pypi", SourceTyped: true, Profile: "minimal", Platforms: []string{"linux-x86_64"}}, Outputs: []string{"oci:" + filepath.Join(t.TempDir(), "oci")}})
	var comps []string
	for _, l := range res.Images[0].Layers {
		if l.Entry == "CUDA 13.0.3" && l.Component != "" {
			comps = append(comps, l.Component)
		}
	}
	if !slices.Contains(comps, "libcusparse") || !slices.Contains(comps, "cuda_nvcc") {
		t.Errorf("CUDA 13.0.3's layers: %v", comps)
	}
	if n := rec.needs(); len(n) != 1 || n[0].CUDA != "13.0.3" || !slices.Equal(n[0].Components, []string{"libcusparse"}) || n[0].Why != "cusparseLt.h includes cusparse.h" {
		t.Errorf("needs %+v", n)
	}

	rec.list = nil
	res = w.mustMake(Request{Select: install.ImageRequest{Args: []string{"cudss@0.7"}, CUDAMajor: 12, Source: "pypi", SourceTyped: true, Platforms: []string{"linux-x86_64"}}, Outputs: []string{"oci:" + filepath.Join(t.TempDir(), "oci")}})
	if n := rec.needs(); len(n) != 1 || n[0].CUDA != "" || n[0].Command != "cudaenv image 12 cudss@0.7.1.4 --components cuda_cudart,libcublas" {
		t.Errorf("needs %+v", n)
	}
	for _, l := range res.Images[0].Layers {
		if strings.HasPrefix(l.Entry, "CUDA") {
			t.Errorf("an image of cuDSS alone holds %s %s", l.Entry, l.Component)
		}
	}
}
