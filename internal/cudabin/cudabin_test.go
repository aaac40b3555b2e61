package cudabin

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cudaenv/cudaenv/compat"
	"github.com/cudaenv/cudaenv/internal/ldso"
)

func inspectOne(t *testing.T, p string, opt Options) Report {
	t.Helper()
	reps, err := Inspect(context.Background(), []string{p}, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) != 1 {
		t.Fatalf("%d reports: %+v", len(reps), reps)
	}
	return reps[0]
}

func ptxWords(ps []PTX) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Arch+" "+p.ISA+" "+p.BuiltWith)
	}
	return out
}

func TestAnNvccBuiltLibraryAndProgramSayWhatTheyCarry(t *testing.T) {
	tests := []struct {
		file, kind string
		sass, ptx  []string
	}{
		{"testdata/libkernel.so", "shared object", []string{"sm_75", "sm_90"}, []string{"compute_90 9.5 13.5"}},
		{"testdata/app", "executable", []string{"sm_80", "sm_120"}, []string{"compute_120 9.5 13.5"}},
	}
	for _, tt := range tests {
		r := inspectOne(t, tt.file, Options{DefaultDirs: []string{}})
		if r.Kind != tt.kind || !slices.Equal(r.SASS, tt.sass) || !slices.Equal(ptxWords(r.PTX), tt.ptx) {
			t.Errorf("%s: %s sass %v ptx %v", tt.file, r.Kind, r.SASS, ptxWords(r.PTX))
		}
	}
}

func TestTheRuntimeIsFoundThroughRUNPATHWithOrigin(t *testing.T) {
	r := inspectOne(t, "testdata/libkernel.so", Options{DefaultDirs: []string{}})
	want := []Need{{Name: "libcudart.so.13", Path: "testdata/cudart/libcudart.so.13", Via: "RUNPATH"}}
	if !slices.Equal(r.Needs, want) || len(r.Undefined) != 0 {
		t.Errorf("needs %+v undefined %+v", r.Needs, r.Undefined)
	}
	// The executable has no RUNPATH: not found, said so.
	r = inspectOne(t, "testdata/app", Options{DefaultDirs: []string{}})
	if len(r.Needs) != 1 || r.Needs[0].Path != "" {
		t.Errorf("app needs %+v", r.Needs)
	}
	// LD_LIBRARY_PATH finds it.
	r = inspectOne(t, "testdata/app", Options{DefaultDirs: []string{}, LibraryPath: []string{"testdata/cudart"}})
	if len(r.Needs) != 1 || r.Needs[0].Via != "LD_LIBRARY_PATH" {
		t.Errorf("app needs %+v", r.Needs)
	}
}

