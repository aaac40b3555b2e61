package pypi

import (
	"archive/zip"
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEntryPathMapsWheelEntriesToTheRedistLayout(t *testing.T) {
	tests := []struct {
		entry, want string
	}{
		{"nvidia/cuda_runtime/lib/libcudart.so.12", "lib/libcudart.so.12"},
		{"nvidia/cuda_runtime/include/cuda_runtime.h", "include/cuda_runtime.h"},
		{"nvidia/cuda_nvcc/bin/ptxas", "bin/ptxas"},
		{"nvidia/cuda_nvcc/nvvm/lib64/libnvvm.so", "nvvm/lib64/libnvvm.so"},
		{"nvidia/cuda_nvcc/nvvm/libdevice/libdevice.10.bc", "nvvm/libdevice/libdevice.10.bc"},
		{"nvidia/cuda_nvcc/include/crt/host_config.h", "include/crt/host_config.h"},
		{"nvidia/cublas/lib/libcublasLt.so.12", "lib/libcublasLt.so.12"},
		{"nvidia/cuda_cccl/include/thrust/version.h", "include/thrust/version.h"},
		{"nvidia/cudnn/lib/libcudnn.so.9", "lib/libcudnn.so.9"},
		{"nvidia/cuda_runtime/bin/cudart64_12.dll", "bin/cudart64_12.dll"},
		{"nvidia/cu13/bin/nvcc", "bin/nvcc"},
		{"nvidia/cu13/bin/nvcc.profile", "bin/nvcc.profile"},
		{"nvidia/cu13/lib/libcudart.so.13", "lib/libcudart.so.13"},
		{"nvidia/cu13/include/crt/host_config.h", "include/crt/host_config.h"},
		{"nvidia/cu13/include/cccl/cuda/std/version", "include/cccl/cuda/std/version"},
		{"nvidia/cu13/nvvm/libdevice/libdevice.10.bc", "nvvm/libdevice/libdevice.10.bc"},
		{"nvidia/cu13/bin/cicc", "nvvm/bin/cicc"},
		{"nvidia/cu13/lib/libnvvm.so.4", "nvvm/lib64/libnvvm.so.4"},
		{"nvidia/cu13/include/nvvm.h", "nvvm/include/nvvm.h"},
		{"nvidia/cu13/bin/cicc.exe", "nvvm/bin/cicc.exe"},
		{"nvidia/cu13/bin/x86_64/cudart64_13.dll", "bin/x64/cudart64_13.dll"},
		{"nvidia/cu13/bin/x86_64/nvvm64_40_0.dll", "nvvm/bin/x64/nvvm64_40_0.dll"},
		{"nvidia/cu13/lib/x64/cudart.lib", "lib/x64/cudart.lib"},
		{"nvidia/cu14/bin/nvcc", "bin/nvcc"},
		{"nvidia/cu13/lib/libnvvm_extra/readme", "lib/libnvvm_extra/readme"},
		// The library wheels as they are on PyPI (see layout.go).
		{"nvidia/nccl/include/nccl.h", "include/nccl.h"},
		{"nvidia/cusparselt/lib/libcusparseLt.so.0", "lib/libcusparseLt.so.0"},
		{"nvidia/cu13/include/cusparseLt.h", "include/cusparseLt.h"},
		{"nvidia/cu12/include/cudss.h", "include/cudss.h"},
		{"nvidia/cu13/lib/libcudss.so.1", "lib/libcudss.so.1"},
		{"nvidia/nvshmem/lib/libnvshmem_host.so.3", "lib/libnvshmem_host.so.3"},
		{"cutensor/include/cutensor.h", "include/cutensor.h"},
		{"cutensor/include/cutensor/types.h", "include/cutensor/types.h"},
		{"cutensor/lib/libcutensor.so.2", "lib/libcutensor.so.2"},
	}
	for _, tt := range tests {
		t.Run(tt.entry, func(t *testing.T) {
			got, ok := EntryPath(tt.entry)
			if !ok || got != tt.want {
				t.Fatalf("EntryPath(%q) = %q, %v; want %q", tt.entry, got, ok, tt.want)
			}
		})
	}
}

func TestEntryPathSkipsWhatIsNotToolkit(t *testing.T) {
	for _, entry := range []string{
		"nvidia/__init__.py",
		"nvidia/cuda_runtime/__init__.py",
		"nvidia/cuda_runtime/lib/__init__.py",
		"nvidia/cuda_runtime/__pycache__/__init__.cpython-312.pyc",
		"nvidia_cuda_runtime_cu12-12.4.127.dist-info/RECORD",
		"nvidia_cuda_nvcc-13.0.48.dist-info/licenses/License.txt",
		"nvidia/cu13/.metadata/provenance.txt",
		"nvidia/cu13/bin/",
		"nvidia/README",
		"otherpkg/lib/libx.so",
		"nvidia_cuda_nvcc-13.0.48.data/scripts/tool",
		"cutensor_cu13-2.8.1.dist-info/RECORD",
	} {
		t.Run(entry, func(t *testing.T) {
			dest, err := entryPath(entry)
			if err != errSkip {
				t.Fatalf("entryPath(%q) = %q, %v; want skipped", entry, dest, err)
			}
			if _, ok := EntryPath(entry); ok {
				t.Fatal("EntryPath says ok")
			}
		})
	}
}

func TestEntryPathRejectsHostileNames(t *testing.T) {
	for _, entry := range []string{
		"",
		"/etc/passwd",
		"nvidia/cu13/../../../etc/passwd",
		"nvidia/cu13/bin/../../x",
		"../nvidia/cu13/bin/nvcc",
		`nvidia\cu13\bin\nvcc`,
		"nvidia/cu13/bin/a\x00b",
		"C:/Windows/system32/x.dll",
		"nvidia//cu13/bin/nvcc",
		"nvidia/./cu13/bin/nvcc",
	} {
		t.Run(entry, func(t *testing.T) {
			dest, err := entryPath(entry)
			if err == nil || err == errSkip {
				t.Fatalf("entryPath(%q) = %q, %v; want refused", entry, dest, err)
			}
			if _, ok := EntryPath(entry); ok {
				t.Fatal("EntryPath says ok")
			}
		})
	}
}

// TestEntryPathPlacesEveryRealWheelEntry runs EntryPath over the entry lists
// of NVIDIA's real wheels (testdata/real_layouts.txt): nothing is refused,
// nothing keeps an nvidia/ prefix, and the key files land where a redist
// install puts them.
func TestEntryPathPlacesEveryRealWheelEntry(t *testing.T) {
	f, err := os.Open("testdata/real_layouts.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	placed := map[string]bool{}
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		fields := strings.Split(line, "\t")
		if len(fields) != 4 {
			t.Fatalf("bad line %q", line)
		}
		wheel, entry := fields[0], fields[3]
		n++
		dest, err := entryPath(entry)
		if err == errSkip {
			continue
		}
		if err != nil {
			t.Errorf("%s: %s refused: %v", wheel, entry, err)
			continue
		}
		top := strings.SplitN(dest, "/", 2)[0]
		switch top {
		case "bin", "include", "lib", "nvvm":
		default:
			t.Errorf("%s: %s → %s, outside bin, include, lib, nvvm", wheel, entry, dest)
		}
		plat := "linux"
		if strings.Contains(wheel, "win_amd64") {
			plat = "windows"
		}
		placed[plat+" "+dest] = true
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 500 {
		t.Fatalf("only %d entries in testdata/real_layouts.txt", n)
	}
	for _, want := range []string{
		"linux bin/nvcc", "linux bin/ptxas", "linux bin/nvcc.profile", "linux bin/cudafe++",
		"linux nvvm/bin/cicc", "linux nvvm/lib64/libnvvm.so.4", "linux nvvm/libdevice/libdevice.10.bc",
		"linux nvvm/lib64/libnvvm.so", "linux lib/libcudart.so.12", "linux lib/libcudart.so.13",
		"linux lib/libcudart_static.a", "linux include/cuda_runtime.h", "linux include/crt/host_config.h",
		"linux lib/libcublas.so.13", "linux lib/libnvJitLink.so.12",
		"windows bin/x64/cudart64_13.dll", "windows bin/cudart64_12.dll", "windows lib/x64/cudart.lib",
		"windows bin/nvcc.exe", "windows nvvm/bin/cicc.exe",
	} {
		if !placed[want] {
			t.Errorf("no real entry lands at %s", want)
		}
	}
}

type zipEntry struct {
	name string
	mode fs.FileMode
	body string
}

func buildZip(t *testing.T, entries ...zipEntry) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		mode := e.mode
		if mode == 0 {
			mode = 0o644
		}
		h.SetMode(mode)
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(e.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func extract(t *testing.T, dest string, data []byte) error {
	t.Helper()
	return ExtractWheel(bytes.NewReader(data), int64(len(data)), dest)
}

func TestExtractWheelMergesWheelsIntoTheRedistLayout(t *testing.T) {
	dest := t.TempDir()
	nvcc := buildZip(t,
		zipEntry{name: "nvidia/cu13/bin/", mode: fs.ModeDir | 0o755},
		zipEntry{name: "nvidia/cu13/bin/nvcc", mode: 0o744, body: "#!/bin/sh\n"},
		zipEntry{name: "nvidia/cu13/bin/nvcc.profile", mode: 0o644, body: "TOP = $(_HERE_)/..\n"},
		zipEntry{name: "nvidia_cuda_nvcc-13.0.48.dist-info/RECORD", body: "x"},
	)
	nvvm := buildZip(t,
		zipEntry{name: "nvidia/cu13/bin/cicc", mode: 0o700, body: "cicc"},
		zipEntry{name: "nvidia/cu13/lib/libnvvm.so.4", body: "elf"},
	)
	runtime := buildZip(t,
		zipEntry{name: "nvidia/__init__.py"},
		zipEntry{name: "nvidia/cuda_runtime/lib/libcudart.so.12", body: "old"},
	)
	runtime2 := buildZip(t, zipEntry{name: "nvidia/cuda_runtime/lib/libcudart.so.12", body: "new"})
	for _, w := range [][]byte{nvcc, nvvm, runtime, runtime2} {
		if err := extract(t, dest, w); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]fs.FileMode{
		"bin/nvcc":                0o755,
		"bin/nvcc.profile":        0o644,
		"nvvm/bin/cicc":           0o755,
		"nvvm/lib64/libnvvm.so.4": 0o644,
		"lib/libcudart.so.12":     0o644,
	}
	var got []string
	filepath.WalkDir(dest, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			rel, _ := filepath.Rel(dest, p)
			got = append(got, filepath.ToSlash(rel))
		}
		return err
	})
	if len(got) != len(want) {
		t.Fatalf("tree = %v", got)
	}
	for rel, mode := range want {
		fi, err := os.Stat(filepath.Join(dest, rel))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != mode {
			t.Errorf("%s mode = %v, want %v", rel, fi.Mode().Perm(), mode)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dest, "lib/libcudart.so.12")); string(b) != "new" {
		t.Errorf("libcudart.so.12 = %q, want the later wheel's", b)
	}
}

func TestExtractWheelRefusesHostileEntries(t *testing.T) {
	tests := []struct {
		name  string
		entry zipEntry
	}{
		{"a parent escape", zipEntry{name: "nvidia/cu13/../../../escape", body: "x"}},
		{"an absolute path", zipEntry{name: "/tmp/escape", body: "x"}},
		{"a backslash path", zipEntry{name: `nvidia\cu13\bin\nvcc`, body: "x"}},
		{"a symlink to an absolute path", zipEntry{name: "nvidia/cu13/lib/libx.so", mode: fs.ModeSymlink | 0o777, body: "/etc/passwd"}},
		{"a symlink out of the tree", zipEntry{name: "nvidia/cu13/lib/libx.so", mode: fs.ModeSymlink | 0o777, body: "../../../outside"}},
		{"a device file", zipEntry{name: "nvidia/cu13/lib/dev", mode: fs.ModeDevice | 0o644}},
		{"a named pipe", zipEntry{name: "nvidia/cu13/lib/fifo", mode: fs.ModeNamedPipe | 0o644}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := t.TempDir()
			dest := filepath.Join(parent, "tree")
			if err := os.Mkdir(dest, 0o755); err != nil {
				t.Fatal(err)
			}
			err := extract(t, dest, buildZip(t, tt.entry))
			if err == nil {
				t.Fatal("extracted without error")
			}
			if _, err := os.Lstat(filepath.Join(parent, "escape")); err == nil {
				t.Fatal("a file escaped the tree")
			}
		})
	}
}

