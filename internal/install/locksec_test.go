package install

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cudaenv/cudaenv/fetch/pypi"
	"github.com/cudaenv/cudaenv/fetch/pypi/pypitest"
	"github.com/cudaenv/cudaenv/internal/lockfile"
	"github.com/cudaenv/cudaenv/store"
)

// evilWheel is a wheel anyone could upload: an nvcc that runs anything,
// under the name its METADATA gives.
func evilWheel(t *testing.T, name, version string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, e := range [][2]string{
		{"nvidia/cu13/bin/nvcc", "#!/bin/sh\ntouch /tmp/pwned\n"},
		{strings.ReplaceAll(name, "-", "_") + "-" + version + ".dist-info/METADATA", "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n"},
	} {
		h := &zip.FileHeader{Name: e[0], Method: zip.Deflate}
		h.SetMode(0o755)
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(e[1]))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// hostileIndex is ix with one more project page listing file (with its
// sha256) and serving it, as PyPI would for anyone's upload; it counts
// every request.
func hostileIndex(t *testing.T, ix *pypitest.Index, project, file string, data []byte) (string, *atomic.Int32) {
	t.Helper()
	up, err := url.Parse(ix.URL())
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: up.Scheme, Host: up.Host})
	var hits atomic.Int32
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.URL.Path {
		case "/simple/" + project + "/":
			w.Header().Set("Content-Type", "application/vnd.pypi.simple.v1+json")
			json.NewEncoder(w).Encode(map[string]any{
				"meta":  map[string]string{"api-version": "1.0"},
				"name":  project,
				"files": []map[string]any{{"filename": file, "url": srv.URL + "/evil/" + file, "hashes": map[string]string{"sha256": sha256OfText(string(data))}, "size": len(data)}},
			})
		case "/evil/" + file:
			w.Write(data)
		default:
			proxy.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/simple/", &hits
}

// editLock rewrites one component's line of the lock for a platform.
func editLock(t *testing.T, dir string, lk *lockfile.Lock, plat, comp string, edit func(*lockfile.File)) {
	t.Helper()
	for _, p := range lk.Products() {
		for i := range p.Platforms[plat] {
			if p.Platforms[plat][i].Component == comp {
				edit(&p.Platforms[plat][i])
			}
		}
	}
	data, err := lockfile.Encode(lk)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, lockfile.FileName), string(data))
}

// cacheFiles lists the files under a cache (relative path → size), to
// show what an install left there.
func cacheFiles(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			out[rel] = fi.Size()
		}
		return nil
	})
	return out
}

