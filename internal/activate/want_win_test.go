package activate

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/cudaenv/cudaenv/internal/envdiff"
	"github.com/cudaenv/cudaenv/internal/version"
	"github.com/cudaenv/cudaenv/store"
)

// Activation on Windows: PATH gets bin (and bin\x64 from CUDA 13 on),
// CUDA_PATH_V<major>_<minor> is set as NVIDIA's installer does, lists are
// separated by ';', and nothing touches LD_LIBRARY_PATH.
func TestWantWindows(t *testing.T) {
	root := t.TempDir()
	writeTestTree(t, root, map[string]string{
		"cudnn/bin/x64/cudnn64_9.dll":         "",
		"cuda/12.4.1/bin/nvcc.exe":            "",
		"cuda/13.0.2/bin/nvcc.exe":            "",
		"cuda/13.0.2/bin/x64/cudart64_13.dll": "",
	})
	p12 := filepath.Join(root, "cuda", "12.4.1")
	p13 := filepath.Join(root, "cuda", "13.0.2")
	cudnn := filepath.Join(root, "cudnn")
	for _, c := range []struct {
		name string
		r    Resolved
		want envdiff.Want
	}{
		{"12.x", Resolved{CUDA: &store.Entry{Kind: store.CUDA, Version: version.MustParse("12.4.1"), Path: p12}}, envdiff.Want{
			Prepend: map[string][]string{"PATH": {filepath.Join(p12, "bin")}},
			Set: map[string]string{"CUDA_PATH": p12, "CUDA_HOME": p12, "CUDAToolkit_ROOT": p12, "CUDA_PATH_V12_4": p12,
				"CUDACXX": filepath.Join(p12, "bin", "nvcc.exe")},
			Active: "12.4.1",
		}},
		{"13.x with cuDNN", Resolved{
			CUDA:  &store.Entry{Kind: store.CUDA, Version: version.MustParse("13.0.2"), Path: p13},
			Cudnn: &store.Entry{Kind: store.Cudnn, Version: version.MustParse("9.5.1.17"), CUDAMajor: 13, Path: cudnn},
		}, envdiff.Want{
			Prepend: map[string][]string{"PATH": {filepath.Join(p13, "bin"), filepath.Join(p13, "bin", "x64"),
				filepath.Join(cudnn, "bin"), filepath.Join(cudnn, "bin", "x64")}},
			Set: map[string]string{"CUDA_PATH": p13, "CUDA_HOME": p13, "CUDAToolkit_ROOT": p13, "CUDA_PATH_V13_0": p13,
				"CUDACXX": filepath.Join(p13, "bin", "nvcc.exe"), "CUDNN_PATH": cudnn},
			Active: "13.0.2 cudnn@9.5.1.17",
		}},
	} {
		got := Want(c.r, "windows")
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, got, c.want)
		}
	}

	// Applied, with ';' between entries and the user's PATH kept after.
	w := Want(Resolved{CUDA: &store.Entry{Kind: store.CUDA, Version: version.MustParse("13.0.2"), Path: p13}}, "windows")
	env := envdiff.Env{"PATH": `C:\Windows;C:\Tools`, "CUDA_PATH": `C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.4`}
	out := envdiff.Result(env, Changes(env, w, "windows"))
	if want := filepath.Join(p13, "bin") + ";" + filepath.Join(p13, "bin", "x64") + `;C:\Windows;C:\Tools`; out["PATH"] != want {
		t.Errorf("PATH = %q, want %q", out["PATH"], want)
	}
	if _, ok := out["LD_LIBRARY_PATH"]; ok {
		t.Error("LD_LIBRARY_PATH set on Windows")
	}
	// Switching away gives the user's CUDA_PATH back and drops the V13_0 one.
	back := envdiff.Result(out, Changes(out, envdiff.Want{}, "windows"))
	if back["PATH"] != env["PATH"] || back["CUDA_PATH"] != env["CUDA_PATH"] || back["CUDA_PATH_V13_0"] != "" || len(back) != len(env) {
		t.Errorf("after reverting: %v", back)
	}
}

// Every variable Want sets is one a state may name (envdiff.Decode refuses
// the others), and the state it leads to decodes.
func TestWantSetsOnlyVariablesTheStateAccepts(t *testing.T) {
	root := t.TempDir()
	writeTestTree(t, root, map[string]string{"cuda/lib64/libcudart.so": "", "cudnn/bin/x64/cudnn64_9.dll": ""})
	r := Resolved{
		CUDA:  &store.Entry{Kind: store.CUDA, Version: version.MustParse("13.0.2"), Path: filepath.Join(root, "cuda")},
		Cudnn: &store.Entry{Kind: store.Cudnn, Version: version.MustParse("9.5.1.17"), CUDAMajor: 13, Path: filepath.Join(root, "cudnn")},
	}
	for _, goos := range []string{"linux", "windows"} {
		w := Want(r, goos)
		for name := range w.Prepend {
			if !envdiff.ManagedList(name) {
				t.Errorf("%s: list %s is not one envdiff manages", goos, name)
			}
		}
		for name := range w.Set {
			if !envdiff.ManagedScalar(name) {
				t.Errorf("%s: %s is not one envdiff manages", goos, name)
			}
		}
		changes, _ := envdiff.Apply(envdiff.Env{"PATH": "/usr/bin"}, envdiff.State{}, w, ListSep(goos))
		env := envdiff.Result(envdiff.Env{"PATH": "/usr/bin"}, changes)
		if _, err := envdiff.Decode(env[envdiff.StateVar]); err != nil {
			t.Errorf("%s: the state does not decode: %v", goos, err)
		}
	}
}
