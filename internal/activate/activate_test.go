package activate

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cudaenv/cudaenv/internal/dirs"
	"github.com/cudaenv/cudaenv/internal/resolve"
	"github.com/cudaenv/cudaenv/internal/version"
	"github.com/cudaenv/cudaenv/store"
)

func newStore(t *testing.T) *store.Store {
	root := t.TempDir()
	return store.New(dirs.Dirs{Root: root, Config: filepath.Join(root, "cfg"), Cache: filepath.Join(root, "cache")})
}

func install(t *testing.T, st *store.Store, k store.Kind, name string, files ...string) {
	t.Helper()
	if _, err := st.Install(k, name, func(stage string) (store.Receipt, error) {
		for _, f := range files {
			p := filepath.Join(stage, f)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return store.Receipt{}, err
			}
			if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
				return store.Receipt{}, err
			}
		}
		return store.Receipt{Source: "test"}, nil
	}); err != nil {
		t.Fatal(err)
	}
}

func specs(t *testing.T, text string) resolve.Selection {
	s, err := resolve.Parse("test", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return resolve.Selection{Specs: s, Source: resolve.Source{Kind: resolve.FromFile, Path: "/p/.cuda-version"}}
}

func TestWantSetsWhatEachPlatformNeeds(t *testing.T) {
	root := filepath.Join(t.TempDir(), "s")
	writeTestTree(t, root, map[string]string{
		"cuda/12.4.1/bin/nvcc":                    "",
		"cuda/12.4.1/bin/nvcc.exe":                "",
		"cuda/13.0.0/bin/nvcc.exe":                "",
		"cuda/13.0.0/bin/x64/cudart64_13.dll":     "",
		"cuda/12.4.2/bin/ptxas":                   "",
		"cuda/12.4.2/lib/libcublas.so.12":         "",
		"cuda/12.4.3/lib/libcudart.so.12":         "",
		"cuda/12.4.4/lib/libcudart.so.12":         "",
		"cuda/12.4.4/lib/stubs/libcuda.so":        "",
		"cuda/11.8.0/lib64/libcudart.so.11":       "",
		"cuda/11.8.0/lib64/stubs/libcuda.so":      "",
		"cudnn/9.5.1.17-cuda12/lib/libcudnn.so.9": "",
	})
	p := func(rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }
	t124 := &store.Entry{Version: version.MustParse("12.4.1"), Path: p("cuda/12.4.1")}
	t130 := &store.Entry{Version: version.MustParse("13.0.0"), Path: p("cuda/13.0.0")}
	libsWithBin := &store.Entry{Version: version.MustParse("12.4.2"), Path: p("cuda/12.4.2")}
	libsOnly := &store.Entry{Version: version.MustParse("12.4.3"), Path: p("cuda/12.4.3")}
	withStubs := &store.Entry{Version: version.MustParse("12.4.4"), Path: p("cuda/12.4.4")}
	installerStubs := &store.Entry{Version: version.MustParse("11.8.0"), Path: p("cuda/11.8.0")}
	d := &store.Entry{Kind: store.Cudnn, Version: version.MustParse("9.5.1.17"), CUDAMajor: 12, Path: p("cudnn/9.5.1.17-cuda12")}
	tests := []struct {
		desc    string
		r       Resolved
		goos    string
		prepend map[string][]string
		set     map[string]string
	}{
		{
			desc: "linux CUDA with cuDNN adds bin, the lib dirs, cuDNN's include and the scalars",
			r:    Resolved{CUDA: t124, Cudnn: d}, goos: "linux",
			prepend: map[string][]string{
				"PATH":            {p("cuda/12.4.1/bin")},
				"LD_LIBRARY_PATH": {p("cuda/12.4.1/lib"), p("cudnn/9.5.1.17-cuda12/lib")},
				"LIBRARY_PATH":    {p("cudnn/9.5.1.17-cuda12/lib")},
				"CPATH":           {p("cudnn/9.5.1.17-cuda12/include")},
			},
			set: map[string]string{
				"CUDA_HOME": p("cuda/12.4.1"), "CUDAToolkit_ROOT": p("cuda/12.4.1"), "CUDA_PATH": p("cuda/12.4.1"),
				"CUDACXX": p("cuda/12.4.1/bin/nvcc"), "CUDNN_PATH": p("cudnn/9.5.1.17-cuda12"),
			},
		},
		{
			desc: "libraries=off leaves LD_LIBRARY_PATH alone and sets everything a build needs",
			r:    Resolved{CUDA: t124, Cudnn: d, Selection: resolve.Selection{Options: resolve.Options{NoLibraries: true}}}, goos: "linux",
			prepend: map[string][]string{
				"PATH":         {p("cuda/12.4.1/bin")},
				"LIBRARY_PATH": {p("cudnn/9.5.1.17-cuda12/lib")},
				"CPATH":        {p("cudnn/9.5.1.17-cuda12/include")},
			},
			set: map[string]string{
				"CUDA_HOME": p("cuda/12.4.1"), "CUDAToolkit_ROOT": p("cuda/12.4.1"), "CUDA_PATH": p("cuda/12.4.1"),
				"CUDACXX": p("cuda/12.4.1/bin/nvcc"), "CUDNN_PATH": p("cudnn/9.5.1.17-cuda12"),
			},
		},
		{
			desc: "libraries only with a bin (ptxas) gets bin on PATH but no CUDACXX",
			r:    Resolved{CUDA: libsWithBin}, goos: "linux",
			prepend: map[string][]string{"PATH": {p("cuda/12.4.2/bin")}, "LD_LIBRARY_PATH": {p("cuda/12.4.2/lib")}},
			set:     map[string]string{"CUDA_HOME": p("cuda/12.4.2"), "CUDAToolkit_ROOT": p("cuda/12.4.2"), "CUDA_PATH": p("cuda/12.4.2")},
		},
		{
			desc: "libraries only without bin gets neither",
			r:    Resolved{CUDA: libsOnly}, goos: "linux",
			prepend: map[string][]string{"LD_LIBRARY_PATH": {p("cuda/12.4.3/lib")}},
			set:     map[string]string{"CUDA_HOME": p("cuda/12.4.3"), "CUDAToolkit_ROOT": p("cuda/12.4.3"), "CUDA_PATH": p("cuda/12.4.3")},
		},
		{
			desc: "link stubs go on the link path, never on the loader's",
			r:    Resolved{CUDA: withStubs}, goos: "linux",
			prepend: map[string][]string{"LD_LIBRARY_PATH": {p("cuda/12.4.4/lib")}, "LIBRARY_PATH": {p("cuda/12.4.4/lib/stubs")}},
			set:     map[string]string{"CUDA_HOME": p("cuda/12.4.4"), "CUDAToolkit_ROOT": p("cuda/12.4.4"), "CUDA_PATH": p("cuda/12.4.4")},
		},
		{
			desc: "an installer's lib64/stubs too",
			r:    Resolved{CUDA: installerStubs}, goos: "linux",
			prepend: map[string][]string{"LD_LIBRARY_PATH": {p("cuda/11.8.0/lib64")}, "LIBRARY_PATH": {p("cuda/11.8.0/lib64/stubs")}},
			set:     map[string]string{"CUDA_HOME": p("cuda/11.8.0"), "CUDAToolkit_ROOT": p("cuda/11.8.0"), "CUDA_PATH": p("cuda/11.8.0")},
		},
		{
			desc: "windows CUDA 13 adds bin and bin/x64 and the versioned CUDA_PATH",
			r:    Resolved{CUDA: t130}, goos: "windows",
			prepend: map[string][]string{"PATH": {p("cuda/13.0.0/bin"), p("cuda/13.0.0/bin/x64")}},
			set: map[string]string{
				"CUDA_HOME": p("cuda/13.0.0"), "CUDAToolkit_ROOT": p("cuda/13.0.0"), "CUDA_PATH": p("cuda/13.0.0"), "CUDA_PATH_V13_0": p("cuda/13.0.0"),
				"CUDACXX": p("cuda/13.0.0/bin/nvcc.exe"),
			},
		},
		{
			desc: "windows CUDA 12 adds bin only",
			r:    Resolved{CUDA: t124}, goos: "windows",
			prepend: map[string][]string{"PATH": {p("cuda/12.4.1/bin")}},
			set: map[string]string{
				"CUDA_HOME": p("cuda/12.4.1"), "CUDAToolkit_ROOT": p("cuda/12.4.1"), "CUDA_PATH": p("cuda/12.4.1"), "CUDA_PATH_V12_4": p("cuda/12.4.1"),
				"CUDACXX": p("cuda/12.4.1/bin/nvcc.exe"),
			},
		},
		{
			desc: "windows libraries only gets no CUDACXX",
			r:    Resolved{CUDA: libsOnly}, goos: "windows",
			prepend: map[string][]string{},
			set:     map[string]string{"CUDA_HOME": p("cuda/12.4.3"), "CUDAToolkit_ROOT": p("cuda/12.4.3"), "CUDA_PATH": p("cuda/12.4.3"), "CUDA_PATH_V12_4": p("cuda/12.4.3")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			w := Want(tt.r, tt.goos)
			if !reflect.DeepEqual(w.Prepend, tt.prepend) {
				t.Errorf("prepend = %v\nwant      %v", w.Prepend, tt.prepend)
			}
			if !reflect.DeepEqual(w.Set, tt.set) {
				t.Errorf("set = %v\nwant  %v", w.Set, tt.set)
			}
			for name, dirs := range w.Prepend {
				for _, d := range dirs {
					if strings.Contains(d, "stubs") && name != "LIBRARY_PATH" {
						t.Errorf("stubs added to %s: %s (they belong on the link path only)", name, d)
					}
				}
			}
		})
	}
}

func TestResolvePicksTheNewestMatchAndExplainsMisses(t *testing.T) {
	st := newStore(t)
	install(t, st, store.CUDA, "12.4.0")
	install(t, st, store.CUDA, "12.4.1", "lib64/libcudart.so.12")
	install(t, st, store.Cudnn, "9.5.1.17-cuda11")
	install(t, st, store.Cudnn, "9.5.1.17-cuda12")

	r, err := Resolve(st, specs(t, "12.4 cudnn@9.5"))
	if err != nil {
		t.Fatal(err)
	}
	if r.CUDA.Name != "12.4.1" || r.Cudnn.Name != "9.5.1.17-cuda12" || r.Label() != "12.4.1 cudnn@9.5.1.17" {
		t.Errorf("resolved %+v", r.Label())
	}
	if got := Want(r, "linux").Prepend["LD_LIBRARY_PATH"][0]; got != filepath.Join(r.CUDA.Path, "lib64") {
		t.Errorf("lib dir = %s, want lib64 when it exists", got)
	}

	_, err = Resolve(st, specs(t, "11.8"))
	want := "CUDA 11.8 (selected by /p/.cuda-version) is not installed; installed: 12.4.0, 12.4.1; run: cudaenv install 11.8"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant  %s", err, want)
	}
	_, err = Resolve(st, specs(t, "12.4 cudnn@9.6"))
	want = "cuDNN 9.6 for CUDA 12 (selected by /p/.cuda-version) is not installed; installed: 9.5.1.17 for CUDA 11, 9.5.1.17 for CUDA 12; run: cudaenv install cudnn@9.6 --cuda-major 12"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant  %s", err, want)
	}
	if r, err := Resolve(st, specs(t, "system")); err != nil || r.CUDA != nil {
		t.Errorf("system resolved to %+v, %v", r, err)
	}
}