// TestALockCannotNameAnotherPyPIProject: a PyPI lock names wheels by file
// name, but the project fetched is the one the component and the CUDA
// major map to, and the version the one cudaenv's table gives the
// release. A lock naming anyone's upload, with its true sha256, on an
// index that serves it, is refused before any request.
func TestALockCannotNameAnotherPyPIProject(t *testing.T) {
	w := newWorld(t)
	// nvcc 13.0.99 is on the index and is in no release cudaenv knows.
	ix := pypitest.New(t, pypitest.ExtraRelease(pypi.Release{Version: "13.0.9", Components: []pypi.Component{{ID: "cuda_nvcc", Version: "13.0.99"}}}))
	dir := project(t, "13.0")
	in := w.installer(t, func(o *Options) { o.PyPIIndex = ix.URL() })
	if _, err := in.Lock(context.Background(), LockRequest{Here: Here{Dir: dir}, Source: "pypi", Profile: "minimal"}); err != nil {
		t.Fatal(err)
	}
	lk, good := readLockFile(t, dir)
	nvcc := fileOf(lk, lk.CUDA, "linux-x86_64", "cuda_nvcc")
	evilName := "totally_legit_pkg-" + nvcc.Version + "-py3-none-manylinux_2_27_x86_64.whl"
	evil := evilWheel(t, "totally-legit-pkg", nvcc.Version)
	idxURL, hits := hostileIndex(t, ix, "totally-legit-pkg", evilName, evil)

	// An nvcc wheel on the index that no release cudaenv knows shipped
	// is not 13.0.3's. (Another known release's build may stand in a
	// lock: install --for takes a framework's builds.)
	var other pypitest.Wheel
	for _, wh := range ix.Wheels("nvidia-cuda-nvcc") {
		if wh.Platform == "linux-x86_64" && wh.Version == "13.0.99" {
			other = wh
		}
	}
	if other.Filename == "" {
		t.Fatal("the test index has one nvcc version only")
	}
	tests := []struct {
		name string
		edit func(*lockfile.File)
		want string
	}{
		{"anyone's upload in place of nvcc", func(f *lockfile.File) {
			f.Name, f.SHA256, f.Size = evilName, sha256OfText(string(evil)), int64(len(evil))
		}, lockfile.FileName + ": cuda_nvcc: file " + evilName + " is not a wheel of nvidia-cuda-nvcc; delete it and run cudaenv lock to write it again"},
		{"another component's wheel in place of nvcc", func(f *lockfile.File) {
			cudart := fileOf(lk, lk.CUDA, "linux-x86_64", "cuda_cudart")
			f.Name, f.SHA256, f.Size, f.Version = cudart.Name, cudart.SHA256, cudart.Size, cudart.Version
		}, "is not a wheel of nvidia-cuda-nvcc"},
		{"an nvcc build no known release shipped", func(f *lockfile.File) {
			f.Name, f.SHA256, f.Size, f.Version = other.Filename, other.SHA256, int64(len(other.Data)), other.Version
		}, lockfile.FileName + ": cuda_nvcc: version " + other.Version + " is not the one of CUDA 13.0.3 (" + nvcc.Version + "), nor of any CUDA 13 release cudaenv knows"},
		{"a file name whose version is not the lock's", func(f *lockfile.File) {
			f.Name = other.Filename
		}, "its version is " + other.Version + ", the lock's " + nvcc.Version},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lk, _ := readLockFile(t, dir)
			editLock(t, dir, lk, "linux-x86_64", "cuda_nvcc", tt.edit)
			defer writeFile(t, filepath.Join(dir, lockfile.FileName), string(good))
			hits.Store(0)
			fin, st, cache := w.fresh(t, func(o *Options) { o.PyPIIndex = idxURL })
			_, err := fin.Install(context.Background(), Request{Here: Here{Dir: dir}, Locked: true})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if n := hits.Load(); n != 0 {
				t.Errorf("the index was asked %d times", n)
			}
			if _, ok := st.Get(store.CUDA, "13.0.3"); ok {
				t.Error("installed")
			}
			if files := cacheFiles(t, cache); len(files) != 0 {
				t.Errorf("the cache holds %v", files)
			}
		})
	}

	// The index alone cannot do it either: a wheel listed on nvcc's own
	// page under nvcc's name whose METADATA says it is another project is
	// not unpacked.
	t.Run("a wheel whose metadata names another project", func(t *testing.T) {
		fake := evilWheel(t, "totally-legit-pkg", nvcc.Version)
		idx2, _ := hostileIndex(t, ix, "nvidia-cuda-nvcc", nvcc.Name, fake)
		lk, _ := readLockFile(t, dir)
		editLock(t, dir, lk, "linux-x86_64", "cuda_nvcc", func(f *lockfile.File) {
			f.SHA256, f.Size = sha256OfText(string(fake)), int64(len(fake))
		})
		defer writeFile(t, filepath.Join(dir, lockfile.FileName), string(good))
		fin, st, _ := w.fresh(t, func(o *Options) { o.PyPIIndex = idx2 })
		_, err := fin.Install(context.Background(), Request{Here: Here{Dir: dir}, Locked: true})
		if err == nil || !strings.Contains(err.Error(), `its METADATA says it is "totally-legit-pkg"`) {
			t.Fatalf("err = %v", err)
		}
		if _, ok := st.Get(store.CUDA, "13.0.3"); ok {
			t.Error("installed")
		}
		if ents, _ := st.List(store.CUDA); len(ents) != 0 {
			t.Errorf("the store has %v", ents)
		}
	})

	// The lock as written still installs.
	fin, st, _ := w.fresh(t, func(o *Options) { o.PyPIIndex = ix.URL() })
	if res, err := fin.Install(context.Background(), Request{Here: Here{Dir: dir}, Locked: true}); err != nil || res[0].Outcome != Installed {
		t.Fatalf("%+v, %v", res, err)
	}
	if ent, _ := st.Get(store.CUDA, "13.0.3"); ent.Receipt.Source != "pypi" {
		t.Errorf("receipt %+v", ent.Receipt)
	}
}