func TestTheLoaderOrderDecidesWhichNvJitLinkCuSparseGets(t *testing.T) {
	cache, err := ldso.ParseCache(must(os.ReadFile("testdata/root/etc/ld.so.cache")))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		desc      string
		file      string
		opt       Options
		pick, via string
		undefined bool
	}{
		{"RUNPATH alone finds 12.4", "sparse_runpath", Options{}, "testdata/jit124/libnvJitLink.so.12", "RUNPATH", false},
		{"LD_LIBRARY_PATH comes before RUNPATH: 12.1, and 12.4's symbol is missing", "sparse_runpath", Options{LibraryPath: []string{"testdata/jit121"}}, "testdata/jit121/libnvJitLink.so.12", "LD_LIBRARY_PATH", true},
		{"RPATH comes before LD_LIBRARY_PATH", "sparse_rpath", Options{LibraryPath: []string{"testdata/jit121"}}, "testdata/jit124/libnvJitLink.so.12", "RPATH of testdata/sparse_rpath/libcusparse.so.12", false},
		{"without paths, ld.so.cache gives 12.1", "sparse_plain", Options{Cache: cache, Root: "testdata/root"}, "/opt/cuda-12.1/lib64/libnvJitLink.so.12", "ld.so.cache", true},
		{"LD_LIBRARY_PATH comes before the cache", "sparse_plain", Options{Cache: cache, Root: "testdata/root", LibraryPath: []string{"testdata/jit124"}}, "testdata/jit124/libnvJitLink.so.12", "LD_LIBRARY_PATH", false},
		{"the default folders come last", "sparse_plain", Options{DefaultDirs: []string{"testdata/jit121", "testdata/jit124"}}, "testdata/jit121/libnvJitLink.so.12", "default folder", true},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			if tt.opt.DefaultDirs == nil {
				tt.opt.DefaultDirs = []string{}
			}
			r := inspectOne(t, filepath.Join("testdata", tt.file, "libcusparse.so.12"), tt.opt)
			if len(r.Needs) != 1 || r.Needs[0].Name != "libnvJitLink.so.12" || r.Needs[0].Path != tt.pick || r.Needs[0].Via != tt.via {
				t.Errorf("needs %+v", r.Needs)
			}
			if !tt.undefined {
				if len(r.Undefined) != 0 {
					t.Errorf("undefined %+v", r.Undefined)
				}
				return
			}
			want := Undefined{Symbol: "__nvJitLinkComplete_12_4@libnvJitLink.so.12", By: filepath.Join("testdata", tt.file, "libcusparse.so.12"), Library: "libnvJitLink.so.12", Picked: tt.pick}
			if !slices.Equal(r.Undefined, []Undefined{want}) {
				t.Errorf("undefined %+v, want %+v", r.Undefined, want)
			}
		})
	}
}

func TestAFrameworkThatPreloadsItsLibraryByPathIsNotFooledByLDLibraryPath(t *testing.T) {
	r := inspectOne(t, "testdata/sparse_plain/libcusparse.so.12", Options{
		DefaultDirs: []string{}, LibraryPath: []string{"testdata/jit121"},
		Preload: []string{"testdata/jit124/libnvJitLink.so.12"},
	})
	if len(r.Needs) != 1 || r.Needs[0].Via != "already loaded" || r.Needs[0].Path != "testdata/jit124/libnvJitLink.so.12" || len(r.Undefined) != 0 {
		t.Errorf("needs %+v undefined %+v", r.Needs, r.Undefined)
	}
}

func TestVerdicts(t *testing.T) {
	tests := []struct {
		gpu, driver string
		status      string
		msg         string
	}{
		{"7.5", "580.65.06", "runs", "runs on sm_75: it has sm_75 machine code"},
		{"sm_89", "", "no-kernel", "no kernel image for sm_89: it carries sm_75, sm_90 and compute_90, and no PTX at or below compute_89"},
		{"9.0", "", "runs", "sm_90 machine code"},
		{"7.8", "", "runs", "it has sm_75 machine code"},
		{"10.0", "", "jit", "by JIT-compiling its compute_90 PTX (ISA 9.5, CUDA 13.5)"},
		{"12.0", "570.124.06", "driver", "needs a driver of at least 580 for its CUDA 13 (this one is 570.124.06)"},
		{"6.1", "590.44.01", "no-kernel", "no kernel image for sm_61"},
		{"", "590.44.01", "unknown", "no GPU to judge for"},
	}
	for _, tt := range tests {
		r := inspectOne(t, "testdata/libkernel.so", Options{DefaultDirs: []string{}, GPU: tt.gpu, Driver: tt.driver})
		v := r.Verdict
		if v == nil || v.Status != tt.status || !strings.Contains(v.Message, tt.msg) {
			t.Errorf("--gpu %q --driver %q: %+v, want %s with %q", tt.gpu, tt.driver, v, tt.status, tt.msg)
		}
	}
}

