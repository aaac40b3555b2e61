package lockfile

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cudaenv/cudaenv/internal/version"
)

func sha(c byte) string { return strings.Repeat(string(c), 64) }

func spec(t *testing.T, s string) version.Spec {
	t.Helper()
	sp, err := version.ParseSpec(s)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// sample is a lock with both products on two platforms, its files given
// out of order (Encode sorts them).
func sample(t *testing.T) *Lock {
	return &Lock{
		Profile: "minimal",
		CUDA: &Product{Spec: spec(t, "12.4"), Release: "12.4.1", Source: "nvidia", Platforms: map[string][]File{
			"linux-x86_64": {
				{Component: "cuda_nvcc", Version: "12.4.131", Name: "cuda_nvcc-linux-x86_64-12.4.131-archive.tar.xz", Size: 300, SHA256: sha('b')},
				{Component: "cuda_cccl", Version: "12.4.127", Name: "cuda_cccl-linux-x86_64-12.4.127-archive.tar.xz", Size: 100, SHA256: sha('a')},
			},
			"linux-sbsa": {
				{Component: "cuda_nvcc", Version: "12.4.131", Name: "cuda_nvcc-linux-sbsa-12.4.131-archive.tar.xz", Size: 310, SHA256: sha('c')},
			},
		}},
		Cudnn: &Product{Spec: spec(t, "cudnn@9.5"), Release: "9.5.1", Source: "pypi", CUDAMajor: 12, Platforms: map[string][]File{
			"linux-x86_64": {{Component: "cudnn", Version: "9.5.1.17", Name: "nvidia_cudnn_cu12-9.5.1.17-py3-none-manylinux2014_x86_64.whl", Size: 5000, SHA256: sha('d')}},
			"linux-sbsa":   {{Component: "cudnn", Version: "9.5.1.17", Name: "nvidia_cudnn_cu12-9.5.1.17-py3-none-manylinux2014_aarch64.whl", Size: 5100, SHA256: sha('e')}},
		}},
	}
}

const sampleText = `# .cuda-version.lock: the exact CUDA and cuDNN archives ` + "`cudaenv install`" + ` installs here.
# Written by ` + "`cudaenv lock`" + ` (newer releases: ` + "`cudaenv lock --upgrade`" + `); commit it, do not edit it.
lock-version = 1
profile = "minimal"

[cuda]
spec = "12.4"
release = "12.4.1"
source = "nvidia"

[cuda.linux-sbsa]
cuda_nvcc = { version = "12.4.131", file = "cuda_nvcc-linux-sbsa-12.4.131-archive.tar.xz", size = 310, sha256 = "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc" }

[cuda.linux-x86_64]
cuda_cccl = { version = "12.4.127", file = "cuda_cccl-linux-x86_64-12.4.127-archive.tar.xz", size = 100, sha256 = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" }
cuda_nvcc = { version = "12.4.131", file = "cuda_nvcc-linux-x86_64-12.4.131-archive.tar.xz", size = 300, sha256 = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb" }

[cudnn]
spec = "cudnn@9.5"
release = "9.5.1"
cuda-major = 12
source = "pypi"

[cudnn.linux-sbsa]
cudnn = { version = "9.5.1.17", file = "nvidia_cudnn_cu12-9.5.1.17-py3-none-manylinux2014_aarch64.whl", size = 5100, sha256 = "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee" }

[cudnn.linux-x86_64]
cudnn = { version = "9.5.1.17", file = "nvidia_cudnn_cu12-9.5.1.17-py3-none-manylinux2014_x86_64.whl", size = 5000, sha256 = "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd" }
`

func TestEncodeWritesOneSortedReadableForm(t *testing.T) {
	got, err := Encode(sample(t))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != sampleText {
		t.Errorf("Encode:\n%s\nwant:\n%s", got, sampleText)
	}
}

func TestEncodeDecodeRoundTripIsByteStable(t *testing.T) {
	first, err := Encode(sample(t))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		l, err := Decode("lock", first)
		if err != nil {
			t.Fatal(err)
		}
		again, err := Encode(l)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first, again) {
			t.Fatalf("round %d changed the bytes:\n%s\nthen:\n%s", i, first, again)
		}
	}
}

