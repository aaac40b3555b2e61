package linkstub

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/cudaenv/cudaenv/internal/rootfs"
)

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestFunctionsAreTheDeclarationsAndTheNamesTheirDefinesGive(t *testing.T) {
	for _, c := range []struct {
		header, prefix string
		want           []string
	}{
		{"cuda.h", "cu", []string{
			"cuCtxCreate", "cuCtxCreate_v2", "cuCtxCreate_v4", "cuDescribe", "cuDeviceTotalMem", "cuDeviceTotalMem_v2",
			"cuGetErrorString", "cuInit", "cuMemcpyHtoD", "cuMemcpyHtoDAsync", "cuMemcpyHtoDAsync_v2", "cuMemcpyHtoDAsync_v2_ptsz",
			"cuMemcpyHtoD_v2", "cuMemcpyHtoD_v2_ptds", "cuStreamQuery", "cuStreamQuery_ptsz",
		}},
		{"nvml.h", "nvml", []string{
			"nvmlDeviceGetCount", "nvmlDeviceGetCount_v2", "nvmlDeviceGetHandleBySerial", "nvmlDevicePowerSmoothingSetState",
			"nvmlErrorString", "nvmlInit", "nvmlInitWithFlags", "nvmlInit_v2", "nvmlShutdown",
		}},
	} {
		got, err := Functions(readTestdata(t, c.header), c.prefix)
		if err != nil {
			t.Fatalf("%s: %v", c.header, err)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %q\nwant %q", c.header, got, c.want)
		}
	}
}

func TestFunctionsReadsCRLFAndContinuedLines(t *testing.T) {
	h := "#define cuA \\\r\n  cuA_v2\r\nint cuA(void);\r\nint cuB(\r\n int x);\r\n"
	got, err := Functions([]byte(h), "cu")
	if err != nil || !reflect.DeepEqual(got, []string{"cuA", "cuA_v2", "cuB"}) {
		t.Errorf("got %q, %v", got, err)
	}
}

func TestAHostileHeaderExportsNothingButFunctionsWithThePrefix(t *testing.T) {
	t.Run("names outside the prefix, odd bytes and endless macros are left out", func(t *testing.T) {
		long := "cu" + strings.Repeat("x", 300)
		h := strings.Join([]string{
			"int malloc(int);",               // not the library's
			"int cu\xc3\xa9t\xc3\xa9(void);", // not an ASCII identifier: split, never a name
			"int " + long + "(void);",        // too long for a symbol
			"#define cuLoop cuLoop2",         // a loop of defines ends
			"#define cuLoop2 cuLoop",         //
			"int cuLoop(void);",              //
			"#define cuEvil \"a\\nb\"",       // a string is no name
			"#define cuEvil2 printf",         // a name outside the prefix is not exported
			"int cuEvil(void); int cuEvil2(void);",
			"int cuOk(void)", // no ';' at the end of the header: not read
		}, "\n")
		got, err := Functions([]byte(h), "cu")
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"cuEvil", "cuEvil2", "cuLoop", "cuLoop2"}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("got %q, want %q", got, want)
		}
		so, err := Build(X86_64, "libcuda.so.1", got, 34)
		if err != nil {
			t.Fatal(err)
		}
		if syms := dynamicNames(t, so); !reflect.DeepEqual(syms, want) {
			t.Errorf("the stub exports %q", syms)
		}
	})
	t.Run("a header too large is refused", func(t *testing.T) {
		if _, err := Functions(make([]byte, MaxHeader+1), "cu"); err == nil {
			t.Error("no error")
		}
	})
	t.Run("too many functions are refused", func(t *testing.T) {
		var b bytes.Buffer
		for i := 0; i <= MaxFunctions; i++ {
			fmt.Fprintf(&b, "int cu%d(void);\n", i)
		}
		if _, err := Functions(b.Bytes(), "cu"); err == nil || !strings.Contains(err.Error(), "more than") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("an unterminated comment or string ends the header quietly", func(t *testing.T) {
		for _, h := range []string{"int cuA(void); /* int cuB(void);", "int cuA(void); char *s = \"int cuB(void);"} {
			got, err := Functions([]byte(h), "cu")
			if err != nil || !reflect.DeepEqual(got, []string{"cuA"}) {
				t.Errorf("%q: %q, %v", h, got, err)
			}
		}
	})
	t.Run("Build refuses what is not a C identifier", func(t *testing.T) {
		for _, n := range []string{"cu x", "cu\x00x", "", "1cu", "cu.x", strings.Repeat("c", 300)} {
			if _, err := Build(X86_64, "libcuda.so.1", []string{n}, 34); err == nil {
				t.Errorf("%q: built", n)
			}
		}
		for _, s := range []string{"libcuda.so.1\x00", "../libcuda.so", "libc uda.so", "cuda.so.1"} {
			if _, err := Build(X86_64, s, []string{"cuInit"}, 34); err == nil {
				t.Errorf("soname %q: built", s)
			}
		}
	})
}

func dynamicNames(t *testing.T, so []byte) []string {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(so))
	if err != nil {
		t.Fatal(err)
	}
	syms, err := f.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range syms {
		out = append(out, s.Name)
	}
	return out
}