func TestArchitectureRules(t *testing.T) {
	tests := []struct {
		arch string
		gpu  int
		sass bool
		ptx  bool
	}{
		{"sm_80", 86, true, true},
		{"sm_86", 80, false, false},
		{"sm_90", 100, false, true},
		{"sm_90a", 90, true, true},
		{"sm_90a", 100, false, false},
		{"sm_100f", 103, true, true},
		{"sm_100f", 120, false, false},
		{"sm_120", 121, true, true},
	}
	for _, tt := range tests {
		if got := sassRuns(tt.arch, tt.gpu); got != tt.sass {
			t.Errorf("sassRuns(%s, %d) = %v", tt.arch, tt.gpu, got)
		}
		if got := ptxRuns(strings.Replace(tt.arch, "sm_", "compute_", 1), tt.gpu); got != tt.ptx {
			t.Errorf("ptxRuns(%s, %d) = %v", tt.arch, tt.gpu, got)
		}
	}
}

// wheelOf zips files into a wheel, stored or deflated.
func wheelOf(t *testing.T, method uint16, files map[string]string) string {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range files {
			if !yield(k) {
				return
			}
		}
	}) {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: method})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(must(os.ReadFile(files[name])))
	}
	zw.Close()
	p := filepath.Join(t.TempDir(), "demo-1.0-py3-none-manylinux_2_28_x86_64.whl")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestAWheelIsReadInPlaceStoredOrDeflated(t *testing.T) {
	for _, method := range []uint16{zip.Store, zip.Deflate} {
		whl := wheelOf(t, method, map[string]string{
			"demo/lib/libkernel.so":       "testdata/libkernel.so",
			"demo/bin/app":                "testdata/app",
			"demo/lib/libnvJitLink.so.12": "testdata/jit124/libnvJitLink.so.12", // no CUDA need, no GPU code: left out
			"demo/__init__.py":            "testdata/jit.c",
		})
		reps, err := Inspect(context.Background(), []string{whl}, Options{GPU: "8.6"})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range reps {
			name := r.Path[strings.Index(r.Path, "!")+1:]
			var needs []string
			for _, n := range r.Needs {
				needs = append(needs, n.Name)
			}
			got = append(got, name+": "+strings.Join(r.SASS, ",")+" "+strings.Join(ptxWords(r.PTX), ",")+" needs "+strings.Join(needs, ",")+" "+r.Verdict.Status)
		}
		want := []string{
			"demo/bin/app: sm_80,sm_120 compute_120 9.5 13.5 needs libcudart.so.13 runs",
			"demo/lib/libkernel.so: sm_75,sm_90 compute_90 9.5 13.5 needs libcudart.so.13 no-kernel",
		}
		if !slices.Equal(got, want) {
			t.Errorf("method %d:\n%q\nwant\n%q", method, got, want)
		}
	}
}

