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
		"cuda/11.8.0/receipt.json":           r,
		"cuda/12.4.0/receipt.json":           r,
		"cuda/12.4.1/receipt.json":           r,
		"cuda/12.4.2/bin/nvcc":               "", // no receipt: an interrupted install
		"cuda/12.10.0/receipt.json":          r,
		"cuda/12.9.9/receipt.json":           r,
		"cuda/12.6.0/receipt.json":           `{"kind":"cuda","source":"link","target":"` + linked + `"}`,
		"cuda/12.7.0/receipt.json":           `{"kind":"cuda","source":"link","target":"/nonexistent/cuda"}`,
		"cuda/12.8.0/receipt.json":           `{not json`,
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
	for _, text := range []string{
		"12.4", "12", "12.4.1", "11", "latest", "12.6", "12.7", "12.8", "12.4.2", "12.10", "12.9", "13", "14",
		"12.4 cudnn@9.5", "11.8 cudnn@9", "11 cudnn@8", "12.4 cudnn@9.6", "cudnn@9", "cudnn@latest", "cudnn@9.7", "system",
	} {
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
			if g.Dir != w.Dir || g.Path != w.Path || !reflect.DeepEqual(g.Version, w.Version) || g.CUDAMajor != w.CUDAMajor || g.Kind != w.Kind || g.Linked() != w.Linked() {
				t.Errorf("%s: got %+v, want %+v", text, *g, *w)
			}
		}
		if got.Label() != want.Label() {
			t.Errorf("%s: label %q, want %q", text, got.Label(), want.Label())
		}
	}
}
