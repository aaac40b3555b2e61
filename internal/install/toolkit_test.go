package install

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cudaenv/cudaenv/fetch/pypi"
	"github.com/cudaenv/cudaenv/fetch/pypi/pypitest"
	"github.com/cudaenv/cudaenv/internal/lockfile"
	"github.com/cudaenv/cudaenv/internal/version"
	"github.com/cudaenv/cudaenv/store"
)

// toolkitOptions: an index with CUDA 13.4.2 (in the table) and 13.5.0
// (not), the cuda-toolkit meta-package of 13.5.0 and a pre-release of
// 13.6.0, and a cuBLAS newer than the one 13.5.0's meta-package pins.
func toolkitOptions(meta ...pypitest.FrameworkWheel) []pypitest.Option {
	rc := cuda135
	rc.Version = "13.6.0"
	if meta == nil {
		meta = []pypitest.FrameworkWheel{pypitest.ToolkitWheel(cuda135, "13.5.0"), pypitest.ToolkitWheel(rc, "13.6.0rc1")}
	}
	return []pypitest.Option{
		pypitest.Releases("13.4.2"), pypitest.ExtraRelease(cuda135),
		pypitest.ExtraRelease(pypi.Release{Version: "13.5.9", Components: []pypi.Component{{ID: "libcublas", Version: "13.11.0.1"}}}),
		pypitest.Frameworks(meta...),
		pypitest.Sdist(pypi.ToolkitProject, "13.7.0"),
	}
}

// A release the table lacks is named and pinned by the index's
// cuda-toolkit meta-package: 13.5.0, with the cuBLAS it pins rather than
// the newest on the index; a lock of it is held to those pins.
func TestPyPIInstallsAReleaseAsItsMetaPackagePinsIt(t *testing.T) {
	w, in := pypiWorld(t, toolkitOptions()...)
	ctx := context.Background()
	res, err := in.Install(ctx, Request{Args: []string{"13"}, Source: "pypi"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Label != "CUDA 13.5.0" || res[0].Entry.Name != "13.5.0" || res[0].Entry.Receipt.Version != "13.5.0" {
		t.Fatalf("results = %+v", res)
	}
	got := map[string]string{}
	for _, c := range res[0].Entry.Receipt.Components {
		got[c.ID] = c.Version
	}
	if got["libcublas"] != "13.10.0.20" || got["cuda_nvcc"] != "13.5.37" || len(got) != 6 {
		t.Errorf("components = %v, want the meta-package's pins", got)
	}
	var notes []UnlistedRelease
	for _, e := range w.rec.events {
		if u, ok := e.(UnlistedRelease); ok {
			notes = append(notes, u)
		}
	}
	if len(notes) != 1 || notes[0].Release != "13.5.0" || notes[0].Note != "not in cudaenv's table: its wheels as the index's cuda-toolkit 13.5.0 pins them" {
		t.Errorf("notes = %+v", notes)
	}
	listed, err := in.Releases(ctx, version.CUDA, nil, "pypi")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range listed {
		names = append(names, r.Release)
	}
	if strings.Join(names, " ") != "13.4.2 13.5.0" {
		t.Errorf("ls-remote lists %v, want each release once, by its full version", names)
	}

	// A lock of 13.5.0 whose cuBLAS is another (real) wheel is refused
	// before anything is fetched.
	dir := project(t, "13.5")
	if _, err := in.Lock(ctx, LockRequest{Here: Here{Dir: dir}, Source: "pypi"}); err != nil {
		t.Fatal(err)
	}
	lk, _ := readLockFile(t, dir)
	if lk.CUDA == nil || lk.CUDA.Release != "13.5.0" {
		t.Fatalf("lock: %+v", lk.CUDA)
	}
	if f := fileOf(lk, lk.CUDA, "linux-x86_64", "libcublas"); f.Version != "13.10.0.20" {
		t.Fatalf("locked cuBLAS = %+v", f)
	}
	newer := ""
	var wh pypitest.Wheel
	ix := pypitest.New(t, toolkitOptions()...)
	for _, x := range ix.Wheels("nvidia-cublas") {
		if x.Version == "13.11.0.1" && x.Platform == "linux-x86_64" {
			wh, newer = x, x.Filename
		}
	}
	if newer == "" {
		t.Fatal("no newer cuBLAS on the test index")
	}
	editLock(t, dir, lk, "linux-x86_64", "libcublas", func(f *lockfile.File) {
		f.Name, f.SHA256, f.Size, f.Version = wh.Filename, wh.SHA256, int64(len(wh.Data)), wh.Version
	})
	fin, st, _ := w.fresh(t, func(o *Options) { o.PyPIIndex = in.opts.PyPIIndex })
	_, err = fin.Install(ctx, Request{Here: Here{Dir: dir}, Locked: true})
	if want := lockfile.FileName + ": libcublas: version 13.11.0.1 is not the one of CUDA 13.5.0 (13.10.0.20)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want %q", err, want)
	}
	if _, ok := st.Get(store.CUDA, "13.5.0"); ok {
		t.Error("installed")
	}
}

// A meta-package that pins someone else's project makes the listing fail
// with the reason, and nothing is installed.
func TestPyPIRefusesAHostileMetaPackage(t *testing.T) {
	evil := pypitest.ToolkitWheel(cuda135, "13.5.0")
	evil.Requires = append(evil.Requires, "nvidia-cuda-nvcc-helper-by-anyone==1.0; extra == 'all'", "evil-toolchain==1.0; extra == 'all'")
	w, in := pypiWorld(t, toolkitOptions(evil)...)
	_, err := in.Install(context.Background(), Request{Args: []string{"13"}, Source: "pypi"})
	if err == nil || !strings.Contains(err.Error(), `cuda-toolkit 13.5.0 (cuda_toolkit-13.5.0-py2.py3-none-any.whl): its "all" extra requires "evil-toolchain", which is not an NVIDIA wheel`) {
		t.Fatalf("err = %v", err)
	}
	if list, _ := w.store.List(store.CUDA); len(list) != 0 {
		t.Errorf("installed %+v", list)
	}
	if files := cacheFiles(t, filepath.Join(w.cache, "pypi")); len(files) != 0 {
		t.Errorf("downloaded %v", files)
	}
}
