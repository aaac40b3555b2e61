package cmakepkg

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cudaenv/cudaenv/internal/rootfs"
)

func TestVersionJSONIsLaidOutAsNVIDIAs(t *testing.T) {
	b, err := VersionJSON("12.4.1", []Component{
		{ID: "cuda_cudart", Name: "CUDA Runtime (cudart)", Version: "12.4.127"},
		{ID: "libcublas", Version: "12.4.5.8"},
		{ID: "cuda", Name: "evil", Version: "99.0.0"},                      // the release's own key
		{ID: "x\"y", Name: "n", Version: "1.0"},                            // not an id
		{ID: "cuda_nvml_dev", Name: "nvml", Version: "12.4.127; rm -rf /"}, // not a version
		{ID: "cuda_nvcc", Name: "bad\nname", Version: "12.4.131"},          // a name that is not one line
	})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]struct{ Name, Version string }
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	want := map[string]struct{ Name, Version string }{
		"cuda":        {"CUDA SDK", "12.4.1"},
		"cuda_cudart": {"CUDA Runtime (cudart)", "12.4.127"},
		"libcublas":   {"libcublas", "12.4.5.8"},
		"cuda_nvcc":   {"cuda_nvcc", "12.4.131"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
	if _, err := VersionJSON("12.4.1\"", nil); err == nil {
		t.Error("a release that is not a version was written")
	}
	if txt, _ := VersionTxt("11.8.0"); string(txt) != "CUDA Version 11.8.0\n" {
		t.Errorf("version.txt = %q", txt)
	}
}

func tree(t *testing.T, files ...string) (string, *rootfs.Tree) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), `a "b" $c`)
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(dir, 0o755)
	tr, err := rootfs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return dir, tr
}

func TestWriteToolkitKeepsAnInstallersVersionFile(t *testing.T) {
	dir, tr := tree(t, "version.json")
	if wrote, err := WriteToolkit(tr, "12.4.1", nil); err != nil || wrote != nil {
		t.Errorf("wrote %v, %v", wrote, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "version.json")); string(b) != "x" {
		t.Error("the tree's version.json was replaced")
	}
	dir, tr = tree(t, "lib/libcudart.so.12")
	wrote, err := WriteToolkit(tr, "12.4.1", []Component{{ID: "cuda_cudart", Version: "12.4.127"}})
	if err != nil || !reflect.DeepEqual(wrote, []string{"version.json", "version.txt"}) {
		t.Fatalf("wrote %v, %v", wrote, err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "version.json")); err != nil || fi.Mode().Perm() != 0o444 {
		t.Errorf("version.json: %v, %v", fi, err)
	}
}

func TestWritePackageImportsTheLibrariesTheTreeHolds(t *testing.T) {
	dir, tr := tree(t, "include/cudss.h", "lib/libcudss.so.0", "lib/libcudss_mtlayer_gomp.so.0", "lib/libcudss.so.0.7.1")
	wrote, err := WritePackage(tr, "cudss", "0.7.1.4")
	if err != nil || !reflect.DeepEqual(wrote, []string{"lib/cmake/cudss/cudss-config.cmake", "lib/cmake/cudss/cudss-config-version.cmake"}) {
		t.Fatalf("wrote %v, %v", wrote, err)
	}
	cfg, _ := os.ReadFile(filepath.Join(dir, "lib/cmake/cudss/cudss-config.cmake"))
	for _, want := range []string{
		`add_library(cudss SHARED IMPORTED)`,
		`IMPORTED_LOCATION "${_cudaenv_prefix}/lib/libcudss.so.0"`,
		`set(cudss_INCLUDE_DIR "${_cudaenv_prefix}/include")`,
		`set(cudss_VERSION "0.7.1.4")`,
	} {
		if !strings.Contains(string(cfg), want) {
			t.Errorf("the config lacks %s:\n%s", want, cfg)
		}
	}
	// No path of the tree itself: the entry is staged, then renamed.
	if strings.Contains(string(cfg), dir) || strings.Contains(string(cfg), "cudss_static") {
		t.Errorf("config:\n%s", cfg)
	}
	// Again, or with NVIDIA's own: left as it is.
	if wrote, err := WritePackage(tr, "cudss", "0.7.1.4"); err != nil || wrote != nil {
		t.Errorf("again: %v, %v", wrote, err)
	}
	// Kinds without a package, and trees without its library, get none.
	_, tr2 := tree(t, "include/cutensor.h", "lib/libcutensor.so.2")
	if wrote, err := WritePackage(tr2, "cutensor", "2.8.1"); err != nil || wrote != nil {
		t.Errorf("cutensor: %v, %v", wrote, err)
	}
	_, tr3 := tree(t, "include/nvshmem.h")
	if wrote, err := WritePackage(tr3, "nvshmem", "3.8.0"); err != nil || wrote != nil {
		t.Errorf("nvshmem without its libraries: %v, %v", wrote, err)
	}
	if _, err := WritePackage(tr2, "cudss", `0.7"`); err == nil {
		t.Error("a version that is not one reached a script")
	}
}

