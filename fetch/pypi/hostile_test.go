package pypi

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// wheelSandbox is a tree to extract into and, beside it, a folder that
// must stay as it is.
func wheelSandbox(t *testing.T) (dest, outside string) {
	t.Helper()
	parent := filepath.Join(t.TempDir(), `w "q" $x`)
	dest, outside = filepath.Join(parent, "tree"), filepath.Join(parent, "outside")
	for _, d := range []string{dest, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, ".bashrc"), []byte("# mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dest, outside
}

func outsideUnchanged(t *testing.T, outside string) {
	t.Helper()
	des, _ := os.ReadDir(outside)
	if len(des) != 1 {
		t.Errorf("outside the tree: %v", des)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, ".bashrc")); string(b) != "# mine\n" {
		t.Errorf(".bashrc outside the tree now holds %q", b)
	}
}

func link(name, target string) zipEntry {
	return zipEntry{name: name, mode: fs.ModeSymlink | 0o777, body: target}
}

func TestExtractWheelResolvesLinksInsteadOfReadingThem(t *testing.T) {
	cases := []struct {
		name   string
		wheels [][]zipEntry
		want   string
	}{
		{"a chain of links each harmless to look at", [][]zipEntry{{
			link("nvidia/cu13/lib/z1", ".."),
			link("nvidia/cu13/lib/z2", "z1/.."),
		}}, "lib/z2 → z1/..: it resolves outside the tree"},
		{"the same chain split over two wheels", [][]zipEntry{
			{link("nvidia/cu13/lib/z1", "..")},
			{link("nvidia/cuda_runtime/lib/z2", "z1/..")},
		}, "resolves outside"},
		{"a link through the chain to a file beside the tree", [][]zipEntry{{
			link("nvidia/cu13/lib/z1", ".."),
			link("nvidia/cu13/lib/z2", "z1/.."),
			link("nvidia/cu13/lib/bashrc", "z2/outside/.bashrc"),
		}}, "resolves outside"},
		{"a file written through a link inside the tree", [][]zipEntry{{
			zipEntry{name: "nvidia/cu13/include/cuda.h", body: "x"},
			link("nvidia/cu13/lib", "include"),
			zipEntry{name: "nvidia/cu13/lib/libcudart.so.13", body: "elf"},
		}}, "through a symlink"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dest, outside := wheelSandbox(t)
			var err error
			for _, w := range tc.wheels {
				if err = extract(t, dest, buildZip(t, w...)); err != nil {
					break
				}
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ExtractWheel = %v, want an error containing %q", err, tc.want)
			}
			outsideUnchanged(t, outside)
		})
	}
}

func TestExtractWheelRefusesNamesCudaenvOwns(t *testing.T) {
	for _, name := range []string{
		"nvidia/cu13/receipt.json",
		"nvidia/cuda_runtime/receipt.json",
		"nvidia/cu13/lib/.cudaenv-1.tmp",
	} {
		t.Run(name, func(t *testing.T) {
			dest, outside := wheelSandbox(t)
			for _, e := range []zipEntry{{name: name, body: "{}"}, link(name, "lib")} {
				err := extract(t, dest, buildZip(t, e))
				if err == nil || !strings.Contains(err.Error(), "only cudaenv writes") {
					t.Fatalf("ExtractWheel = %v", err)
				}
			}
			outsideUnchanged(t, outside)
		})
	}
}

func TestExtractWheelBoundsWhatItUnpacksTo(t *testing.T) {
	dest := t.TempDir()
	bomb := buildZip(t, zipEntry{name: "nvidia/cu13/lib/zeros", body: strings.Repeat("\x00", 4<<20)})
	err := extract(t, dest, bomb)
	if err == nil || !strings.Contains(err.Error(), "unpacks to more than") {
		t.Fatalf("ExtractWheel = %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dest, "lib", "zeros")); err == nil {
		t.Error("the bomb was written")
	}
}

func TestResolveRefusesVersionsThatAreNotDigitsAndDots(t *testing.T) {
	ix, err := NewIndex("http://127.0.0.1:1/simple/")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"12.4.127$(touch x)", "12.4.127;id", "12.4.127\n", "", "12.4.127.post1 "} {
		_, err := ix.Resolve(context.Background(), LinuxX86_64, []Requirement{{Component: "cuda_cudart", Project: "nvidia-cuda-runtime-cu12", Version: v}})
		if err == nil || !strings.Contains(err.Error(), "digits and dots") {
			t.Errorf("Resolve(%q) = %v", v, err)
		}
	}
	rel := Release{Version: "12.4.1", Components: []Component{{ID: "cuda_cudart", Version: "12.4.127$(id)", Platforms: []string{LinuxX86_64}}}}
	if _, err := Plan(rel, LinuxX86_64, Selection{Components: []string{"cuda_cudart"}}); err == nil || !strings.Contains(err.Error(), "digits and dots") {
		t.Errorf("Plan = %v", err)
	}
}

func TestSelectWheelIgnoresFilesWithOddVersionsOrNames(t *testing.T) {
	const p = "nvidia-cuda-runtime-cu12"
	page := pageOf(p,
		File{Filename: "nvidia_cuda_runtime_cu12-12.4.127$(id)-py3-none-manylinux2014_x86_64.whl", SHA256: hashA},
		File{Filename: "nvidia_cuda_runtime_cu12-12.4.128;id-py3-none-manylinux2014_x86_64.whl", SHA256: hashA},
		File{Filename: "nvidia_cuda_runtime_cu12-12.4.127-py3\n-none-manylinux2014_x86_64.whl", SHA256: hashA},
		File{Filename: "nvidia_cuda_runtime_cu12-12.4.127-py3\x1b[2J-none-manylinux2014_x86_64.whl", SHA256: hashA},
		File{Filename: "nvidia_cuda_runtime_cu12-12.4.99-py3-none-manylinux2014_x86_64.whl", SHA256: hashA},
	)
	_, err := SelectWheel(page, "12.4.127", LinuxX86_64)
	var nw *NoWheelError
	if !errors.As(err, &nw) {
		t.Fatalf("SelectWheel = %v, want no wheel", err)
	}
	if strings.Join(nw.Versions, ",") != "12.4.99" {
		t.Errorf("versions offered: %q", nw.Versions)
	}
	if strings.ContainsAny(err.Error(), "$\n\x1b") || strings.Contains(err.Error(), ";id") {
		t.Errorf("the message carries the index's odd names: %q", err)
	}
}