func TestExtractWheelKeepsSymlinksInsideTheTree(t *testing.T) {
	dest := t.TempDir()
	data := buildZip(t,
		zipEntry{name: "nvidia/cu13/lib/libx.so.13", body: "elf"},
		zipEntry{name: "nvidia/cu13/lib/libx.so", mode: fs.ModeSymlink | 0o777, body: "libx.so.13"},
	)
	if err := extract(t, dest, data); err != nil {
		t.Fatal(err)
	}
	if target, err := os.Readlink(filepath.Join(dest, "lib/libx.so")); err != nil || target != "libx.so.13" {
		t.Fatalf("link = %q, %v", target, err)
	}
}

func TestExtractWheelDoesNotWriteThroughALinkOutOfTheTree(t *testing.T) {
	parent := t.TempDir()
	dest := filepath.Join(parent, "tree")
	outside := filepath.Join(parent, "outside")
	for _, d := range []string{dest, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(dest, "lib")); err != nil {
		t.Fatal(err)
	}
	err := extract(t, dest, buildZip(t, zipEntry{name: "nvidia/cu13/lib/libcudart.so.13", body: "x"}))
	if err == nil {
		t.Fatal("extracted through a link out of the tree")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("wrote %v outside the tree", entries)
	}
}

func TestExtractWheelRefusesAFileOverAFolder(t *testing.T) {
	dest := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dest, "bin/nvcc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := extract(t, dest, buildZip(t, zipEntry{name: "nvidia/cu13/bin/nvcc", body: "x"})); err == nil {
		t.Fatal("replaced a folder with a file")
	}
}

