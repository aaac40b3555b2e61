package store

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cudaenv/cudaenv/internal/version"
)

// writeTree lays out files under dir; paths under bin/ are executable.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, body := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasPrefix(p, "bin/") {
			mode = 0o755
		}
		if err := os.WriteFile(full, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
}

// testTable is a component table with the real builds of a few releases.
func testTable(component, build string) []string {
	return map[string][]string{
		"cuda_cudart 12.4.127": {"12.4.1"},
		"cuda_nvcc 12.4.131":   {"12.4.1"},
		"cuda_cudart 13.0.48":  {"13.0.0"},
		"cuda_nvcc 13.0.48":    {"13.0.0"},
		"cuda_nvcc 13.0.88":    {"13.0.1", "13.0.2", "13.0.3"},
	}[component+" "+build]
}

// Linking a tree reads its release from files; its bin/nvcc, which could
// be anything, runs only when no file names a release or build. A build is
// never taken for the release: it maps through the table.
func TestLinkReadsTheVersionFromFilesWithoutRunningNvcc(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("uses a shell script as nvcc")
	}
	tests := []struct {
		desc  string
		files map[string]string
		want  string
	}{
		{"version.json is read", map[string]string{"version.json": `{"cuda":{"version":"12.4.1"}}`}, "12.4.1"},
		{"version.txt is read", map[string]string{"version.txt": "CUDA Version 11.0.228\n"}, "11.0.228"},
		{"libcudart's build names the release through the table", map[string]string{
			"include/cuda.h":             "/* CUDA */\n#define CUDA_VERSION 12040\n",
			"lib/libcudart.so.12.4.127":  "",
			"lib/libcudart.so.12":        "",
			"lib/libcudart.so.11.8.89":   "",
			"lib64/libcudart_static.a":   "",
			"include/cuda_runtime_api.h": "#define CUDART_VERSION 12040\n",
		}, "12.4.1"},
		{"a conda tree's libcudart under targets", map[string]string{
			"targets/x86_64-linux/include/cuda.h":           "#define CUDA_VERSION 13000\n",
			"targets/x86_64-linux/lib/libcudart.so.13.0.48": "",
		}, "13.0.0"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "tree")
			ran := filepath.Join(t.TempDir(), "nvcc-ran")
			tt.files["bin/nvcc"] = "#!/bin/sh\ntouch '" + ran + "'\necho 'Cuda compilation tools, release 9.9, V9.9.9'\n"
			writeTree(t, dir, tt.files)
			e, err := newStore(t).LinkWith(dir, LinkOptions{Releases: testTable})
			if err != nil {
				t.Fatal(err)
			}
			if e.Name != tt.want {
				t.Errorf("linked as %s, want %s", e.Name, tt.want)
			}
			if _, err := os.Stat(ran); err == nil {
				t.Error("link ran the tree's bin/nvcc")
			}
		})
	}
}

// A pip environment's tree (nvidia/cu13: include/cuda.h, lib/libcudart.so.13,
// bin/nvcc) names only nvcc's build: 13.0.48 is CUDA 13.0.0, never 13.0.48,
// which would sort above 13.0.0 and take over every 13.0 pin.
func TestLinkOfAPipTreeNamesTheReleaseOfNvccsBuild(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("uses a shell script as nvcc")
	}
	pip := func(build string) string {
		dir := filepath.Join(t.TempDir(), "site-packages", "nvidia", "cu13")
		writeTree(t, dir, map[string]string{
			"include/cuda.h":      "#define CUDA_VERSION 13000\n",
			"lib/libcudart.so.13": "",
			"bin/nvcc":            "#!/bin/sh\necho 'Cuda compilation tools, release 13.0, V" + build + "'\n",
		})
		return dir
	}
	tests := []struct{ build, want string }{
		{"13.0.48", "13.0.0"},
		{"13.0.88", "13.0.3"}, // shipped by 13.0.1 to 13.0.3: the newest, whose driver minimum is the safe one
	}
	for _, tt := range tests {
		e, err := newStore(t).LinkWith(pip(tt.build), LinkOptions{Releases: testTable})
		if err != nil || e.Name != tt.want {
			t.Errorf("nvcc %s: linked as %q, %v; want %s", tt.build, e.Name, err, tt.want)
		}
	}

	// A build the table does not know is refused, with the way to name it.
	dir := pip("13.5.37")
	_, err := newStore(t).LinkWith(dir, LinkOptions{Releases: testTable})
	var ue *UnnamedError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "it holds CUDA 13.5 build 13.5.37 (bin/nvcc --version), which cudaenv's table does not name a release for; say which 13.5 release it is, e.g. cudaenv link "+dir+" --as 13.5.0") {
		t.Fatalf("err = %v", err)
	}
	if list, _ := newStore(t).List(CUDA); len(list) != 0 {
		t.Fatalf("listed %+v", list)
	}

	// --as names it.
	s := newStore(t)
	e, err := s.LinkWith(dir, LinkOptions{As: version.MustParse("13.5.0"), Releases: testTable})
	if err != nil || e.Name != "13.5.0" || e.Path != dir {
		t.Fatalf("--as: %+v, %v", e, err)
	}
}

// A tree whose only clue is include/cuda.h (major.minor) is refused, not
// guessed to be the .0 release.
func TestLinkRefusesATreeThatGivesOnlyItsMajorMinor(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "with space", "env")
	writeTree(t, dir, map[string]string{"targets/x86_64-linux/include/cuda.h": "#define CUDA_VERSION 12060\n"})
	_, err := newStore(t).LinkWith(dir, LinkOptions{Releases: testTable})
	if err == nil || !strings.Contains(err.Error(), "it holds CUDA 12.6 (include/cuda.h); say which 12.6 release it is, e.g. cudaenv link '"+dir+"' --as 12.6.0") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("err = %v", err)
	}
}

// An nvcc that hangs, leaving a child that holds its stdout, cannot hold
// link up past the timeout: link returns before that child ends (it
// leaves a file when it does), whatever the machine's speed.
func TestLinkOfAHangingNvccReturnsWithinTheTimeout(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("uses a shell script as nvcc")
	}
	old := nvccTimeout
	nvccTimeout = 300 * time.Millisecond
	t.Cleanup(func() { nvccTimeout = old })
	const child = "(sleep 120; : >\"$0.child-ended\") &\n"
	dir := filepath.Join(t.TempDir(), "tree")
	writeTree(t, dir, map[string]string{"bin/nvcc": "#!/bin/sh\n" + child + "sleep 120\n"})
	_, err := newStore(t).Link(dir, 0)
	if _, serr := os.Stat(filepath.Join(dir, "bin", "nvcc.child-ended")); serr == nil {
		t.Errorf("link waited for nvcc's child")
	}
	if err == nil || !strings.Contains(err.Error(), "--version did not finish within 300ms; if ") || strings.Contains(err.Error(), "\n") {
		t.Errorf("err = %v", err)
	}

	// One that answers, then leaves a child holding stdout, is read.
	dir = filepath.Join(t.TempDir(), "tree")
	writeTree(t, dir, map[string]string{"bin/nvcc": "#!/bin/sh\necho 'Cuda compilation tools, release 12.4, V12.4.131'\n" + child})
	e, err := newStore(t).LinkWith(dir, LinkOptions{Releases: testTable})
	if _, serr := os.Stat(filepath.Join(dir, "bin", "nvcc.child-ended")); serr == nil {
		t.Errorf("link waited for nvcc's child")
	}
	if err != nil || e.Name != "12.4.1" {
		t.Errorf("link: %+v, %v", e, err)
	}
}