func TestAFolderIsWalkedAndItsWheelsRead(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "a b", "$x")
	os.MkdirAll(sub, 0o755)
	os.WriteFile(filepath.Join(sub, "libkernel.so"), must(os.ReadFile("testdata/libkernel.so")), 0o644)
	os.WriteFile(filepath.Join(sub, "notes.txt"), []byte("hello"), 0o644)
	os.Symlink(dir, filepath.Join(sub, "loop")) // never followed
	whl := wheelOf(t, zip.Deflate, map[string]string{"w/libkernel.so": "testdata/libkernel.so"})
	os.Rename(whl, filepath.Join(dir, filepath.Base(whl)))
	reps, err := Inspect(context.Background(), []string{dir}, Options{DefaultDirs: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) != 2 || reps[0].Path != filepath.Join(sub, "libkernel.so") || !strings.HasSuffix(reps[1].Path, ".whl!w/libkernel.so") {
		for _, r := range reps {
			t.Log(r.Path)
		}
		t.Errorf("%d reports", len(reps))
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestHostileFilesGiveAClearErrorWithoutPanicking(t *testing.T) {
	good := must(os.ReadFile("testdata/libkernel.so"))
	le := binary.LittleEndian
	mod := func(f func(b []byte)) []byte {
		b := append([]byte{}, good...)
		f(b)
		return b
	}
	shoff := int(le.Uint64(good[0x28:]))
	tests := []struct {
		desc string
		data []byte
	}{
		{"truncated in its headers", good[:100]},
		{"truncated before its sections", good[:len(good)/2]},
		{"65535 section headers", mod(func(b []byte) { le.PutUint16(b[0x3c:], 0xffff) })},
		{"a section of 2^60 bytes", mod(func(b []byte) {
			for i := 1; i < int(le.Uint16(good[0x3c:])); i++ {
				le.PutUint64(b[shoff+i*64+0x20:], 1<<60)
			}
		})},
		{"a string table linked to itself", mod(func(b []byte) {
			for i := 1; i < int(le.Uint16(good[0x3c:])); i++ {
				le.PutUint32(b[shoff+i*64+0x28:], uint32(i))
			}
		})},
		{"not ELF at all", []byte("#!/bin/sh\necho hi\n")},
	}
	dir := t.TempDir()
	for i, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			p := filepath.Join(dir, "lib"+string(rune('a'+i))+".so")
			os.WriteFile(p, tt.data, 0o644)
			reps, err := Inspect(context.Background(), []string{p}, Options{DefaultDirs: []string{}})
			if err == nil {
				// A fault in a part inspect reads without need of the
				// rest is a note, not a failure.
				if len(reps) != 1 {
					t.Fatalf("reports %+v", reps)
				}
				return
			}
			if strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), p) {
				t.Errorf("error %q: want one line naming the file", err)
			}
			// debug/elf's bare "EOF" tells a user nothing.
			if strings.HasSuffix(err.Error(), "EOF") {
				t.Errorf("error %q: want what is wrong with the file", err)
			}
		})
	}
	// A wheel that is not a zip, and one whose member lies about its size.
	bad := filepath.Join(dir, "bad-1.0-py3-none-any.whl")
	os.WriteFile(bad, []byte("PK\x03\x04 not really"), 0o644)
	if _, err := Inspect(context.Background(), []string{bad}, Options{}); err == nil || !strings.Contains(err.Error(), "not a wheel") {
		t.Errorf("bad wheel: %v", err)
	}
}

func FuzzReadObject(f *testing.F) {
	f.Add(must(os.ReadFile("testdata/libkernel.so")))
	f.Add(must(os.ReadFile("testdata/sparse_rpath/libcusparse.so.12")))
	f.Fuzz(func(t *testing.T, b []byte) {
		readObject(bytes.NewReader(b), int64(len(b)), "f", true)
		readSymbols(bytes.NewReader(b), int64(len(b)), func(string) bool { return true })
		streamObject(bytes.NewReader(b), "f", int64(len(b)))
	})
}

func TestADeflatedMemberWhoseStringTableFollowsItsDynamicSectionSaysWhatItNeeds(t *testing.T) {
	defer func(n int64) { maxStreamPrefix = n }(maxStreamPrefix)
	maxStreamPrefix = 4096 // far less than the file: .dynstr must be kept on its own
	whl := wheelOf(t, zip.Deflate, map[string]string{"x/libcusparse.so.12": "testdata/patched/libcusparse.so.12"})
	r := inspectOne(t, whl, Options{})
	if len(r.Needs) != 1 || r.Needs[0].Name != "libnvJitLink.so.12" || r.Kind != "shared object" {
		t.Errorf("%s: %+v", r.Kind, r.Needs)
	}
}