func TestBuildIsASharedObjectWithTheRealSonameExportingExactlyTheFunctions(t *testing.T) {
	names, err := Functions(readTestdata(t, "cuda.h"), "cu")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		arch    Arch
		machine elf.Machine
	}{{X86_64, elf.EM_X86_64}, {AArch64, elf.EM_AARCH64}} {
		so, err := Build(c.arch, "libcuda.so.1", names, 34)
		if err != nil {
			t.Fatal(err)
		}
		f, err := elf.NewFile(bytes.NewReader(so))
		if err != nil {
			t.Fatalf("%v: %v", c.arch, err)
		}
		if f.Type != elf.ET_DYN || f.Machine != c.machine || f.Class != elf.ELFCLASS64 {
			t.Errorf("%v: type %v machine %v class %v", c.arch, f.Type, f.Machine, f.Class)
		}
		if s, err := f.DynString(elf.DT_SONAME); err != nil || !reflect.DeepEqual(s, []string{"libcuda.so.1"}) {
			t.Errorf("%v: SONAME %q, %v", c.arch, s, err)
		}
		if libs, _ := f.ImportedLibraries(); len(libs) != 0 {
			t.Errorf("%v: needs %q", c.arch, libs)
		}
		syms, _ := f.DynamicSymbols()
		var got []string
		for _, s := range syms {
			if elf.ST_TYPE(s.Info) != elf.STT_FUNC || elf.ST_BIND(s.Info) != elf.STB_GLOBAL || s.Section == elf.SHN_UNDEF {
				t.Errorf("%v: %s is not a defined global function", c.arch, s.Name)
			}
			got = append(got, s.Name)
		}
		if !reflect.DeepEqual(got, names) {
			t.Errorf("%v: exports %q, the header declares %q", c.arch, got, names)
		}
		for _, p := range f.Progs {
			if p.Type == elf.PT_LOAD && p.Flags&elf.PF_W != 0 && p.Flags&elf.PF_X != 0 {
				t.Errorf("%v: a segment is both writable and executable", c.arch)
			}
		}
	}
}