// nobody is the uid of another user on this machine; the test needs root
// to write files as that user.
func nobody(t *testing.T) int {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("needs root to write a file as another user")
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		t.Skipf("no user nobody: %v", err)
	}
	uid, err := strconv.Atoi(u.Uid)
	if err != nil {
		t.Skip(err)
	}
	return uid
}

// chownAll gives a tree to uid.
func chownAll(t *testing.T, dir string, uid int) {
	t.Helper()
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil {
			if err := os.Lchown(p, uid, -1); err != nil {
				t.Fatal(err)
			}
		}
		return nil
	})
}

// TestACachedArchiveIsBelievedOnlyAsATrustedManifestLists: with a
// download cache shared between users, one plants an archive and a lock
// naming its sha256; the other's install must not take it because the
// lock says so. Only NVIDIA's manifest, fetched now or cached by this user
// or root, vouches for a locked sha256, and only for its own component
// and platform.
func TestACachedArchiveIsBelievedOnlyAsATrustedManifestLists(t *testing.T) {
	w := newWorld(t)
	dir := project(t, "12.4")
	in := w.installer(t)
	if _, err := in.Lock(context.Background(), LockRequest{Here: Here{Dir: dir}, Profile: "minimal"}); err != nil {
		t.Fatal(err)
	}
	lk, good := readLockFile(t, dir)
	nvcc := fileOf(lk, lk.CUDA, "linux-x86_64", "cuda_nvcc")
	cudart := fileOf(lk, lk.CUDA, "linux-x86_64", "cuda_cudart")
	planted := "#!/bin/sh\ntouch /tmp/pwned\n"
	plant := func(t *testing.T, cache, sum, body string) string {
		p := filepath.Join(cache, "archives", sum)
		os.MkdirAll(filepath.Dir(p), 0o755)
		writeFile(t, p, body)
		return p
	}
	restore := func() { writeFile(t, filepath.Join(dir, lockfile.FileName), string(good)) }

	tests := []struct {
		name    string
		offline bool
		edit    func(*lockfile.File)
		want    string
	}{
		{"a planted archive under nvcc's name", false, func(f *lockfile.File) {
			f.SHA256, f.Size = sha256OfText(planted), int64(len(planted))
		}, "cuda_nvcc (" + nvcc.Name + "): sha256 mismatch: the lock has " + sha256OfText(planted) + ", the mirror lists " + nvcc.SHA256},
		{"a planted archive under a name nobody serves", false, func(f *lockfile.File) {
			f.SHA256, f.Size, f.Name = sha256OfText(planted), int64(len(planted)), "cuda_nvcc-planted.tar.xz"
		}, "cuda_nvcc (cuda_nvcc-planted.tar.xz): no file with the locked sha256 " + sha256OfText(planted) + " in " + w.mirror.URL() + "/cuda/redist/redistrib_12.4.1.json for cuda_nvcc on linux-x86_64"},
		{"another component's archive as nvcc", false, func(f *lockfile.File) {
			f.SHA256, f.Size, f.Name = cudart.SHA256, cudart.Size, cudart.Name
		}, "no file with the locked sha256 " + cudart.SHA256 + " in " + w.mirror.URL() + "/cuda/redist/redistrib_12.4.1.json for cuda_nvcc on linux-x86_64"},
		{"a planted archive offline, without a manifest", true, func(f *lockfile.File) {
			f.SHA256, f.Size = sha256OfText(planted), int64(len(planted))
		}, "offline: cuda 12.4.1 manifest is not in the cache; run without --offline (the locked sha256, of cached archives too, are believed only as NVIDIA's manifest lists them)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			editLock(t, dir, lk, "linux-x86_64", "cuda_nvcc", tt.edit)
			defer restore()
			lk, _ = readLockFile(t, dir)
			f := fileOf(lk, lk.CUDA, "linux-x86_64", "cuda_nvcc")
			fin, st, cache := w.fresh(t, func(o *Options) { o.Offline = tt.offline })
			p := plant(t, cache, f.SHA256, planted)
			if f.SHA256 == cudart.SHA256 {
				// The real cudart archive, as another install left it.
				data, err := os.ReadFile(filepath.Join(w.cache, "archives", cudart.SHA256))
				if err != nil {
					if _, err := w.installer(t).Install(context.Background(), Request{Args: []string{"12.4"}, Profile: "minimal"}); err != nil {
						t.Fatal(err)
					}
					data, _ = os.ReadFile(filepath.Join(w.cache, "archives", cudart.SHA256))
				}
				writeFile(t, p, string(data))
			}
			w.mirror.ResetCounts()
			before := cacheFiles(t, filepath.Join(cache, "archives"))
			_, err := fin.Install(context.Background(), Request{Here: Here{Dir: dir}, Locked: true})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if _, ok := st.Get(store.CUDA, "12.4.1"); ok {
				t.Error("installed")
			}
			if after := cacheFiles(t, filepath.Join(cache, "archives")); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Errorf("the archives went from %v to %v", before, after)
			}
			if n := w.mirror.ArchiveRequests("cuda_nvcc"); n != 0 {
				t.Errorf("nvcc was downloaded %d times", n)
			}
		})
	}
	lk, _ = readLockFile(t, dir)

	// The same lock, installed as written: offline, from this user's
	// cached manifest; a manifest another user wrote is not believed, even
	// one that lists the same files.
	in1, _, cache := w.fresh(t)
	if _, err := in1.Install(context.Background(), Request{Here: Here{Dir: dir}, Locked: true}); err != nil {
		t.Fatal(err)
	}
	w.mirror.Close()
	t.Run("offline, with this user's cached manifest", func(t *testing.T) {
		fin, st, _ := w.fresh(t, func(o *Options) { o.CacheDir, o.Offline = cache, true })
		res, err := fin.Install(context.Background(), Request{Here: Here{Dir: dir}, Locked: true})
		if err != nil || res[0].Outcome != Installed {
			t.Fatalf("%+v, %v", res, err)
		}
		if ent, _ := st.Get(store.CUDA, "12.4.1"); !fileExists(filepath.Join(ent.Dir, "bin", "nvcc")) {
			t.Error("no bin/nvcc")
		}
	})
	t.Run("offline, with another release's manifest under this one's name", func(t *testing.T) {
		ms, _ := filepath.Glob(filepath.Join(cache, "manifests", "*", "cuda", "redistrib_12.4.1.json"))
		if len(ms) != 1 {
			t.Fatalf("cached manifests %v", ms)
		}
		keep, _ := os.ReadFile(ms[0])
		defer os.WriteFile(ms[0], keep, 0o600)
		other, err := w.mirror.Manifest("cuda", "13.0.0")
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, ms[0], string(other))
		fin, st, _ := w.fresh(t, func(o *Options) { o.CacheDir, o.Offline = cache, true })
		_, err = fin.Install(context.Background(), Request{Here: Here{Dir: dir}, Locked: true})
		if err == nil || !strings.Contains(err.Error(), "/cuda/redist/redistrib_12.4.1.json says it is release 13.0.0, not 12.4.1; run cudaenv cache prune and install again") {
			t.Fatalf("err = %v", err)
		}
		if _, ok := st.Get(store.CUDA, "12.4.1"); ok {
			t.Error("installed")
		}
	})
	t.Run("offline, with a manifest another user cached", func(t *testing.T) {
		uid := nobody(t)
		chownAll(t, filepath.Join(cache, "manifests"), uid)
		defer chownAll(t, filepath.Join(cache, "manifests"), 0)
		fin, st, _ := w.fresh(t, func(o *Options) { o.CacheDir, o.Offline = cache, true })
		_, err := fin.Install(context.Background(), Request{Here: Here{Dir: dir}, Locked: true})
		if err == nil || !strings.Contains(err.Error(), "offline: the cached cuda 12.4.1 manifest was written by another user and is not believed; run without --offline") {
			t.Fatalf("err = %v", err)
		}
		if _, ok := st.Get(store.CUDA, "12.4.1"); ok {
			t.Error("installed")
		}
	})
}

