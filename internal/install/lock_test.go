package install

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cudaenv/cudaenv/fetch/fetchtest"
	"github.com/cudaenv/cudaenv/fetch/pypi/pypitest"
	"github.com/cudaenv/cudaenv/internal/dirs"
	"github.com/cudaenv/cudaenv/internal/lockfile"
	"github.com/cudaenv/cudaenv/store"
)

// project is a folder with a .cuda-version (and a path that needs quoting).
func project(t *testing.T, specs string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "my 'proj' $x")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, ".cuda-version"), specs+"\n")
	return dir
}

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readLockFile(t *testing.T, dir string) (*lockfile.Lock, []byte) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, lockfile.FileName))
	if err != nil {
		t.Fatal(err)
	}
	lk, err := lockfile.Decode("lock", data)
	if err != nil {
		t.Fatal(err)
	}
	return lk, data
}

// fresh is another machine: its own store and an empty cache, the same
// mirror and options otherwise.
func (w *world) fresh(t *testing.T, edit ...func(*Options)) (*Installer, *store.Store, string) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "other 'machine'")
	st := store.New(dirs.Dirs{Root: filepath.Join(root, "root"), Cache: filepath.Join(root, "cache")})
	cache := filepath.Join(root, "cache")
	edit = append([]func(*Options){func(o *Options) { o.Store, o.CacheDir = st, cache }}, edit...)
	return w.installer(t, edit...), st, cache
}

func fileOf(lk *lockfile.Lock, p *lockfile.Product, plat, comp string) lockfile.File {
	for _, f := range p.Platforms[plat] {
		if f.Component == comp {
			return f
		}
	}
	return lockfile.File{}
}