// stubTree is a CUDA tree as a wheel installs it: the runtime and its
// headers, nvml.h, no stubs.
func stubTree(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), `cu da "$x`)
	for name, body := range map[string]string{
		"include/cuda.h":         string(readTestdata(t, "cuda.h")),
		"include/nvml.h":         string(readTestdata(t, "nvml.h")),
		"lib/libcudart.so.12":    "\x7fELF",
		"include/cuda_runtime.h": "",
	} {
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

func complete(t *testing.T, dir, platform string) ([]Written, error) {
	t.Helper()
	tr, err := rootfs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	return Complete(tr, dir, platform)
}

func TestCompleteWritesTheStubsATreeWants(t *testing.T) {
	dir := stubTree(t)
	if w := Wanted(dir); !reflect.DeepEqual(w, []string{"lib/stubs/libcuda.so", "lib/stubs/libnvidia-ml.so"}) {
		t.Errorf("Wanted = %q", w)
	}
	wrote, err := complete(t, dir, "linux-sbsa")
	if err != nil {
		t.Fatal(err)
	}
	if want := []Written{{"lib/stubs/libcuda.so", 16}, {"lib/stubs/libnvidia-ml.so", 9}}; !reflect.DeepEqual(wrote, want) {
		t.Errorf("wrote %v, want %v", wrote, want)
	}
	if w := Wanted(dir); w != nil {
		t.Errorf("Wanted after = %q", w)
	}
	f, err := elf.Open(filepath.Join(dir, "lib", "stubs", "libnvidia-ml.so"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if s, _ := f.DynString(elf.DT_SONAME); f.Machine != elf.EM_AARCH64 || !reflect.DeepEqual(s, []string{"libnvidia-ml.so.1"}) {
		t.Errorf("machine %v soname %q", f.Machine, s)
	}
	// Again: nothing to do.
	if wrote, err := complete(t, dir, "linux-sbsa"); err != nil || wrote != nil {
		t.Errorf("again: %v, %v", wrote, err)
	}
}

func TestCompleteKeepsNvidiasStubsAndSkipsWhatATreeLacks(t *testing.T) {
	dir := stubTree(t)
	own := filepath.Join(dir, "lib", "stubs", "libcuda.so")
	os.MkdirAll(filepath.Dir(own), 0o755)
	os.WriteFile(own, []byte("NVIDIA's own"), 0o644)
	os.Remove(filepath.Join(dir, "include", "nvml.h"))
	wrote, err := complete(t, dir, "linux-x86_64")
	if err != nil || wrote != nil {
		t.Errorf("wrote %v, %v", wrote, err)
	}
	if b, _ := os.ReadFile(own); string(b) != "NVIDIA's own" {
		t.Errorf("NVIDIA's stub was replaced")
	}
	// Windows trees and trees without the runtime get none.
	dir2 := stubTree(t)
	if wrote, err := complete(t, dir2, "windows-x86_64"); err != nil || wrote != nil {
		t.Errorf("windows: %v, %v", wrote, err)
	}
	os.Remove(filepath.Join(dir2, "lib", "libcudart.so.12"))
	os.Remove(filepath.Join(dir2, "include", "nvml.h"))
	if w := Wanted(dir2); w != nil {
		t.Errorf("Wanted without the runtime = %q", w)
	}
	if wrote, err := complete(t, dir2, "linux-x86_64"); err != nil || wrote != nil {
		t.Errorf("no runtime: %v, %v", wrote, err)
	}
}

func TestCompleteNeverReadsOrWritesThroughALink(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.h")
	os.WriteFile(secret, []byte("int cuSecret(void);"), 0o644)

	// A header that is a link out of the tree is not read.
	dir := stubTree(t)
	os.Remove(filepath.Join(dir, "include", "cuda.h"))
	if err := os.Symlink(secret, filepath.Join(dir, "include", "cuda.h")); err != nil {
		t.Fatal(err)
	}
	if _, err := complete(t, dir, "linux-x86_64"); err == nil {
		t.Error("read a header through a link")
	}
	if _, err := os.Stat(filepath.Join(dir, "lib", "stubs", "libcuda.so")); err == nil {
		t.Error("wrote a stub from a linked header")
	}

	// A lib/stubs that is a link out of the tree is not written through.
	dir = stubTree(t)
	if err := os.Symlink(outside, filepath.Join(dir, "lib", "stubs")); err != nil {
		t.Fatal(err)
	}
	if _, err := complete(t, dir, "linux-x86_64"); err == nil {
		t.Error("no error writing through lib/stubs → outside")
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 1 {
		t.Errorf("outside now holds %d files", len(ents))
	}
}

// TestAProgramLinksWithTheStubsAloneAndLoadsTheRealLibrary links a C
// program calling cuInit and nvmlInit_v2 with -lcuda -lnvidia-ml and
// nothing else (the stubs' folder on LIBRARY_PATH, as activation puts it):
// the program needs libcuda.so.1 and libnvidia-ml.so.1, as one linked
// against the driver does. Loaded by mistake (renamed to the SONAME on
// LD_LIBRARY_PATH), each stub answers its "stub library" error.
func TestAProgramLinksWithTheStubsAloneAndLoadsTheRealLibrary(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil || runtime.GOOS != "linux" {
		t.Skip("no cc, or not Linux")
	}
	platform := map[string]string{"amd64": "linux-x86_64", "arm64": "linux-sbsa"}[runtime.GOARCH]
	if platform == "" {
		t.Skip("no stub for " + runtime.GOARCH)
	}
	dir := stubTree(t)
	if _, err := complete(t, dir, platform); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	src := filepath.Join(work, "p.c")
	os.WriteFile(src, []byte(`#include <stdio.h>
int cuInit(unsigned int);
int nvmlInit_v2(void);
int main(void) { printf("%d %d\n", cuInit(0), nvmlInit_v2()); return 0; }
`), 0o644)
	bin := filepath.Join(work, "p")
	cmd := exec.Command(cc, src, "-o", bin, "-lcuda", "-lnvidia-ml")
	cmd.Env = append(os.Environ(), "LIBRARY_PATH="+filepath.Join(dir, "lib", "stubs"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	libs, _ := f.ImportedLibraries()
	f.Close()
	for _, want := range []string{"libcuda.so.1", "libnvidia-ml.so.1"} {
		if !slices.Contains(libs, want) {
			t.Errorf("the program needs %q, not %s", libs, want)
		}
	}
	run := filepath.Join(work, "run")
	os.Mkdir(run, 0o755)
	for _, l := range Libraries {
		b, _ := os.ReadFile(filepath.Join(dir, "lib", "stubs", l.File))
		os.WriteFile(filepath.Join(run, l.Soname), b, 0o644)
	}
	cmd = exec.Command(bin)
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+run)
	out, err := cmd.CombinedOutput()
	if err != nil || string(out) != "34 12\n" {
		t.Errorf("run with the stubs loaded: %v, %q", err, out)
	}
}

func TestATreeWithoutTheHeaderWantsNoStub(t *testing.T) {
	dir := stubTree(t)
	os.Remove(filepath.Join(dir, "include", "cuda.h"))
	if w := Wanted(dir); !reflect.DeepEqual(w, []string{"lib/stubs/libnvidia-ml.so"}) {
		t.Errorf("Wanted = %q", w)
	}
}

// FuzzFunctions: whatever a header holds, reading it does not panic, and
// what it lists builds into a stub exporting exactly those names.
func FuzzFunctions(f *testing.F) {
	f.Add([]byte("int cuA(void);"))
	f.Add([]byte("#define cuA cuA_v2\nint cuA(int);\n"))
	f.Add([]byte("#define P(a) a ## _x\n#define cuB P(cuB)\nextern \"C\" { int cuB(void); }"))
	f.Add([]byte("/* unterminated"))
	f.Add([]byte("\"\\"))
	f.Add([]byte("int cu(((;"))
	f.Fuzz(func(t *testing.T, header []byte) {
		names, err := Functions(header, "cu")
		if err != nil {
			return
		}
		so, err := Build(AArch64, "libcuda.so.1", names, 34)
		if err != nil {
			t.Fatalf("Functions gave %q, Build refused it: %v", names, err)
		}
		if got := dynamicNames(t, so); len(names) > 0 && !reflect.DeepEqual(got, names) {
			t.Fatalf("exports %q, want %q", got, names)
		}
	})
}