func TestExtractWheelRefusesACorruptEntry(t *testing.T) {
	data := buildZip(t, zipEntry{name: "nvidia/cu13/bin/nvcc", body: strings.Repeat("nvcc", 1000)})
	// Flip a byte of the compressed data: the CRC check must catch it.
	i := bytes.Index(data, []byte("nvidia/cu13/bin/nvcc")) + len("nvidia/cu13/bin/nvcc") + 5
	data[i] ^= 0xff
	if err := extract(t, t.TempDir(), data); err == nil {
		t.Fatal("extracted a corrupt entry")
	}
}

func TestExtractWheelRefusesSomethingThatIsNotAZip(t *testing.T) {
	if err := extract(t, t.TempDir(), []byte("not a zip")); err == nil {
		t.Fatal("no error")
	}
}

func TestExtractWheelAddsTheDevelopmentLinksRedistArchivesHave(t *testing.T) {
	dest := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dest, "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dest, "lib/libkept.so"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	data := buildZip(t,
		zipEntry{name: "nvidia/cu13/lib/libcudart.so.13", body: "elf"},
		zipEntry{name: "nvidia/cu13/lib/libnvrtc.so.13", body: "elf"},
		zipEntry{name: "nvidia/cu13/lib/libnvrtc.so.13.0.48", body: "elf"},
		zipEntry{name: "nvidia/cu13/lib/libnvrtc-builtins.so.13.0", body: "elf"},
		zipEntry{name: "nvidia/cu13/lib/libnvvm.so.4", body: "elf"},
		zipEntry{name: "nvidia/cu13/lib/libshipped.so.1", body: "elf"},
		zipEntry{name: "nvidia/cu13/lib/libshipped.so", body: "own"},
		zipEntry{name: "nvidia/cu13/lib/libkept.so.2", body: "elf"},
		zipEntry{name: "nvidia/cu13/lib/libcudart_static.a", body: "ar"},
	)
	if err := extract(t, dest, data); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		"lib/libcudart.so":         "libcudart.so.13",
		"lib/libnvrtc.so":          "libnvrtc.so.13",
		"lib/libnvrtc-builtins.so": "libnvrtc-builtins.so.13.0",
		"nvvm/lib64/libnvvm.so":    "libnvvm.so.4",
	}
	for link, want := range links {
		if got, err := os.Readlink(filepath.Join(dest, link)); err != nil || got != want {
			t.Errorf("%s → %q (%v), want %q", link, got, err, want)
		}
	}
	for _, plain := range []string{"lib/libshipped.so", "lib/libkept.so"} {
		fi, err := os.Lstat(filepath.Join(dest, plain))
		if err != nil || !fi.Mode().IsRegular() {
			t.Errorf("%s was replaced by a link", plain)
		}
	}
	if _, err := os.Lstat(filepath.Join(dest, "lib/libcudart_static")); err == nil {
		t.Error("a static library got a link")
	}
}