func TestWhichNamesTheVersionsThatHaveACommand(t *testing.T) {
	st := newStore(t)
	install(t, st, store.CUDA, "11.8.0", "bin/nvcc", "bin/nvprof")
	install(t, st, store.CUDA, "12.4.1", "bin/nvcc")
	r, _ := Resolve(st, specs(t, "12.4"))
	p, err := Which(st, r, "nvcc", "linux")
	if err != nil || p != filepath.Join(r.CUDA.Path, "bin", "nvcc") {
		t.Errorf("which nvcc = %s, %v", p, err)
	}
	_, err = Which(st, r, "nvprof", "linux")
	want := "nvprof: not in CUDA 12.4.1 (selected by /p/.cuda-version); it is in 11.8.0"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant  %s", err, want)
	}
}

func TestComputeActivatesASystemStoreVersionAndWatchesItsFolders(t *testing.T) {
	base := t.TempDir()
	d := dirs.Dirs{Root: filepath.Join(base, "user"), Config: filepath.Join(base, "cfg"), Cache: filepath.Join(base, "cache"), System: filepath.Join(base, "sys tem")}
	admin, err := store.NewSystem(d)
	if err != nil {
		t.Fatal(err)
	}
	install(t, admin, store.CUDA, "12.4.1", "bin/nvcc")
	install(t, admin, store.Cudnn, "9.5.1.17-cuda12")
	out := Compute(Input{Dir: base, Env: map[string]string{"CUDAENV_VERSION": "12.4", "PATH": "/usr/bin"}, Dirs: d, GOOS: "linux"})
	if out.Err != nil {
		t.Fatal(out.Err)
	}
	if c := out.Resolved.CUDA; c == nil || !c.System || c.Path != filepath.Join(d.System, "cuda", "12.4.1") {
		t.Fatalf("resolved %+v", out.Resolved.CUDA)
	}

	// Each watched folder costs the idle prompt a test: only the kind
	// folders of the tools the selection names are watched, in both stores.
	user, sys := filepath.Join(d.Root, "cuda"), filepath.Join(d.System, "cuda")
	userDNN, sysDNN := filepath.Join(d.Root, "cudnn"), filepath.Join(d.System, "cudnn")
	tests := []struct {
		selection string
		want      []string
	}{
		{"12.4", []string{user, sys}},
		{"12.4 cudnn@9.5", []string{user, sys, userDNN, sysDNN}},
		{"cudnn@9.5", []string{userDNN, sysDNN}},
		{"13.0", []string{user, sys}}, // not installed: an install must be seen
		{"system", nil},
	}
	for _, tt := range tests {
		out := Compute(Input{Dir: base, Env: map[string]string{"CUDAENV_VERSION": tt.selection}, Dirs: d, GOOS: "linux"})
		var got []string
		for _, f := range out.Watch.Files {
			if strings.HasPrefix(f.Path, d.Root) || strings.HasPrefix(f.Path, d.System) {
				got = append(got, f.Path)
			}
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: watched %q, want %q", tt.selection, got, tt.want)
		}
	}
}