func TestLockPinsReleasesAndEveryFileOnEveryPlatform(t *testing.T) {
	w := newWorld(t)
	dir := project(t, "12.4 cudnn@9.5")
	in := w.installer(t)
	res, err := in.Lock(context.Background(), LockRequest{Here: Here{Dir: dir}, Profile: "minimal", Platforms: []string{"linux-sbsa"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Written || res.Path != filepath.Join(dir, lockfile.FileName) {
		t.Errorf("result = %+v", res)
	}
	lk, data := readLockFile(t, dir)
	if lk.CUDA.Release != "12.4.1" || lk.CUDA.Source != "nvidia" || lk.Cudnn.Release != "9.5.1" || lk.Cudnn.CUDAMajor != 12 || lk.Profile != "minimal" {
		t.Errorf("lock = %+v %+v %+v", lk, lk.CUDA, lk.Cudnn)
	}
	if got := lk.Platforms(); !reflect.DeepEqual(got, []string{"linux-sbsa", "linux-x86_64"}) {
		t.Errorf("platforms = %v, want this machine's and the one asked for", got)
	}
	// The files are the mirror's, byte for byte.
	p, err := in.Plan(context.Background(), spec(t, "12.4.1"), Target{Source: "nvidia", Platform: "linux-sbsa", Profile: "minimal"})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range p.Artifacts {
		f := fileOf(lk, lk.CUDA, "linux-sbsa", a.Component)
		if f.SHA256 != a.SHA256 || f.Size != a.Size || f.Name != filepath.Base(a.RelativePath) || f.Version != a.Version {
			t.Errorf("%s: locked %+v, mirror has %+v", a.Component, f, a)
		}
	}
	if bytes.Contains(data, []byte(w.mirror.URL())) || bytes.Contains(data, []byte("http")) {
		t.Errorf("the lock names a URL:\n%s", data)
	}
	// Locking again changes nothing: no write, the same bytes.
	st, _ := os.Stat(res.Path)
	res, err = in.Lock(context.Background(), LockRequest{Here: Here{Dir: filepath.Join(dir)}})
	if err != nil || res.Written {
		t.Fatalf("again: %+v, %v", res, err)
	}
	if _, again := readLockFile(t, dir); !bytes.Equal(again, data) {
		t.Errorf("the lock changed:\n%s", again)
	}
	if st2, _ := os.Stat(res.Path); !st2.ModTime().Equal(st.ModTime()) {
		t.Error("an unchanged lock was written again")
	}
}

func TestLockKeepsReleasesUntilUpgrade(t *testing.T) {
	w := newWorld(t)
	dir := project(t, "12.9")
	in := w.installer(t, func(o *Options) { o.Refresh = true })
	if _, err := in.Lock(context.Background(), LockRequest{Here: Here{Dir: dir}, Profile: "minimal"}); err != nil {
		t.Fatal(err)
	}
	lk, _ := readLockFile(t, dir)
	if lk.CUDA.Release != "12.9.2" {
		t.Fatalf("release = %s", lk.CUDA.Release)
	}
	// NVIDIA publishes 12.9.9: the lock stays where it is until --upgrade.
	raw, err := w.mirror.Manifest("cuda", "12.9.2")
	if err != nil {
		t.Fatal(err)
	}
	w.mirror.AddManifest("cuda", "12.9.9", bytes.Replace(raw, []byte(`"release_label": "12.9.2"`), []byte(`"release_label": "12.9.9"`), 1))
	if _, err := in.Lock(context.Background(), LockRequest{Here: Here{Dir: dir}}); err != nil {
		t.Fatal(err)
	}
	if lk, _ := readLockFile(t, dir); lk.CUDA.Release != "12.9.2" {
		t.Errorf("without --upgrade the release moved to %s", lk.CUDA.Release)
	}
	if _, err := in.Lock(context.Background(), LockRequest{Here: Here{Dir: dir}, Upgrade: true}); err != nil {
		t.Fatal(err)
	}
	if lk, _ := readLockFile(t, dir); lk.CUDA.Release != "12.9.9" || lk.Profile != "minimal" {
		t.Errorf("--upgrade: release %s, profile %s; want 12.9.9 with the profile kept", lk.CUDA.Release, lk.Profile)
	}
}

func TestLockNeedsACudaVersionFile(t *testing.T) {
	w := newWorld(t)
	in := w.installer(t)
	tv := t.TempDir()
	writeFile(t, filepath.Join(tv, ".tool-versions"), "cuda 12.4\n")
	sys := project(t, "system")
	tests := []struct {
		name, dir, want string
	}{
		{"none at all", t.TempDir(), "lock: no .cuda-version here or in a folder above; write one first"},
		{"a .tool-versions", tv, "cudaenv lock locks a .cuda-version file"},
		{"system", sys, "selects system; there is nothing to lock"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := in.Lock(context.Background(), LockRequest{Here: Here{Dir: tt.dir}})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestInstallFromTheLockOnAnotherMachineAndMirror(t *testing.T) {
	w := newWorld(t)
	dir := project(t, "12.4 cudnn@9.5")
	if _, err := w.installer(t).Lock(context.Background(), LockRequest{Here: Here{Dir: dir}, Profile: "minimal"}); err != nil {
		t.Fatal(err)
	}
	lk, data := readLockFile(t, dir)

	// Another mirror serving the same files: found by sha256.
	other := fetchtest.NewMirror(t, fetchtest.Options{})
	w.mirror.Close()
	in, st, _ := w.fresh(t, func(o *Options) { o.Mirror = other.URL() })
	res, err := in.Install(context.Background(), Request{Here: Here{Dir: dir}, Locked: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].Label != "CUDA 12.4.1" || res[1].Label != "cuDNN 9.5.1.17-cuda12" || res[0].Outcome != Installed {
		t.Fatalf("results = %+v", res)
	}
	ent, ok := st.Get(store.CUDA, "12.4.1")
	if !ok || ent.Receipt.Source != "nvidia" || ent.Receipt.URL != other.URL() || ent.Receipt.Profile != "minimal" {
		t.Fatalf("entry = %+v", ent)
	}
	for _, c := range ent.Receipt.Components {
		if f := fileOf(lk, lk.CUDA, "linux-x86_64", c.ID); f.SHA256 != c.SHA256 || f.Size != c.Size {
			t.Errorf("%s: installed %s, locked %s", c.ID, c.SHA256, f.SHA256)
		}
	}
	if len(ent.Receipt.Components) != len(lk.CUDA.Platforms["linux-x86_64"]) {
		t.Errorf("installed %d components, the lock lists %d", len(ent.Receipt.Components), len(lk.CUDA.Platforms["linux-x86_64"]))
	}
	if _, err := os.Stat(filepath.Join(ent.Dir, "bin", "nvcc")); err != nil {
		t.Error(err)
	}
	if _, after := readLockFile(t, dir); !bytes.Equal(after, data) {
		t.Error("installing rewrote a lock that matched")
	}
	// Again: nothing to do.
	other.ResetCounts()
	res, err = in.Install(context.Background(), Request{Here: Here{Dir: dir}, Locked: true})
	if err != nil || res[0].Outcome != AlreadyInstalled || len(other.Requests()) != 0 {
		t.Errorf("again: %+v, %v, requests %v", res, err, other.Requests())
	}
}

func TestInstallFromTheLockUsesTheCacheWithoutTheServer(t *testing.T) {
	w := newWorld(t)
	dir := project(t, "12.4")
	in := w.installer(t)
	if _, err := in.Lock(context.Background(), LockRequest{Here: Here{Dir: dir}, Profile: "minimal"}); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Install(context.Background(), Request{Here: Here{Dir: dir}}); err != nil {
		t.Fatal(err)
	}
	w.mirror.Close()
	other := store.New(dirs.Dirs{Root: filepath.Join(t.TempDir(), "other root")})
	res, err := w.installer(t, func(o *Options) { o.Store = other }).Install(context.Background(), Request{Here: Here{Dir: dir}, Locked: true})
	if err != nil || res[0].Outcome != Installed {
		t.Fatalf("from the cache alone: %+v, %v", res, err)
	}
}

// TestAFileThatIsNotTheLockedOneFails: whatever serves the bytes (the
// cache, the mirror's listing, the mirror's download), a file whose
// sha256 is not the lock's is refused with the component and both hashes.
func TestAFileThatIsNotTheLockedOneFails(t *testing.T) {
	w := newWorld(t)
	dir := project(t, "12.4")
	if _, err := w.installer(t).Lock(context.Background(), LockRequest{Here: Here{Dir: dir}, Profile: "minimal"}); err != nil {
		t.Fatal(err)
	}
	lk, _ := readLockFile(t, dir)
	nvcc := fileOf(lk, lk.CUDA, "linux-x86_64", "cuda_nvcc")

	t.Run("a tampered cache", func(t *testing.T) {
		in, st, cache := w.fresh(t)
		p := filepath.Join(cache, "archives", nvcc.SHA256)
		os.MkdirAll(filepath.Dir(p), 0o755)
		writeFile(t, p, "not nvcc\n")
		_, err := in.Install(context.Background(), Request{Here: Here{Dir: dir}})
		var me *MismatchError
		if !errors.As(err, &me) || me.Component != "cuda_nvcc" || me.Want != nvcc.SHA256 || me.Got != sha256OfText("not nvcc\n") {
			t.Fatalf("err = %v, want a mismatch of cuda_nvcc with both hashes", err)
		}
		for _, s := range []string{"install CUDA 12.4.1: cuda_nvcc (" + nvcc.Name + "): sha256 mismatch: the lock has " + nvcc.SHA256 + ", the download cache has " + me.Got, "cudaenv cache prune"} {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("err = %v, want %q", err, s)
			}
		}
		if _, ok := st.Get(store.CUDA, "12.4.1"); ok {
			t.Error("installed anyway")
		}
	})

	w.mirror.SetFault("cuda_cudart", fetchtest.Fault{Extra: []fetchtest.Entry{{Name: "lib/extra.txt", Body: "changed\n"}}})
	cudart := fileOf(lk, lk.CUDA, "linux-x86_64", "cuda_cudart")

	t.Run("a mirror that changed the file", func(t *testing.T) {
		in, _, _ := w.fresh(t)
		_, err := in.Install(context.Background(), Request{Here: Here{Dir: dir}})
		var me *MismatchError
		if !errors.As(err, &me) || me.Component != "cuda_cudart" || me.Want != cudart.SHA256 || me.Got == cudart.SHA256 || len(me.Got) != 64 {
			t.Fatalf("err = %v", err)
		}
		if !strings.Contains(err.Error(), "the mirror lists "+me.Got) || !strings.Contains(err.Error(), "cudaenv lock --upgrade") {
			t.Errorf("err = %v", err)
		}
		if n := w.mirror.ArchiveRequests("cuda_cudart"); n != 0 {
			t.Errorf("downloaded a file the mirror says is not the locked one (%d requests)", n)
		}
	})

	t.Run("a download that is not what the mirror lists", func(t *testing.T) {
		// This machine cached the manifest before the file changed: it still
		// lists the locked sha256, the bytes are new.
		in, _, _ := w.fresh(t)
		w.mirror.SetFault("cuda_cudart", fetchtest.Fault{})
		if _, err := in.Lock(context.Background(), LockRequest{Here: Here{Dir: project(t, "12.4")}, Profile: "minimal"}); err != nil {
			t.Fatal(err)
		}
		w.mirror.SetFault("cuda_cudart", fetchtest.Fault{Extra: []fetchtest.Entry{{Name: "lib/extra.txt", Body: "changed\n"}}})
		_, err := in.Install(context.Background(), Request{Here: Here{Dir: dir}})
		// (fetch checks the size first, then the sha256 against the lock's.)
		if err == nil || !strings.Contains(err.Error(), "cuda_cudart") || !strings.Contains(err.Error(), " mismatch (want ") {
			t.Fatalf("err = %v", err)
		}
	})

	t.Run("lock keeps the locked file until --upgrade", func(t *testing.T) {
		in, _, _ := w.fresh(t)
		_, err := in.Lock(context.Background(), LockRequest{Here: Here{Dir: dir}})
		var me *MismatchError
		if !errors.As(err, &me) || me.Component != "cuda_cudart" || me.Want != cudart.SHA256 || !strings.Contains(err.Error(), "--upgrade") {
			t.Fatalf("err = %v", err)
		}
		if _, err := in.Lock(context.Background(), LockRequest{Here: Here{Dir: dir}, Upgrade: true}); err != nil {
			t.Fatal(err)
		}
		if lk, _ := readLockFile(t, dir); fileOf(lk, lk.CUDA, "linux-x86_64", "cuda_cudart").SHA256 != me.Got {
			t.Error("--upgrade did not take the new file")
		}
	})
}

func TestInstallLockedRefusesAStaleLockAndOtherwiseUpdatesIt(t *testing.T) {
	w := newWorld(t)
	dir := project(t, "12.4 cudnn@9.5")
	in := w.installer(t)
	if _, err := in.Lock(context.Background(), LockRequest{Here: Here{Dir: dir}, Profile: "minimal"}); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, ".cuda-version"), "12.6 cudnn@9.5\n")
	_, err := in.Install(context.Background(), Request{Here: Here{Dir: dir}, Locked: true})
	want := "install --locked: " + filepath.Join(dir, lockfile.FileName) + " is out of date: " + filepath.Join(dir, ".cuda-version") + " asks for 12.6 cudnn@9.5, the lock has 12.4 cudnn@9.5; run cudaenv lock and commit .cuda-version.lock"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
	if _, err := in.Install(context.Background(), Request{Here: Here{Dir: dir}, Platform: "linux-sbsa", Locked: true}); err == nil || !strings.Contains(err.Error(), "the lock has no files for linux-sbsa") {
		t.Errorf("another platform: %v", err)
	}
	if len(w.rec.results()) != 0 {
		t.Fatalf("installed: %+v", w.rec.results())
	}

	// Without --locked: the lock is brought up to date, then followed.
	res, err := in.Install(context.Background(), Request{Here: Here{Dir: dir}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].Label != "CUDA 12.6.3" || res[1].Label != "cuDNN 9.5.1.17-cuda12" {
		t.Fatalf("results = %+v", res)
	}
	lk, _ := readLockFile(t, dir)
	if lk.CUDA.Release != "12.6.3" || lk.Cudnn.Release != "9.5.1" || lk.Profile != "minimal" {
		t.Errorf("lock = %+v %+v", lk.CUDA, lk.Cudnn)
	}
	if ev, ok := w.rec.events[0].(LockUpdated); !ok || !strings.Contains(ev.Reason, "asks for 12.6 cudnn@9.5") {
		t.Errorf("first event = %+v, want LockUpdated", w.rec.events[0])
	}
}

func TestInstallLockedNeedsALock(t *testing.T) {
	w := newWorld(t)
	in := w.installer(t)
	dir := project(t, "12.4")
	tests := []struct {
		name string
		req  Request
		want string
	}{
		{"no lock", Request{Here: Here{Dir: dir}, Locked: true}, "install --locked: no .cuda-version.lock beside " + filepath.Join(dir, ".cuda-version") + "; write it with cudaenv lock and commit it"},
		{"version arguments", Request{Args: []string{"12.4"}, Locked: true}, "install --locked installs what .cuda-version.lock lists; drop the version arguments and --for"},
		{"a selection from the environment", Request{Here: Here{Dir: dir, Lookup: func(k string) (string, bool) { return "12.6", k == "CUDAENV_VERSION" }}, Locked: true}, "the versions here come from CUDAENV_VERSION"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := in.Install(context.Background(), tt.req)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestInstallFromALockRefusesOtherComponentFlags(t *testing.T) {
	w := newWorld(t)
	dir := project(t, "12.4")
	in := w.installer(t)
	if _, err := in.Lock(context.Background(), LockRequest{Here: Here{Dir: dir}, Profile: "minimal"}); err != nil {
		t.Fatal(err)
	}
	_, err := in.Install(context.Background(), Request{Here: Here{Dir: dir}, Profile: "full"})
	if err == nil || !strings.Contains(err.Error(), "decides the components (profile minimal); change them with cudaenv lock --profile") {
		t.Errorf("err = %v", err)
	}
	if _, err := in.Install(context.Background(), Request{Here: Here{Dir: dir}, Profile: "minimal"}); err != nil {
		t.Errorf("the lock's own profile: %v", err)
	}
}

// TestAHostileLockInstallsNothing: a lock from a cloned repository cannot
// make cudaenv fetch a URL or write a path of its choosing.
func TestAHostileLockInstallsNothing(t *testing.T) {
	w := newWorld(t)
	dir := project(t, "12.4")
	in := w.installer(t)
	if _, err := in.Lock(context.Background(), LockRequest{Here: Here{Dir: dir}, Profile: "minimal"}); err != nil {
		t.Fatal(err)
	}
	_, good := readLockFile(t, dir)
	lk, _ := readLockFile(t, dir)
	nvcc := fileOf(lk, lk.CUDA, "linux-x86_64", "cuda_nvcc")
	evil := filepath.Join(filepath.Dir(dir), "evil")
	zeros := strings.Repeat("0", 64)
	tests := []struct {
		name string
		edit []string // old, new, old, new, …
		want string
	}{
		{"a file name that climbs out", []string{nvcc.Name, "../../../evil"}, "is not a plain archive name"},
		{"a file name that is a URL", []string{nvcc.Name, "http://127.0.0.1:1/evil.tar.xz"}, "is not a plain archive name"},
		{"a bad hash", []string{nvcc.SHA256, "../" + nvcc.SHA256[3:]}, "is not 64 lower-case hex digits"},
		{"a huge file", []string{`size = `, `size = 99999999999999`}, "is out of range"},
		{"a hash the mirror lists for another file", []string{nvcc.SHA256, zeros}, "cuda_nvcc (" + nvcc.Name + "): sha256 mismatch: the lock has " + zeros + ", the mirror lists " + nvcc.SHA256},
		{"a file nobody serves", []string{nvcc.SHA256, zeros, nvcc.Name, "evil.tar.xz"}, "cuda_nvcc (evil.tar.xz): no file with the locked sha256 " + zeros + " in " + w.mirror.URL() + "/cuda/redist/redistrib_12.4.1.json"},
	}
	// A mirror reached with a token as the user name: the token never
	// shows in what the error names.
	tokenMirror := strings.Replace(w.mirror.URL(), "://", "://s3cr3t-token@", 1)
	tests = append(tests, struct {
		name string
		edit []string
		want string
	}{"a file nobody serves, from a mirror with a token", []string{nvcc.SHA256, zeros, nvcc.Name, "evil.tar.xz", "", tokenMirror},
		"no file with the locked sha256 " + zeros + " in " + strings.Replace(tokenMirror, "s3cr3t-token", "xxxxx", 1) + "/cuda/redist/redistrib_12.4.1.json"})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := string(good)
			mirror := w.mirror.URL()
			for i := 0; i < len(tt.edit); i += 2 {
				if tt.edit[i] == "" {
					mirror = tt.edit[i+1] // not an edit: the mirror to use
					continue
				}
				text = strings.Replace(text, tt.edit[i], tt.edit[i+1], 1)
			}
			writeFile(t, filepath.Join(dir, lockfile.FileName), text)
			in, st, cache := w.fresh(t, func(o *Options) { o.Mirror = mirror })
			_, err := in.Install(context.Background(), Request{Here: Here{Dir: dir}})
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "s3cr3t") {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if _, ok := st.Get(store.CUDA, "12.4.1"); ok {
				t.Error("installed")
			}
			if _, err := os.Stat(evil); err == nil {
				t.Error("wrote outside")
			}
			if ents, _ := os.ReadDir(filepath.Join(cache, "archives")); len(ents) != 0 {
				t.Errorf("downloaded %d files", len(ents))
			}
		})
	}
}

func TestLockAndInstallFromPyPI(t *testing.T) {
	w := newWorld(t)
	ix := pypitest.New(t)
	dir := project(t, "13.0")
	in := w.installer(t, func(o *Options) { o.PyPIIndex = ix.URL() })
	if _, err := in.Lock(context.Background(), LockRequest{Here: Here{Dir: dir}, Source: "pypi", Profile: "minimal"}); err != nil {
		t.Fatal(err)
	}
	lk, _ := readLockFile(t, dir)
	if lk.CUDA.Source != "pypi" || !strings.HasSuffix(fileOf(lk, lk.CUDA, "linux-x86_64", "cuda_nvcc").Name, ".whl") {
		t.Fatalf("lock = %+v", lk.CUDA)
	}
	// Another index with the same wheels, on a machine whose settings say
	// nvidia: the lock says pypi.
	other := pypitest.New(t)
	fin, st, _ := w.fresh(t, func(o *Options) { o.PyPIIndex = other.URL() })
	res, err := fin.Install(context.Background(), Request{Here: Here{Dir: dir}, Source: "nvidia", Locked: true})
	if err != nil {
		t.Fatal(err)
	}
	if ent, _ := st.Get(store.CUDA, "13.0.3"); res[0].Outcome != Installed || ent.Receipt.Source != "pypi" || ent.Receipt.URL != other.URL() {
		t.Errorf("result %+v, receipt %+v", res[0], ent.Receipt)
	}
	if n := w.mirror.Requests(); len(n) != 0 {
		t.Errorf("NVIDIA's server was asked %v", n)
	}
	// An index whose wheel is not the locked one.
	bad := pypitest.New(t, pypitest.WrongHash("nvidia-cuda-nvcc"))
	fin, _, _ = w.fresh(t, func(o *Options) { o.PyPIIndex = bad.URL() })
	_, err = fin.Install(context.Background(), Request{Here: Here{Dir: dir}})
	var me *MismatchError
	if !errors.As(err, &me) || me.Component != "cuda_nvcc" || !strings.Contains(err.Error(), "the index lists") {
		t.Errorf("err = %v", err)
	}
}

func TestInstalledFromOtherArchivesIsReported(t *testing.T) {
	w := newWorld(t)
	dir := project(t, "12.4")
	in := w.installer(t)
	if _, err := in.Install(context.Background(), Request{Args: []string{"12.4"}, Profile: "minimal"}); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Lock(context.Background(), LockRequest{Here: Here{Dir: dir}, Profile: "minimal"}); err != nil {
		t.Fatal(err)
	}
	lk, data := readLockFile(t, dir)
	nvcc := fileOf(lk, lk.CUDA, "linux-x86_64", "cuda_nvcc")
	writeFile(t, filepath.Join(dir, lockfile.FileName), strings.Replace(string(data), nvcc.SHA256, strings.Repeat("1", 64), 1))
	w.rec.events = nil
	res, err := in.Install(context.Background(), Request{Here: Here{Dir: dir}})
	if err != nil || res[0].Outcome != AlreadyInstalled {
		t.Fatalf("%+v, %v", res, err)
	}
	want := NotAsLocked{Label: "CUDA 12.4.1", Lock: lockfile.FileName, Components: []string{"cuda_nvcc"}}
	if !reflect.DeepEqual(w.rec.events[0], want) {
		t.Errorf("events = %+v, want %+v first", w.rec.events, want)
	}
}

func sha256OfText(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
