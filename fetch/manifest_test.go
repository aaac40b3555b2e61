package fetch

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// manifestsDir holds the repository's copies of the NVIDIA manifests the
// tests use (see its SOURCES.md).
const manifestsDir = "../testdata/nvidia/manifests"

// realManifests returns product/file → bytes of every manifest in dir.
func realManifests(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*", "redistrib_*.json"))
	if len(files) == 0 {
		t.Fatal("no manifests in " + dir)
	}
	out := map[string][]byte{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(filepath.Dir(f))+"/"+filepath.Base(f)] = data
	}
	return out
}

func readRealManifest(t *testing.T, product, version string) *Manifest {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(manifestsDir, product, "redistrib_"+version+".json"))
	if err != nil {
		t.Fatalf("%v (copy it into %s, with its source in SOURCES.md)", err, manifestsDir)
	}
	m, err := Decode(data, version)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var fileVersionRE = regexp.MustCompile(`redistrib_(.*)\.json$`)

// Every copy in the repository decodes and is NVIDIA's exact file: its
// sha256 is the one pinned for its URL.
func TestDecodeReadsEveryRealManifest(t *testing.T) {
	decodeEvery(t, manifestsDir, true)
}

// More of NVIDIA's manifests, when a maintainer points
// CUDAENV_NVIDIA_MANIFESTS at a folder of them (the research collection,
// say); the test reads nothing outside the repository otherwise.
func TestDecodeReadsEveryManifestGiven(t *testing.T) {
	dir := os.Getenv("CUDAENV_NVIDIA_MANIFESTS")
	if dir == "" {
		t.Skip("set CUDAENV_NVIDIA_MANIFESTS to a folder of NVIDIA manifests to decode them too")
	}
	decodeEvery(t, dir, false)
}

func decodeEvery(t *testing.T, dir string, allPinned bool) {
	known := map[string]string{} // "cuda/12.4.1" → sha256
	if f, err := os.Open(filepath.Join(dir, "known_manifest_sha256.tsv")); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			cols := strings.Split(sc.Text(), "\t")
			if len(cols) >= 3 && cols[0] != "product" {
				known[cols[0]+"/"+cols[1]] = cols[2]
			}
		}
		f.Close()
	}
	checked := 0
	for name, data := range realManifests(t, dir) {
		t.Run(name, func(t *testing.T) {
			product := filepath.Dir(name)
			fileVersion := fileVersionRE.FindStringSubmatch(name)[1]
			m, err := Decode(data, fileVersion)
			if err != nil {
				t.Fatal(err)
			}
			if m.Version != fileVersion {
				t.Errorf("version %q, want %q from the file name", m.Version, fileVersion)
			}
			if want, ok := known[product+"/"+fileVersion]; ok {
				checked++
				if m.SHA256 != want {
					t.Errorf("sha256 %s, want %s", m.SHA256, want)
				}
			} else if allPinned {
				t.Errorf("no pin in %s/known_manifest_sha256.tsv", dir)
			}
			if len(m.Components) < 1 {
				t.Fatal("no components")
			}
			arts := 0
			for id, c := range m.Components {
				if c.ID != id || c.Version == "" || c.Name == "" {
					t.Errorf("component %s: id %q version %q name %q", id, c.ID, c.Version, c.Name)
				}
				for plat, p := range c.Platforms {
					all := []*Artifact{}
					if p.Artifact != nil {
						all = append(all, p.Artifact)
					}
					for _, a := range p.Variants {
						all = append(all, a)
					}
					for _, a := range all {
						arts++
						if err := a.check(); err != nil {
							t.Errorf("%s %s: %v", id, plat, err)
						}
						if a.Component != id || a.Platform != plat || a.Version != c.Version {
							t.Errorf("%s %s: artifact fields %+v", id, plat, a)
						}
					}
				}
			}
			if arts == 0 {
				t.Error("no artifacts")
			}
		})
	}
	if len(known) > 0 && checked == 0 {
		t.Error("no manifest could be checked against known_manifest_sha256.tsv")
	}
}

