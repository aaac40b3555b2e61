package detect

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestCompilers(t *testing.T) {
	files := map[string]string{
		"usr/bin/gcc*": "", "usr/bin/g++*": "", "usr/bin/g++-12*": "", "usr/bin/gcc-12*": "",
		"usr/bin/clang++-18*": "", "usr/bin/ls*": "", "usr/bin/g++-notes.txt": "",
		"opt/gcc-11/bin/g++*": "",
	}
	answers := map[string]result{
		"/usr/bin/gcc -dumpfullversion -dumpversion":        {out: "14.2.0\n"},
		"/usr/bin/g++ -dumpfullversion -dumpversion":        {out: "14.2.0\n"},
		"/usr/bin/g++-12 -dumpfullversion -dumpversion":     {out: "12.3.0\n"},
		"/usr/bin/gcc-12 -dumpfullversion -dumpversion":     {out: "12.3.0\n"},
		"/usr/bin/clang++-18 -dumpversion":                  {out: "18.1.3\n"},
		"/opt/gcc-11/bin/g++ -dumpfullversion -dumpversion": {out: "11.4.0\n"},
	}
	tests := []struct {
		name string
		env  map[string]string
		want []Compiler
	}{
		{
			name: "the g++ on PATH is the active one and every variant is listed",
			env:  map[string]string{"PATH": "/usr/bin"},
			want: []Compiler{
				{Kind: "clang", Path: "/usr/bin/clang++-18", Version: "18.1.3", Via: "PATH"},
				{Kind: "gcc", Path: "/usr/bin/g++", Version: "14.2.0", Via: "PATH", Active: true},
				{Kind: "gcc", Path: "/usr/bin/g++-12", Version: "12.3.0", Via: "PATH"},
				{Kind: "gcc", Path: "/usr/bin/gcc", Version: "14.2.0", Via: "PATH"},
				{Kind: "gcc", Path: "/usr/bin/gcc-12", Version: "12.3.0", Via: "PATH"},
			},
		},
		{
			name: "NVCC_CCBIN names the active compiler",
			env:  map[string]string{"PATH": "/usr/bin", "NVCC_CCBIN": "/usr/bin/g++-12"},
			want: []Compiler{
				{Kind: "gcc", Path: "/usr/bin/g++-12", Version: "12.3.0", Via: "NVCC_CCBIN", Active: true},
				{Kind: "clang", Path: "/usr/bin/clang++-18", Version: "18.1.3", Via: "PATH"},
				{Kind: "gcc", Path: "/usr/bin/g++", Version: "14.2.0", Via: "PATH"},
				{Kind: "gcc", Path: "/usr/bin/gcc", Version: "14.2.0", Via: "PATH"},
				{Kind: "gcc", Path: "/usr/bin/gcc-12", Version: "12.3.0", Via: "PATH"},
			},
		},
		{
			name: "CUDAHOSTCXX may name a directory holding g++",
			env:  map[string]string{"PATH": "/nowhere", "CUDAHOSTCXX": "/opt/gcc-11/bin"},
			want: []Compiler{{Kind: "gcc", Path: "/opt/gcc-11/bin/g++", Version: "11.4.0", Via: "CUDAHOSTCXX", Active: true}},
		},
		{
			name: "NVCC_CCBIN may be a bare name looked up on PATH",
			env:  map[string]string{"PATH": "/usr/bin", "NVCC_CCBIN": "clang++-18"},
			want: []Compiler{
				{Kind: "clang", Path: "/usr/bin/clang++-18", Version: "18.1.3", Via: "NVCC_CCBIN", Active: true},
				{Kind: "gcc", Path: "/usr/bin/g++", Version: "14.2.0", Via: "PATH"},
				{Kind: "gcc", Path: "/usr/bin/g++-12", Version: "12.3.0", Via: "PATH"},
				{Kind: "gcc", Path: "/usr/bin/gcc", Version: "14.2.0", Via: "PATH"},
				{Kind: "gcc", Path: "/usr/bin/gcc-12", Version: "12.3.0", Via: "PATH"},
			},
		},
		{
			name: "no compiler at all is an empty list",
			env:  map[string]string{"PATH": "/nowhere"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeRunner{answers: answers}
			h := Host{Root: fakeRoot(t, files), Env: tt.env, Run: f.run}
			if got := h.Compilers(context.Background()); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Compilers() =\n %+v\nwant\n %+v", got, tt.want)
			}
		})
	}
}

func TestCompilerWithoutRunnerHasNoVersion(t *testing.T) {
	h := Host{Root: fakeRoot(t, map[string]string{"usr/bin/g++*": ""}), Env: map[string]string{"PATH": "/usr/bin"}}
	got := h.Compilers(context.Background())
	if len(got) != 1 || got[0].Version != "" || !got[0].Active {
		t.Errorf("Compilers() = %+v", got)
	}
}

// Names of one program (g++ and its versioned link, /bin as a link to
// /usr/bin) are each listed, but the program is asked its version once
// (issue #36: 16 runs of the same two compilers made doctor slow).
func TestCompilersAskEachProgramOnce(t *testing.T) {
	root := t.TempDir()
	usr := filepath.Join(root, "usr", "bin")
	os.MkdirAll(usr, 0o755)
	os.WriteFile(filepath.Join(usr, "g++-12"), nil, 0o755)
	os.WriteFile(filepath.Join(usr, "gcc-12"), nil, 0o755)
	os.Symlink("g++-12", filepath.Join(usr, "g++"))
	os.Symlink("gcc-12", filepath.Join(usr, "gcc"))
	os.Symlink(filepath.Join("usr", "bin"), filepath.Join(root, "bin"))
	f := &fakeRunner{answers: map[string]result{
		"/usr/bin/g++ -dumpfullversion -dumpversion": {out: "12.2.0\n"},
		"/usr/bin/gcc -dumpfullversion -dumpversion": {out: "12.2.0\n"},
	}}
	h := Host{Root: root, Env: map[string]string{"PATH": "/usr/bin:/bin"}, Run: f.run}
	got := h.Compilers(context.Background())
	if len(got) != 8 {
		t.Fatalf("listed %+v; want the 4 names in each of 2 folders", got)
	}
	for _, c := range got {
		if c.Version != "12.2.0" {
			t.Errorf("%s: version %q", c.Path, c.Version)
		}
	}
	if len(f.ran) != 2 {
		t.Errorf("ran %q; want each program asked once", f.ran)
	}
}