func TestDecodeReadsWhatEncodeMeant(t *testing.T) {
	l, err := Decode("lock", []byte(sampleText))
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Platforms(); !reflect.DeepEqual(got, []string{"linux-sbsa", "linux-x86_64"}) {
		t.Errorf("Platforms = %v", got)
	}
	if !l.HasPlatform("linux-sbsa") || l.HasPlatform("windows-x86_64") {
		t.Error("HasPlatform is wrong")
	}
	var specs []string
	for _, sp := range l.Specs() {
		specs = append(specs, sp.String())
	}
	if strings.Join(specs, " ") != "12.4 cudnn@9.5" {
		t.Errorf("Specs = %v", specs)
	}
	if l.Cudnn.CUDAMajor != 12 || l.Cudnn.Source != "pypi" || l.CUDA.Release != "12.4.1" {
		t.Errorf("products: %+v %+v", l.CUDA, l.Cudnn)
	}
	f := l.CUDA.Platforms["linux-x86_64"][1]
	if f != (File{Component: "cuda_nvcc", Version: "12.4.131", Name: "cuda_nvcc-linux-x86_64-12.4.131-archive.tar.xz", Size: 300, SHA256: sha('b')}) {
		t.Errorf("file = %+v", f)
	}
}

func TestDecodeAcceptsWhatEditorsAndGitDo(t *testing.T) {
	tests := []struct {
		name string
		edit func(string) string
	}{
		{"CRLF line ends", func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }},
		{"extra comments and blank lines", func(s string) string {
			return strings.Replace(s, "[cuda]\n", "\n# pinned for the 2025 release\n[cuda]\n\n", 1)
		}},
		{"components in another order", func(s string) string {
			a := "cuda_cccl = { version = \"12.4.127\", file = \"cuda_cccl-linux-x86_64-12.4.127-archive.tar.xz\", size = 100, sha256 = \"" + sha('a') + "\" }\n"
			return strings.Replace(strings.Replace(s, a, "", 1), "[cudnn]\n", a+"\n[cudnn]\n", 1)
		}},
		{"keys of a file line in another order", func(s string) string {
			return strings.Replace(s, `{ version = "12.4.131", file = "cuda_nvcc-linux-sbsa-12.4.131-archive.tar.xz", size = 310,`, `{ size = 310, file = "cuda_nvcc-linux-sbsa-12.4.131-archive.tar.xz", version = "12.4.131",`, 1)
		}},
	}
	want, _ := Decode("lock", []byte(sampleText))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := Decode("lock", []byte(tt.edit(sampleText)))
			if err != nil {
				t.Fatal(err)
			}
			a, _ := Encode(l)
			b, _ := Encode(want)
			if !bytes.Equal(a, b) {
				t.Errorf("decoded to another lock:\n%s", a)
			}
		})
	}
}