func TestDecodeHandlesNVIDIAQuirks(t *testing.T) {
	t.Run("11.8.0 has no release_label, so the file name gives the version", func(t *testing.T) {
		m := readRealManifest(t, "cuda", "11.8.0")
		if m.Version != "11.8.0" || m.Product != "" || m.Date == "" {
			t.Errorf("got version %q product %q date %q", m.Version, m.Product, m.Date)
		}
		if m.Components["cuda_nvcc"].LicensePath != "" {
			t.Error("11.8.0 has no license_path, got one")
		}
	})
	t.Run("sizes are strings and parse to bytes", func(t *testing.T) {
		m := readRealManifest(t, "cuda", "12.4.1")
		a := m.Components["cuda_nvcc"].Platforms["linux-x86_64"].Artifact
		if a == nil || a.Size <= 0 || a.RelativePath != "cuda_nvcc/linux-x86_64/cuda_nvcc-linux-x86_64-12.4.131-archive.tar.xz" {
			t.Fatalf("got %+v", a)
		}
	})
	t.Run("cuDNN variants nest under the platform", func(t *testing.T) {
		m := readRealManifest(t, "cudnn", "9.5.1")
		c := m.Components["cudnn"]
		if strings.Join(c.Variants, ",") != "11,12" {
			t.Errorf("cuda_variant %v", c.Variants)
		}
		p := c.Platforms["linux-x86_64"]
		if p.Artifact != nil || p.Variants["cuda12"] == nil || p.Variants["cuda11"] == nil {
			t.Fatalf("got %+v", p)
		}
		if p.Variants["cuda12"].Variant != "cuda12" || !strings.Contains(p.Variants["cuda12"].RelativePath, "_cuda12-archive") {
			t.Errorf("got %+v", p.Variants["cuda12"])
		}
	})
	t.Run("a platform object with variants and flat fields keeps both", func(t *testing.T) {
		raw := `{"release_label":"9.27.0","cudnn":{"name":"cuDNN","version":"9.27.0.41","cuda_variant":["13"],
		"windows-arm64":{"cuda13":{"relative_path":"cudnn/windows-arm64/cudnn-windows-arm64-9.27.0.41_cuda13-archive.zip","sha256":"` + strings.Repeat("a", 64) + `","md5":"x","size":"10"},
		"relative_path":"cudnn/windows-arm64/cudnn-windows-arm64-9.27.0.41_cuda13.4-archive.zip","sha256":"` + strings.Repeat("b", 64) + `","md5":"y","size":11}}}`
		m, err := Decode([]byte(raw), "9.27.0")
		if err != nil {
			t.Fatal(err)
		}
		p := m.Components["cudnn"].Platforms["windows-arm64"]
		if p.Artifact == nil || p.Artifact.Size != 11 || p.Variants["cuda13"] == nil || p.Variants["cuda13"].Size != 10 {
			t.Fatalf("got %+v", p)
		}
	})
	t.Run("unknown keys and future platforms are tolerated", func(t *testing.T) {
		raw := `{"release_label":"99.0.0","release_notes":{"x":1},"schema":2,"new_thing":[1,2],
		"cuda_nvcc":{"name":"n","version":"99.0.1","future":{"deep":{"deeper":true}},"linux-riscv64":{"relative_path":"cuda_nvcc/linux-riscv64/x.tar.xz","sha256":"` + strings.Repeat("c", 64) + `","size":"5","sig":"abc"}}}`
		m, err := Decode([]byte(raw), "")
		if err != nil {
			t.Fatal(err)
		}
		if m.Version != "99.0.0" || m.Components["cuda_nvcc"].Platforms["linux-riscv64"] == nil {
			t.Fatalf("got %+v", m)
		}
		if _, ok := m.Components["cuda_nvcc"].Platforms["future"]; ok {
			t.Error("an object without relative_path became a platform")
		}
	})
}

func TestDecodeNeverPanicsOnOddInput(t *testing.T) {
	cases := []struct {
		name, raw string
		wantErr   bool
	}{
		{"empty input is an error", ``, true},
		{"null is an error", `null`, true},
		{"an array is an error", `[1,2]`, true},
		{"a number is an error", `42`, true},
		{"truncated JSON is an error", `{"release_label":"1.0","a":{`, true},
		{"an empty object decodes with the file version", `{}`, false},
		{"a component that is an array is ignored", `{"cuda_nvcc":[1,2]}`, false},
		{"a component that is null is ignored", `{"cuda_nvcc":null}`, false},
		{"a platform that is a number is ignored", `{"c":{"version":"1","linux-x86_64":3}}`, false},
		{"a platform that is null is ignored", `{"c":{"version":"1","linux-x86_64":null}}`, false},
		{"cuda_variant of numbers is ignored", `{"c":{"cuda_variant":[11,12],"linux-x86_64":{"cuda12":{"relative_path":"a/b.tar.xz"}}}}`, false},
		{"cuda_variant that is a string is ignored", `{"c":{"cuda_variant":"12"}}`, false},
		{"relative_path that is a number is kept as a problem", `{"c":{"linux-x86_64":{"relative_path":5,"sha256":null,"size":[1]}}}`, false},
		{"size that is a float is kept as a problem", `{"c":{"linux-x86_64":{"relative_path":"a","sha256":"x","size":1.5}}}`, false},
		{"size that is a huge string is kept as a problem", `{"c":{"linux-x86_64":{"relative_path":"a","size":"99999999999999999999999"}}}`, false},
		{"release_label that is a number falls back to the file version", `{"release_label":12}`, false},
		{"variants that are arrays are ignored", `{"c":{"linux-x86_64":{"cuda12":[],"cuda13":null,"cuda11":"x"}}}`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Decode([]byte(tc.raw), "1.2.3")
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if err == nil {
				// Selecting from odd manifests must not panic either.
				_, _ = m.Select(Selection{Platform: "linux-x86_64", Profile: "full"})
				_, _ = m.Select(Selection{Platform: "linux-x86_64", Components: []string{"c"}, CUDAMajor: 12})
			}
		})
	}
}

