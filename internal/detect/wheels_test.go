package detect

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// site lays out a site-packages folder as pip leaves it: files by
// path relative to it.
func site(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), `my "venv" $x`, "lib", "python3.12", "site-packages")
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func nvjitlinkWheel(extra map[string]string) map[string]string {
	files := map[string]string{
		"nvidia/nvjitlink/lib/libnvJitLink.so.12":                     "ELF",
		"nvidia_nvjitlink_cu12-12.4.127.dist-info/METADATA":           "Metadata-Version: 2.1\nName: nvidia-nvjitlink-cu12\nVersion: 12.4.127\n\nName: not a header\n",
		"nvidia_nvjitlink_cu12-12.4.127.dist-info/RECORD":             "nvidia/nvjitlink/lib/libnvJitLink.so.12,sha256=x,3\n",
		"torch-2.5.1.dist-info/METADATA":                              "Name: torch\nVersion: 2.5.1\nRequires-Dist: nvidia-nvjitlink-cu12==12.4.127; platform_system == \"Linux\"\n",
		"nvidia/nvjitlink/include/nvJitLink.h":                        "",
		"nvidia/nvjitlink/lib/__init__.py":                            "",
		"nvidia/cuda_runtime/lib/libcudart.so.12":                     "ELF", // no RECORD lists it
		"nvidia_cuda_runtime_cu12-12.4.127.dist-info/METADATA":        "Name: nvidia-cuda-runtime-cu12\nVersion: 12.4.127\n",
		"numpy-2.0.0.dist-info/METADATA":                              "Name: numpy\nVersion: 2.0.0\nRequires-Dist: nvidia-nvjitlink-cu12\n",
		"nvidia_nvjitlink_cu12-12.4.127.dist-info/INSTALLER":          "pip\n",
		"nvidia/nvjitlink/lib/libnvJitLink.so":                        "a dev link name, not a soname",
		"nvidia/nvjitlink/lib/libnvJitLink.so.12.4.127":               "a full name, not a soname",
		"nvidia/nvjitlink/lib/libnvJitLink_static.a":                  "",
		"nvidia_nvjitlink_cu12-12.4.127.dist-info/entry_points.txt":   "",
		"nvidia_nvjitlink_cu12-12.4.127.dist-info/top_level.txt":      "nvidia\n",
		"nvidia_nvjitlink_cu12-12.4.127.dist-info/WHEEL":              "Wheel-Version: 1.0\n",
		"nvidia_nvjitlink_cu12-12.4.127.dist-info/License.txt":        "",
		"nvidia_nvjitlink_cu12-12.4.127.dist-info/REQUESTED":          "",
		"nvidia_nvjitlink_cu12-12.4.127.dist-info/direct_url.json":    "{}",
		"nvidia_nvjitlink_cu12-12.4.127.dist-info/licenses/README.md": "",
	}
	for k, v := range extra {
		files[k] = v
	}
	return files
}