func TestHostileWheelMembersAreNotedWithoutPanicking(t *testing.T) {
	good := must(os.ReadFile("testdata/libkernel.so"))
	var deflated bytes.Buffer
	{
		zw := zip.NewWriter(&deflated)
		w, _ := zw.Create("x")
		w.Write(good)
		zw.Close()
	}
	zr := must(zip.NewReader(bytes.NewReader(deflated.Bytes()), int64(deflated.Len())))
	raw := must(io.ReadAll(must(zr.File[0].OpenRaw())))
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	add := func(name string, method uint16, size uint64, data []byte) {
		w, err := zw.CreateRaw(&zip.FileHeader{Name: name, Method: method, UncompressedSize64: size, CompressedSize64: uint64(len(data)), CRC32: 0})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
	}
	add("a/libhuge.so", zip.Deflate, 1<<40, raw)                         // claims a TiB
	add("a/libcut.so", zip.Deflate, uint64(len(good)), raw[:len(raw)/2]) // truncated stream
	add("a/libstored.so", zip.Store, uint64(len(good)), good[:len(good)/3])
	zw.Close()
	p := filepath.Join(t.TempDir(), "bad-1.0-py3-none-manylinux_2_28_x86_64.whl")
	os.WriteFile(p, buf.Bytes(), 0o644)
	reps, err := Inspect(context.Background(), []string{p}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reps {
		if r.Kind == "unreadable" && (len(r.Notes) != 1 || strings.Contains(r.Notes[0], "\n")) {
			t.Errorf("%s: notes %q", r.Path, r.Notes)
		}
	}
	if len(reps) == 0 {
		t.Error("no report: the faults were not said")
	}
}

func TestADeflatedMemberWhoseSectionNamesPassedBeforeTheirHeadersIsRead(t *testing.T) {
	defer func(n, m int64) { maxStreamTail, maxStreamPrefix = n, m }(maxStreamTail, maxStreamPrefix)
	// As when a .symtab lies between .shstrtab and the headers (lld): the
	// start (with .dynstr) is kept, .shstrtab (at 0x50df) is not.
	maxStreamTail, maxStreamPrefix = 0, 0x1000
	whl := wheelOf(t, zip.Deflate, map[string]string{"x/libkernel.so": "testdata/libkernel.so"})
	r := inspectOne(t, whl, Options{})
	if r.Kind != "shared object" || len(r.Needs) != 1 || r.Needs[0].Name != "libcudart.so.13" || !slices.Equal(r.SASS, []string{"sm_75", "sm_90"}) {
		t.Errorf("%s: needs %+v sass %v", r.Kind, r.Needs, r.SASS)
	}
}

func TestTheVerdictNamesTheClosestPortableMachineCode(t *testing.T) {
	rep := Report{SASS: []string{"sm_80", "sm_86", "sm_90", "sm_90a"}}
	for gpu, want := range map[string]string{"8.9": "sm_86", "9.0": "sm_90", "8.6": "sm_86"} {
		if v := Judge(rep, gpu, "", "linux"); v.Status != "runs" || !strings.Contains(v.Message, "it has "+want+" machine code") {
			t.Errorf("%s: %+v", gpu, v)
		}
	}
}

func TestTheCUDAMajorComesFromSonamesThatFollowIt(t *testing.T) {
	for _, tt := range []struct {
		needs []string
		ptx   string
		want  int
	}{
		{[]string{"libcusparse.so.12", "libcublas.so.13"}, "", 13}, // CUDA 13's cuSPARSE is .so.12
		{[]string{"libcusparse.so.12", "libcufft.so.12"}, "", 0},
		{[]string{"libcudart.so.12"}, "9.0", 12},
		{nil, "8.4", 12},
	} {
		rep := Report{}
		for _, n := range tt.needs {
			rep.Needs = append(rep.Needs, Need{Name: n})
		}
		if tt.ptx != "" {
			built, _ := compat.PTXBuiltWith(tt.ptx)
			rep.PTX = []PTX{{Arch: "compute_80", ISA: tt.ptx, BuiltWith: built}}
		}
		if got := cudaMajor(rep); got != tt.want {
			t.Errorf("%v %s: %d, want %d", tt.needs, tt.ptx, got, tt.want)
		}
	}
}

func TestInspectReturnsWhenItsContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Inspect(ctx, []string{"testdata"}, Options{}); err == nil || !strings.Contains(err.Error(), "not done in time") && !strings.Contains(err.Error(), "canceled") {
		t.Errorf("err = %v", err)
	}
}