func TestArtifactsWithHostilePathsAreRefused(t *testing.T) {
	cases := []struct{ name, path string }{
		{"an absolute path", "/etc/passwd"},
		{"a parent directory", "../../etc/passwd"},
		{"a parent directory in the middle", "cuda_nvcc/../../x.tar.xz"},
		{"a backslash", `cuda_nvcc\..\x.tar.xz`},
		{"an empty path", ""},
		{"a windows drive", "C:/x.tar.xz"},
		{"a URL", "https://evil.example/x.tar.xz"},
		{"a dot segment", "./x.tar.xz"},
		{"a double slash", "a//x.tar.xz"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			raw := `{"release_label":"1.0","c":{"version":"1","linux-x86_64":{"relative_path":` + strconvQuote(tc.path) + `,"sha256":"` + strings.Repeat("a", 64) + `","size":"10"}}}`
			m, err := Decode([]byte(raw), "1.0")
			if err != nil {
				t.Fatal(err)
			}
			m.setURLs("https://mirror.example/cuda/redist/")
			if u := m.Components["c"].Platforms["linux-x86_64"].Artifact.URL; u != "" {
				t.Errorf("URL %q for a hostile path", u)
			}
			if _, err := m.Select(Selection{Platform: "linux-x86_64", Components: []string{"c"}}); err == nil {
				t.Error("Select accepted it")
			}
			a := *m.Components["c"].Platforms["linux-x86_64"].Artifact
			a.URL = "https://mirror.example/x"
			if _, err := (&Client{}).Fetch(t.Context(), []Artifact{a}, t.TempDir()); err == nil {
				t.Error("Fetch accepted it")
			}
		})
	}
}

func strconvQuote(s string) string {
	b := []byte{'"'}
	for _, r := range s {
		if r == '\\' || r == '"' {
			b = append(b, '\\')
		}
		b = append(b, string(r)...)
	}
	return string(append(b, '"'))
}

func TestCompareVersionsIsNumeric(t *testing.T) {
	cases := []struct {
		a, b string
		want int
	}{
		{"12.10.0", "12.9.1", 1},
		{"9.12.0", "9.2.1", 1},
		{"8.9.7", "8.9.7.29", -1},
		{"12.4.1", "12.4.1", 0},
		{"11.8.0", "12.1.1", -1},
	}
	for _, tc := range cases {
		if got := compareVersions(tc.a, tc.b); got != tc.want {
			t.Errorf("compareVersions(%s, %s) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestDecodeSkipsComponentsWhoseIDsAreNotNames(t *testing.T) {
	data := []byte(`{"release_label":"12.4.1",
	"cuda_nvcc":{"name":"nvcc","version":"12.4.131","linux-x86_64":{"relative_path":"a.tar.xz","sha256":"00","size":"1"}},
	"../../etc":{"name":"x","version":"1.0","linux-x86_64":{"relative_path":"b.tar.xz","sha256":"00","size":"1"}},
	"x$(touch pwned)":{"name":"x","version":"1.0","linux-x86_64":{"relative_path":"c.tar.xz","sha256":"00","size":"1"}},
	"esc\u001b[31m":{"name":"x","version":"1.0","linux-x86_64":{"relative_path":"d.tar.xz","sha256":"00","size":"1"}}}`)
	m, err := Decode(data, "12.4.1")
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Components) != 1 || m.Components["cuda_nvcc"] == nil {
		t.Errorf("components %v, want only cuda_nvcc", m.Components)
	}
}