func TestWheelLibsReadsWhatPipInstalled(t *testing.T) {
	dir := site(t, nvjitlinkWheel(nil))
	got := Host{}.WheelLibs([]string{dir})
	want := []WheelLib{{
		Soname: "libnvJitLink.so.12", Path: filepath.Join(dir, "nvidia", "nvjitlink", "lib", "libnvJitLink.so.12"),
		Wheel: "nvidia-nvjitlink-cu12", Version: "12.4.127", Framework: "torch", FrameworkVersion: "2.5.1",
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	// python3 -m venv links lib64 to lib: one folder, listed once.
	prefix := filepath.Dir(filepath.Dir(filepath.Dir(dir)))
	if err := os.Symlink("lib", filepath.Join(prefix, "lib64")); err != nil {
		t.Fatal(err)
	}
	if got := (Host{}).SitePackages(prefix); !reflect.DeepEqual(got, []string{dir}) {
		t.Errorf("SitePackages = %q, want %q", got, dir)
	}
	if got := (Host{}).WheelLibsWhere([]string{dir}, func(string) bool { return false }); got != nil {
		t.Errorf("WheelLibsWhere with nothing kept = %+v", got)
	}
}

// cuTENSOR's wheels are cutensor-cu12 and -cu13, their files under a
// top-level cutensor/ (the real layout: fetch/pypi/testdata/real_layouts.txt).
func TestWheelLibsReadsCuTENSORsWheelOutsideNvidia(t *testing.T) {
	dir := site(t, nvjitlinkWheel(map[string]string{
		"cutensor/lib/libcutensor.so.2":           "ELF",
		"cutensor_cu13-2.3.1.dist-info/METADATA":  "Name: cutensor-cu13\nVersion: 2.3.1\n",
		"cutensor_cu13-2.3.1.dist-info/RECORD":    "cutensor/lib/libcutensor.so.2,sha256=x,3\n",
		"cutensor/include/cutensor.h":             "",
		"cutensorx/lib/libcutensorx.so.2":         "ELF", // not cuTENSOR's folder
		"cutensorx_cu13-2.3.1.dist-info/METADATA": "Name: cutensorx-cu13\nVersion: 2.3.1\n",
		"cutensorx_cu13-2.3.1.dist-info/RECORD":   "cutensorx/lib/libcutensorx.so.2,,\n",
	}))
	got := Host{}.WheelLibs([]string{dir})
	var sonames []string
	for _, l := range got {
		sonames = append(sonames, l.Soname+" "+l.Wheel+" "+l.Version)
	}
	want := []string{"libcutensor.so.2 cutensor-cu13 2.3.1", "libnvJitLink.so.12 nvidia-nvjitlink-cu12 12.4.127"}
	if !reflect.DeepEqual(sonames, want) {
		t.Errorf("got %q, want %q", sonames, want)
	}
}

func TestWheelLibsLeavesOutWhatIsNotPlain(t *testing.T) {
	meta := "nvidia_nvjitlink_cu12-12.4.127.dist-info/METADATA"
	tests := []struct {
		desc  string
		extra map[string]string
	}{
		{desc: "a name with an escape sequence", extra: map[string]string{meta: "Name: nvidia-\x1b[31mred\nVersion: 12.4.127\n"}},
		{desc: "a version with text after it", extra: map[string]string{meta: "Name: nvidia-nvjitlink-cu12\nVersion: 12.4.127; rm -rf\n"}},
		{desc: "two versions", extra: map[string]string{meta: "Name: nvidia-nvjitlink-cu12\nVersion: 12.4.127\nVersion: 11.0\n"}},
		{desc: "no METADATA", extra: map[string]string{meta: ""}},
		{desc: "a RECORD that lists the library past its size cap", extra: map[string]string{
			"nvidia_nvjitlink_cu12-12.4.127.dist-info/RECORD": strings.Repeat("x,,\n", maxRecordBytes/4+1) + "nvidia/nvjitlink/lib/libnvJitLink.so.12,,\n"}},
		{desc: "a RECORD line longer than a line may be", extra: map[string]string{
			"nvidia_nvjitlink_cu12-12.4.127.dist-info/RECORD": strings.Repeat("x", 100<<10) + "\nnvidia/nvjitlink/lib/libnvJitLink.so.12,,\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			dir := site(t, nvjitlinkWheel(tt.extra))
			if got := (Host{}).WheelLibs([]string{dir}); len(got) != 0 {
				t.Errorf("got %+v, want nothing", got)
			}
		})
	}
}

func TestWheelLibsSkipsLibraryNamesThatAreNotSonames(t *testing.T) {
	dir := site(t, nvjitlinkWheel(map[string]string{
		"nvidia/nvjitlink/lib/libx\x1b[2J.so.12":          "",
		"nvidia/nvjitlink/lib/libnvJitLink.so.12\n":       "",
		"nvidia_nvjitlink_cu12-12.4.127.dist-info/RECORD": "nvidia/nvjitlink/lib/libnvJitLink.so.12,,\nnvidia/nvjitlink/lib/libx\x1b[2J.so.12,,\n",
	}))
	got := Host{}.WheelLibs([]string{dir})
	if len(got) != 1 || got[0].Soname != "libnvJitLink.so.12" {
		t.Errorf("got %+v, want libnvJitLink.so.12 only", got)
	}
}

func TestLibVersionReadsNVIDIAsFileNames(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "lib 64")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	touch := func(name string) {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(name, target string) {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	touch("libnvJitLink.so.12.1.105")
	link("libnvJitLink.so.12", "libnvJitLink.so.12.1.105")
	touch("libcublasLt.so.12")
	touch("libcublasLt.so.12.1.3.1") // a copy beside it, not a link
	link("libcusparse.so.12", "/elsewhere/libcusparse.so.12.9.9")
	touch("libcudart.so.12")
	touch("libcufft.so.11")
	touch("libcufft.so.11.0.2.54")
	touch("libcufft.so.11.2.0.1") // two: the names do not say which
	tests := []struct {
		soname, want string
		ok           bool
	}{
		{"libnvJitLink.so.12", "12.1.105", true},
		{"libcublasLt.so.12", "12.1.3.1", true},
		{"libcusparse.so.12", "", false},
		{"libcudart.so.12", "", false},
		{"libcufft.so.11", "", false},
	}
	for _, tt := range tests {
		if v, ok := (Host{}).LibVersion(dir, tt.soname); v != tt.want || ok != tt.ok {
			t.Errorf("LibVersion(%s) = %q, %v; want %q, %v", tt.soname, v, ok, tt.want, tt.ok)
		}
	}
}

func TestPythonSitesAsksSysPathForTheWheelFolders(t *testing.T) {
	sysPath := "/usr/bin/python3 -c " + sysPathScript
	root := fakeRoot(t, map[string]string{
		"usr/bin/python3*": "",
		"home/u/.local/lib/python3.11/site-packages/": "",
		"usr/lib/python3/dist-packages/":              "",
	})
	f := &fakeRunner{answers: map[string]result{sysPath: {out: "\n/usr/lib/python311.zip\n/home/u/.local/lib/python3.11/site-packages\r\nrelative/site-packages\n/gone/site-packages\n/usr/lib/python3/dist-packages\n/usr/lib/python3/dist-packages\n"}}}
	h := Host{Root: root, Env: map[string]string{"PATH": "/usr/bin"}, Run: f.run}
	got := h.PythonSites(context.Background())
	want := []string{"/home/u/.local/lib/python3.11/site-packages", "/usr/lib/python3/dist-packages"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("PythonSites = %q, want %q", got, want)
	}
	if got := (Host{Root: root, Env: map[string]string{"PATH": "/nowhere"}, Run: f.run}).PythonSites(context.Background()); got != nil {
		t.Errorf("without a Python: %q", got)
	}
}