// TestDecodeRefusesHostileLocks: a lock comes from a cloned repository;
// nothing in it may name a path, a URL or an unverifiable file.
func TestDecodeRefusesHostileLocks(t *testing.T) {
	nvcc := "cuda_nvcc-linux-sbsa-12.4.131-archive.tar.xz"
	tests := []struct {
		name string
		edit func(string) string
		want string
	}{
		{"a file name that climbs out", repl(nvcc, "../../../../etc/passwd"), `file name "../../../../etc/passwd" is not a plain archive name`},
		{"a file name with a directory", repl(nvcc, "cuda_nvcc/linux-sbsa/x.tar.xz"), "is not a plain archive name"},
		{"a file name with a backslash", repl(nvcc, `..\\..\\x.zip`), "backslash in a string"},
		{"a file name that is a URL", repl(nvcc, "https://evil.example/x.tar.xz"), "is not a plain archive name"},
		{"a hidden file name", repl(nvcc, ".bashrc"), "is not a plain archive name"},
		{"a file name with dot-dot inside", repl(nvcc, "x..tar.xz"), "is not a plain archive name"},
		{"a file name with a space", repl(nvcc, "x y.tar.xz"), "is not a plain archive name"},
		{"a file name that is empty", repl(nvcc, ""), "is not a plain archive name"},
		{"a non-ASCII file name", repl(nvcc, "cuda\u2024tar.xz"), "non-ASCII character"},
		{"a short sha256", repl(sha('c'), "cccc"), `sha256 "cccc" is not 64 lower-case hex digits`},
		{"an upper-case sha256", repl(sha('c'), strings.Repeat("C", 64)), "is not 64 lower-case hex digits"},
		{"a sha256 that is not hex", repl(sha('c'), strings.Repeat("g", 64)), "is not 64 lower-case hex digits"},
		{"a size too large", repl("size = 310", "size = 999999999999999"), "size 999999999999999 is out of range"},
		{"a size with too many digits", repl("size = 310", "size = 99999999999999999999"), "is out of range"},
		{"a zero size", repl("size = 310", "size = 0"), "size 0 is out of range"},
		{"a negative size", repl("size = 310", "size = -1"), "expected a number"},
		{"a size that is a string", repl("size = 310", `size = "310"`), "size is not a number"},
		{"a missing sha256", repl(`, sha256 = "`+sha('c')+`"`, ""), "a file line has exactly version, file, size and sha256"},
		{"an extra url key", repl(`size = 310,`, `size = 310, url = "http://evil.example/",`), "a file line has exactly version, file, size and sha256"},
		{"a component id with a slash", repl("cuda_nvcc = { version = \"12.4.131\", file = \"cuda_nvcc-linux-sbsa", "cuda/nvcc = { version = \"12.4.131\", file = \"cuda_nvcc-linux-sbsa"), "expected key = value"},
		{"a component listed twice", repl("[cuda.linux-sbsa]\n", "[cuda.linux-sbsa]\ncuda_nvcc = { version = \"12.4.131\", file = \"a.tar.xz\", size = 1, sha256 = \""+sha('f')+"\" }\n"), "key cuda_nvcc appears twice"},
		{"a component version that is not one", repl(`version = "12.4.131", file = "cuda_nvcc-linux-sbsa`, `version = "$(id)", file = "cuda_nvcc-linux-sbsa`), `version "$(id)" is not a version`},
		{"a platform key with a path", repl("[cuda.linux-sbsa]", "[cuda.linux-sbsa/../x]"), "unknown table"},
		{"a platform key of the wrong shape", repl("[cuda.linux-sbsa]", "[cuda.macos-arm64]"), `platform "macos-arm64" is not a platform key`},
		{"an unknown table", repl("[cudnn]", "[mirror]"), "unknown table"},
		{"a table twice", repl("[cudnn.linux-sbsa]", "[cudnn.linux-x86_64]"), "table [cudnn.linux-x86_64] appears twice"},
		{"a platform table before its product", func(s string) string {
			return strings.Replace(s, "[cuda]\n", "[cuda.linux-arm]\ncuda_nvcc = { version = \"1\", file = \"a\", size = 1, sha256 = \""+sha('f')+"\" }\n[cuda]\n", 1)
		}, "comes before [cuda]"},
		{"an unknown top key", repl("profile = ", "mirror = \"http://evil\"\nprofile = "), "mirror: unknown key"},
		{"an unknown product key", repl(`source = "nvidia"`, `url = "http://evil.example/"`), "url: unknown key"},
		{"a source that is a URL", repl(`source = "nvidia"`, `source = "http://evil.example/"`), `source "http://evil.example/" is not one of nvidia, pypi`},
		{"a spec that is shell code", repl(`spec = "12.4"`, `spec = "$(rm -rf ~)"`), `"$(rm -rf ~)" is not a version spec`},
		{"a spec of the other tool", repl(`spec = "12.4"`, `spec = "cudnn@9"`), `does not select cuda`},
		{"the system spec", repl(`spec = "12.4"`, `spec = "system"`), "spec system cannot be locked"},
		{"a release the spec does not match", repl(`release = "12.4.1"`, `release = "11.8.0"`), "release 11.8.0 does not match spec 12.4"},
		{"a release that is not a version", repl(`release = "12.4.1"`, `release = "12.4.1/../x"`), "is not a version"},
		{"a release with leading zeros", repl(`release = "12.4.1"`, `release = "12.04.1"`), "is not written plainly"},
		{"no spec", repl("spec = \"12.4\"\n", ""), "[cuda]: no spec"},
		{"cuda-major in [cuda]", repl("source = \"nvidia\"", "cuda-major = 12\nsource = \"nvidia\""), "cuda-major belongs to [cudnn]"},
		{"no cuda-major in [cudnn]", repl("cuda-major = 12\n", ""), "cuda-major 0 is not a CUDA major"},
		{"a cudnn table without cudnn", repl("cudnn = { version = \"9.5.1.17\", file = \"nvidia_cudnn_cu12-9.5.1.17-py3-none-manylinux2014_x86_64.whl\"", "libcudnn = { version = \"9.5.1.17\", file = \"nvidia_cudnn_cu12-9.5.1.17-py3-none-manylinux2014_x86_64.whl\""), "linux-x86_64: no cudnn component"},
		{"products on other platforms", func(s string) string {
			i := strings.Index(s, "[cudnn.linux-sbsa]")
			j := strings.Index(s, "[cudnn.linux-x86_64]")
			return s[:i] + s[j:]
		}, "[cuda] has platforms linux-sbsa, linux-x86_64, [cudnn] has linux-x86_64"},
		{"an empty platform table", repl("[cudnn]", "[cuda.windows-x86_64]\n\n[cudnn]"), "windows-x86_64: no files"},
		{"both profile and components", repl(`profile = "minimal"`, "profile = \"minimal\"\ncomponents = [\"cuda_nvcc\"]"), "both a profile and components"},
		{"neither profile nor components", repl("profile = \"minimal\"\n", ""), "neither a profile nor components"},
		{"a component list with a path", repl(`profile = "minimal"`, `components = ["../x"]`), `component "../x" is not a component id`},
		{"no lock-version", repl("lock-version = 1\n", ""), "no lock-version"},
		{"a newer lock-version", repl("lock-version = 1", "lock-version = 2"), "2 is not a version this cudaenv reads"},
		{"a key twice", repl(`release = "12.4.1"`, "release = \"12.4.1\"\nrelease = \"12.4.0\""), "key release appears twice"},
		{"text after a value", repl(`release = "12.4.1"`, `release = "12.4.1" "x"`), "unexpected text after the value"},
		{"a string escape", repl(`release = "12.4.1"`, `release = "12.4.\u0031"`), "a backslash in a string"},
		{"an unterminated string", repl(`release = "12.4.1"`, `release = "12.4.1`), "without its closing quote"},
		{"a control character", repl(`release = "12.4.1"`, "release = \"12.4.1\x1b[2J\""), "control or non-ASCII character"},
		{"no products", func(string) string { return "lock-version = 1\nprofile = \"default\"\n" }, "no [cuda] or [cudnn] table"},
		{"a very long line", repl(`profile = "minimal"`, `profile = "`+strings.Repeat("m", 2000)+`"`), "line longer than 1024 bytes"},
		{"a huge file", func(s string) string { return s + strings.Repeat("# padding\n", MaxFileSize/10+1) }, "larger than 524288 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := tt.edit(sampleText)
			if text == sampleText {
				t.Fatal("the edit changed nothing")
			}
			_, err := Decode("repo/.cuda-version.lock", []byte(text))
			if err == nil {
				t.Fatalf("Decode accepted:\n%s", text)
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "repo/.cuda-version.lock") {
				t.Errorf("error = %q, want it to start with the file and contain %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}

func repl(old, new string) func(string) string {
	return func(s string) string { return strings.Replace(s, old, new, 1) }
}

func TestDecodeErrorsNameTheLine(t *testing.T) {
	text := strings.Replace(sampleText, `source = "nvidia"`, `source = "ftp"`, 1)
	_, err := Decode("x.lock", []byte(strings.Replace(text, "size = 310", "size = 0", 1)))
	if err == nil || !strings.HasPrefix(err.Error(), "x.lock:12: ") {
		t.Errorf("error = %v, want the line of the bad size first", err)
	}
}

func TestEncodeRefusesWhatDecodeWouldRefuse(t *testing.T) {
	l := sample(t)
	l.CUDA.Platforms["linux-sbsa"][0].Name = "../evil.tar.xz"
	if _, err := Encode(l); err == nil || !strings.Contains(err.Error(), "not a plain archive name") {
		t.Errorf("Encode error = %v", err)
	}
}

func TestReadIsCappedAndReadsOnlyRegularFiles(t *testing.T) {
	dir := t.TempDir()
	if _, err := Read(filepath.Join(dir, FileName)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing lock: %v, want fs.ErrNotExist", err)
	}
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(filepath.Join(dir, "d")); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a folder: %v", err)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, bytes.Repeat([]byte("#\n"), MaxFileSize), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(big); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("a huge lock: %v", err)
	}
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte("TOKEN=hunter2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(secret, link); err != nil {
		t.Logf("no symbolic links here: %v", err)
	} else if _, err := Read(link); err == nil || !strings.Contains(err.Error(), "a symbolic link") || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("a link to a secret: %v", err)
	}
	good := filepath.Join(dir, FileName)
	if err := os.WriteFile(good, []byte(sampleText), 0o644); err != nil {
		t.Fatal(err)
	}
	if l, err := Read(good); err != nil || l.CUDA.Release != "12.4.1" {
		t.Errorf("Read = %v, %v", l, err)
	}
	if got := PathFor(filepath.Join(dir, ".cuda-version")); got != good {
		t.Errorf("PathFor = %s", got)
	}
}