func TestWritePackageNeverWritesThroughALink(t *testing.T) {
	outside := t.TempDir()
	dir, tr := tree(t, "lib/libcudss.so.0")
	os.MkdirAll(filepath.Join(dir, "lib"), 0o755)
	if err := os.Symlink(outside, filepath.Join(dir, "lib", "cmake")); err != nil {
		t.Fatal(err)
	}
	if _, err := WritePackage(tr, "cudss", "0.7.1.4"); err == nil {
		t.Error("wrote through lib/cmake → outside")
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("outside holds %d entries", len(ents))
	}
}

// TestCMakeFindsTheWrittenPackage runs CMake itself (when installed) on a
// project that asks for find_package(cudss CONFIG REQUIRED) and for
// NVSHMEM's targets, with the tree on CMAKE_PREFIX_PATH as activation puts
// it.
func TestCMakeFindsTheWrittenPackage(t *testing.T) {
	cmake, err := exec.LookPath("cmake")
	if err != nil {
		t.Skip("no cmake")
	}
	dir, tr := tree(t, "include/cudss.h", "lib/libcudss.so.0", "include/nvshmem.h", "lib/libnvshmem_host.so.3", "lib/libnvshmem_device.a")
	if _, err := WritePackage(tr, "cudss", "0.7.1.4"); err != nil {
		t.Fatal(err)
	}
	if _, err := WritePackage(tr, "nvshmem", "3.8.0"); err != nil {
		t.Fatal(err)
	}
	proj := t.TempDir()
	os.WriteFile(filepath.Join(proj, "CMakeLists.txt"), []byte(`cmake_minimum_required(VERSION 3.10)
project(p NONE)
find_package(cudss 0.7 CONFIG REQUIRED)
find_package(NVSHMEM 3 CONFIG REQUIRED)
get_target_property(loc cudss IMPORTED_LOCATION)
get_target_property(host nvshmem::nvshmem_host IMPORTED_LOCATION)
get_target_property(dev nvshmem::nvshmem_device IMPORTED_LOCATION)
message(STATUS "cudss=${cudss_VERSION}|${loc}|${cudss_INCLUDE_DIR}")
message(STATUS "nvshmem=${host}|${dev}")
`), 0o644)
	cmd := exec.Command(cmake, "-S", proj, "-B", filepath.Join(proj, "build"))
	cmd.Env = append(os.Environ(), "CMAKE_PREFIX_PATH="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("cmake: %v\n%s", err, out)
	}
	for _, want := range []string{
		"cudss=0.7.1.4|" + dir + "/lib/libcudss.so.0|" + dir + "/include",
		"nvshmem=" + dir + "/lib/libnvshmem_host.so.3|" + dir + "/lib/libnvshmem_device.a",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("cmake says:\n%s\nwant %s", out, want)
		}
	}
	// A request newer than the package is refused.
	os.WriteFile(filepath.Join(proj, "CMakeLists.txt"), []byte("cmake_minimum_required(VERSION 3.10)\nproject(p NONE)\nfind_package(cudss 0.8 CONFIG REQUIRED)\n"), 0o644)
	cmd = exec.Command(cmake, "-S", proj, "-B", filepath.Join(proj, "build2"))
	cmd.Env = append(os.Environ(), "CMAKE_PREFIX_PATH="+dir)
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Errorf("cudss 0.8 found in 0.7.1.4:\n%s", out)
	}
}