// TestACachedWheelIsBelievedOnlyAsATrustedIndexPageLists is the same for
// a PyPI lock: the index page of the component's project, fetched now,
// or offline this user's record of it, must list the locked sha256.
func TestACachedWheelIsBelievedOnlyAsATrustedIndexPageLists(t *testing.T) {
	w := newWorld(t)
	ix := pypitest.New(t)
	dir := project(t, "13.0")
	w.opts.PyPIIndex = ix.URL()
	if _, err := w.installer(t).Lock(context.Background(), LockRequest{Here: Here{Dir: dir}, Source: "pypi", Profile: "minimal"}); err != nil {
		t.Fatal(err)
	}
	lk, good := readLockFile(t, dir)
	nvcc := fileOf(lk, lk.CUDA, "linux-x86_64", "cuda_nvcc")
	// One install of the lock as written, online, in the shared cache.
	in1, _, cache := w.fresh(t)
	if _, err := in1.Install(context.Background(), Request{Here: Here{Dir: dir}, Locked: true}); err != nil {
		t.Fatal(err)
	}

	fake := evilWheel(t, "nvidia-cuda-nvcc", nvcc.Version) // even its METADATA looks right
	fakeSum := sha256OfText(string(fake))
	editLock(t, dir, lk, "linux-x86_64", "cuda_nvcc", func(f *lockfile.File) { f.SHA256, f.Size = fakeSum, int64(len(fake)) })
	p := filepath.Join(cache, "archives", fakeSum)
	writeFile(t, p, string(fake))
	for _, offline := range []bool{false, true} {
		t.Run(fmt.Sprintf("a planted wheel, offline %v", offline), func(t *testing.T) {
			fin, st, _ := w.fresh(t, func(o *Options) { o.CacheDir, o.Offline = cache, offline })
			_, err := fin.Install(context.Background(), Request{Here: Here{Dir: dir}, Locked: true})
			want := "cuda_nvcc (" + nvcc.Name + "): sha256 mismatch: the lock has " + fakeSum + ", the index lists " + nvcc.SHA256
			if offline {
				want = "offline: cuda_nvcc (" + nvcc.Name + "): nothing this user fetched from " + ix.URL() + " lists the locked sha256 " + fakeSum + " (no record of it)"
			}
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("err = %v, want %q", err, want)
			}
			if _, ok := st.Get(store.CUDA, "13.0.3"); ok {
				t.Error("installed")
			}
			if data, _ := os.ReadFile(p); !bytes.Equal(data, fake) {
				t.Error("the planted file changed")
			}
		})
	}
	writeFile(t, filepath.Join(dir, lockfile.FileName), string(good))

	// The lock as written, offline from this user's records of the index;
	// records another user wrote are not believed.
	t.Run("offline, with this user's records", func(t *testing.T) {
		fin, st, _ := w.fresh(t, func(o *Options) { o.CacheDir, o.Offline = cache, true })
		res, err := fin.Install(context.Background(), Request{Here: Here{Dir: dir}, Locked: true})
		if err != nil || res[0].Outcome != Installed {
			t.Fatalf("%+v, %v", res, err)
		}
		if ent, _ := st.Get(store.CUDA, "13.0.3"); !fileExists(filepath.Join(ent.Dir, "bin", "nvcc")) {
			t.Error("no bin/nvcc")
		}
	})
	t.Run("offline, with records another user wrote", func(t *testing.T) {
		uid := nobody(t)
		chownAll(t, filepath.Join(cache, "index"), uid)
		defer chownAll(t, filepath.Join(cache, "index"), 0)
		fin, _, _ := w.fresh(t, func(o *Options) { o.CacheDir, o.Offline = cache, true })
		_, err := fin.Install(context.Background(), Request{Here: Here{Dir: dir}, Locked: true})
		if err == nil || !strings.Contains(err.Error(), "its record in the download cache was written by another user and is not believed") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("offline, with this user's record of nvcc renamed to the planted sha256", func(t *testing.T) {
		rec, _ := filepath.Glob(filepath.Join(cache, "index", "pypi-*", "wheels", nvcc.SHA256+".json"))
		if len(rec) != 1 {
			t.Fatalf("records %v", rec)
		}
		moved := filepath.Join(filepath.Dir(rec[0]), fakeSum+".json")
		data, _ := os.ReadFile(rec[0])
		writeFile(t, moved, string(data))
		defer os.Remove(moved)
		lk, _ := readLockFile(t, dir)
		editLock(t, dir, lk, "linux-x86_64", "cuda_nvcc", func(f *lockfile.File) { f.SHA256, f.Size = fakeSum, int64(len(fake)) })
		defer writeFile(t, filepath.Join(dir, lockfile.FileName), string(good))
		fin, st, _ := w.fresh(t, func(o *Options) { o.CacheDir, o.Offline = cache, true })
		_, err := fin.Install(context.Background(), Request{Here: Here{Dir: dir}, Locked: true})
		if err == nil || !strings.Contains(err.Error(), "the record of that sha256 names another wheel") {
			t.Fatalf("err = %v", err)
		}
		if _, ok := st.Get(store.CUDA, "13.0.3"); ok {
			t.Error("installed")
		}
	})
	t.Run("offline, with a record of that sha256 for another wheel", func(t *testing.T) {
		rec, err := filepath.Glob(filepath.Join(cache, "index", "pypi-*", "wheels", nvcc.SHA256+".json"))
		if err != nil || len(rec) != 1 {
			t.Fatalf("records %v, %v", rec, err)
		}
		data, _ := os.ReadFile(rec[0])
		defer writeFile(t, rec[0], string(data))
		writeFile(t, rec[0], `{"project":"totally-legit-pkg","file":"`+nvcc.Name+`","sha256":"`+nvcc.SHA256+`"}`)
		fin, _, _ := w.fresh(t, func(o *Options) { o.CacheDir, o.Offline = cache, true })
		_, err = fin.Install(context.Background(), Request{Here: Here{Dir: dir}, Locked: true})
		if err == nil || !strings.Contains(err.Error(), "the record of that sha256 names another wheel") {
			t.Fatalf("err = %v", err)
		}
	})
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// TestALockedCuDNNWheelIsTheOneForItsCUDAMajor: the cuDNN wheel of a PyPI
// lock is nvidia-cudnn-cu<major> for the lock's CUDA major, at the
// version cudaenv's table gives the release.
func TestALockedCuDNNWheelIsTheOneForItsCUDAMajor(t *testing.T) {
	w := newWorld(t)
	ix := pypitest.New(t)
	dir := project(t, "13.0 cudnn@9")
	w.opts.PyPIIndex = ix.URL()
	if _, err := w.installer(t).Lock(context.Background(), LockRequest{Here: Here{Dir: dir}, Source: "pypi", Profile: "minimal"}); err != nil {
		t.Fatal(err)
	}
	lk, good := readLockFile(t, dir)
	cudnn := fileOf(lk, lk.Cudnn, "linux-x86_64", "cudnn")
	if lk.Cudnn.Source != "pypi" || lk.Cudnn.CUDAMajor != 13 || !strings.HasPrefix(cudnn.Name, "nvidia_cudnn_cu13-") {
		t.Fatalf("lock = %+v, %+v", lk.Cudnn, cudnn)
	}
	var cu12 pypitest.Wheel
	for _, wh := range ix.Wheels("nvidia-cudnn-cu12") {
		if wh.Platform == "linux-x86_64" && wh.Version == cudnn.Version {
			cu12 = wh
		}
	}
	if cu12.Filename == "" {
		t.Fatal("the test index has no CUDA 12 build of " + cudnn.Version)
	}
	tests := []struct {
		name string
		edit func(*lockfile.File)
		want string
	}{
		{"the build for another CUDA major", func(f *lockfile.File) {
			f.Name, f.SHA256, f.Size = cu12.Filename, cu12.SHA256, int64(len(cu12.Data))
		}, lockfile.FileName + ": cudnn: file " + cu12.Filename + " is not a wheel of nvidia-cudnn-cu13"},
		{"a version the release does not have", func(f *lockfile.File) {
			f.Version = "9.0.0.312"
			f.Name = strings.Replace(f.Name, "-"+cudnn.Version+"-", "-9.0.0.312-", 1)
		}, "cudnn: version 9.0.0.312 is not the one of cuDNN " + lk.Cudnn.Release + " (" + cudnn.Version + ")"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lk, _ := readLockFile(t, dir)
			editLock(t, dir, lk, "linux-x86_64", "cudnn", tt.edit)
			defer writeFile(t, filepath.Join(dir, lockfile.FileName), string(good))
			fin, st, cache := w.fresh(t)
			_, err := fin.Install(context.Background(), Request{Here: Here{Dir: dir}, Locked: true})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			// Refused before the CUDA product was installed too.
			if ents, _ := st.List(store.CUDA); len(ents) != 0 {
				t.Errorf("the store has %v", ents)
			}
			if files := cacheFiles(t, filepath.Join(cache, "archives")); len(files) != 0 {
				t.Errorf("the cache holds %v", files)
			}
		})
	}
	fin, st, _ := w.fresh(t)
	if _, err := fin.Install(context.Background(), Request{Here: Here{Dir: dir}, Locked: true}); err != nil {
		t.Fatal(err)
	}
	if ents, _ := st.List(store.Cudnn); len(ents) != 1 {
		t.Errorf("cuDNN entries %v", ents)
	}
}
