package activate

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/cudaenv/cudaenv/internal/dirs"
	"github.com/cudaenv/cudaenv/internal/resolve"
	"github.com/cudaenv/cudaenv/store"
)

func writeTestTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, body := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// ResolveFast must pick what Resolve picks and fail where it fails.
func TestResolveFastMatchesResolve(t *testing.T) {
	root := t.TempDir()
	linked := t.TempDir()
	r := `{"kind":"x","source":"test"}`
	writeTestTree(t, root, map[string]string{
		"cuda/11.8.0/receipt.json":  r,
		"cuda/12.4.0/receipt.json":  r,
		"cuda/12.4.1/receipt.json":  r,
		"cuda/12.4.2/bin/nvcc":      "", // no receipt: an interrupted install
		"cuda/12.10.0/receipt.json": r,
		"cuda/12.9.9/receipt.json":  r,
		"cuda/12.6.0/receipt.json":  `{"kind":"cuda","source":"link","target":"` + linked + `"}`,
		"cuda/12.7.0/receipt.json":  `{"kind":"cuda","source":"link","target":"/nonexistent/cuda"}`,
		"cuda/12.8.0/receipt.json":  `{not json`,
		// Objects the store wrote (store.InstalledReceipt) whose fields do
		// not decode: damaged, not broken, to List as to the hook.
		"cuda/12.3.0/receipt.json":           `{"kind":"cuda","installed_bytes":"lots"}`,
		"cuda/12.2.0/receipt.json":           `{garbage}`,
		"cuda/12.1.0/receipt.json":           `{"source":"\u006cink","target":"/nonexistent/cuda"}`,
		"cuda/not-a-version/receipt.json":    r,
		"cuda/13.0.0":                        "a file, not a directory",
		"cudnn/9.5.1.17-cuda12/receipt.json": r,
		"cudnn/9.5.1.17-cuda11/receipt.json": r,
		"cudnn/9.5.0-cuda12/receipt.json":    r,
		"cudnn/9.6.0-cuda13/receipt.json":    r,
		"cudnn/8.9.7.29-cuda11/receipt.json": r,
		"cudnn/9.7.0-cudaX/receipt.json":     r,
	})
	st := store.New(dirs.Dirs{Root: root})
	for _, name := range []string{"12.3.0", "12.2.0", "12.1.0"} {
		e, ok := st.Get(store.CUDA, name)
		if !ok || e.Err != nil || e.Path != e.Dir || e.Damage() == nil {
			t.Errorf("%s: ok %v, Err %v, Path %s, Damage %v; want an installed, damaged entry in its own folder", name, ok, e.Err, e.Path, e.Damage())
		}
	}
	sameAsResolve(t, st, []string{
		"12.4", "12", "12.4.1", "11", "latest", "12.6", "12.7", "12.8", "12.3", "12.2", "12.1", "12.4.2", "12.10", "12.9", "13", "14",
		"12.4 cudnn@9.5", "11.8 cudnn@9", "11 cudnn@8", "12.4 cudnn@9.6", "cudnn@9", "cudnn@latest", "cudnn@9.7", "system",
	})
}

// With a system store beside the user's, ResolveFast picks what Resolve
// picks too: the newest match of either, the user's entry where both
// have a name, the system's where the user's has no receipt.
func TestResolveFastMatchesResolveAcrossTheUserAndSystemStores(t *testing.T) {
	user, system := t.TempDir(), t.TempDir()
	linked := t.TempDir()
	r := `{"kind":"x","source":"test"}`
	writeTestTree(t, user, map[string]string{
		"cuda/12.4.1/receipt.json":           r,
		"cuda/12.6.0/bin/nvcc":               "", // no receipt: the system's 12.6.0 shows
		"cuda/11.8.0/receipt.json":           `{not json`,
		"cudnn/9.5.1.17-cuda12/receipt.json": r,
	})
	writeTestTree(t, system, map[string]string{
		"cuda/12.4.1/receipt.json":           r,
		"cuda/12.4.2/receipt.json":           r,
		"cuda/12.6.0/receipt.json":           r,
		"cuda/12.8.0/receipt.json":           `{"kind":"cuda","source":"link","target":"` + linked + `"}`,
		"cuda/12.9.0/receipt.json":           `{"kind":"cuda","source":"link","target":"/nonexistent/cuda"}`,
		"cuda/11.8.0/receipt.json":           r,
		"cuda/10.2.0/receipt.json":           r,
		"cuda/.stage-13.0.0-1/receipt.json":  r, // an admin's install in progress
		"cudnn/9.5.1.17-cuda12/receipt.json": r,
		"cudnn/9.6.0.1-cuda12/receipt.json":  r,
		"cudnn/8.9.7.29-cuda11/receipt.json": r,
	})
	st := store.New(dirs.Dirs{Root: user, System: system})
	sameAsResolve(t, st, []string{
		"12.4", "12.4.1", "12.4.2", "12.6", "12.8", "12.9", "11", "10", "13", "latest",
		"12.4.1 cudnn@9.5", "12.4 cudnn@9", "11 cudnn@8", "11.8 cudnn@9", "cudnn@9.6",
	})
	got, err := ResolveFast(st, specs(t, "12.4.1 cudnn@9.6"))
	if err != nil {
		t.Fatal(err)
	}
	if got.CUDA.System || got.CUDA.Dir != filepath.Join(user, "cuda", "12.4.1") {
		t.Errorf("12.4.1 = %+v, want the user's", got.CUDA)
	}
	if !got.Cudnn.System || got.Cudnn.Dir != filepath.Join(system, "cudnn", "9.6.0.1-cuda12") {
		t.Errorf("cudnn@9.6 = %+v, want the system store's", got.Cudnn)
	}
}

func sameAsResolve(t *testing.T, st *store.Store, texts []string) {
	t.Helper()
	for _, text := range texts {
		specs, err := resolve.Parse("test", []byte(text))
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		sel := resolve.Selection{Specs: specs, Source: resolve.Source{Kind: resolve.FromFile, Path: "/p/.cuda-version"}}
		want, wantErr := Resolve(st, sel)
		got, gotErr := ResolveFast(st, sel)
		if (wantErr == nil) != (gotErr == nil) || (wantErr != nil && wantErr.Error() != gotErr.Error()) {
			t.Errorf("%s: error %v, want %v", text, gotErr, wantErr)
			continue
		}
		for _, pair := range [][2]*store.Entry{{got.CUDA, want.CUDA}, {got.Cudnn, want.Cudnn}} {
			g, w := pair[0], pair[1]
			if (g == nil) != (w == nil) {
				t.Errorf("%s: got %v, want %v", text, g, w)
				continue
			}
			if g == nil {
				continue
			}
			if g.Dir != w.Dir || g.Path != w.Path || !reflect.DeepEqual(g.Version, w.Version) || g.CUDAMajor != w.CUDAMajor || g.Kind != w.Kind || g.Linked() != w.Linked() || g.System != w.System {
				t.Errorf("%s: got %+v, want %+v", text, *g, *w)
			}
		}
		if got.Label() != want.Label() {
			t.Errorf("%s: label %q, want %q", text, got.Label(), want.Label())
		}
	}
}
