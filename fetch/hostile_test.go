package fetch_test

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cudaenv/cudaenv/fetch"
	"github.com/cudaenv/cudaenv/fetch/fetchtest"
	"github.com/cudaenv/cudaenv/internal/rootfs"
)

// sandbox is a folder holding the tree to install into (dest, three
// levels down, as a store's staging folder is) and, beside it, files that
// must never change; unchanged reports what did.
type sandbox struct {
	root, dest, home string
	before           map[string]string
}

func newSandbox(t *testing.T) *sandbox {
	t.Helper()
	root := filepath.Join(t.TempDir(), `s b "q" $x`)
	s := &sandbox{root: root, dest: filepath.Join(root, "store", "staging", "cuda-12.4.1-1"), home: filepath.Join(root, "home")}
	for _, d := range []string{s.home, filepath.Dir(s.dest)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(s.home, ".bashrc"), []byte("# mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.before = snapshot(t, root, s.dest)
	return s
}

// snapshot hashes every file and link under root except those in skip.
func snapshot(t *testing.T, root, skip string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if p == skip {
			return filepath.SkipDir
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			out[p] = "link " + l
		case d.Type().IsRegular():
			b, _ := os.ReadFile(p)
			out[p] = fmt.Sprintf("%x", sha256.Sum256(b))
		default:
			out[p] = d.Type().String()
		}
		return nil
	})
	return out
}

func (s *sandbox) unchanged(t *testing.T) {
	t.Helper()
	after := snapshot(t, s.root, s.dest)
	for p, h := range after {
		if s.before[p] != h {
			t.Errorf("%s was created or changed outside the tree", p)
		}
	}
	for p := range s.before {
		if _, ok := after[p]; !ok {
			t.Errorf("%s was removed outside the tree", p)
		}
	}
}

func TestFetchRefusesLinksThatLeaveTheTreeOnceTheLayoutIsMade(t *testing.T) {
	s := newSandbox(t)
	f, err := fetchtest.Hostile("escape-after-layout", filepath.Join(s.home, ".bashrc"))
	if err != nil {
		t.Fatal(err)
	}
	m := newMirror(t, fetchtest.Options{Faults: map[string]fetchtest.Fault{"cuda_cudart": f}})
	c := newClient(t, m)
	_, err = c.Fetch(t.Context(), minimal124(t, c), s.dest)
	if err == nil || !strings.Contains(err.Error(), "resolves outside the tree") || !strings.Contains(err.Error(), "lib/") {
		t.Fatalf("Fetch = %v, want a link leading outside named", err)
	}
	if !strings.Contains(err.Error(), "cuda_cudart") {
		t.Errorf("the error does not name the component: %v", err)
	}
	s.unchanged(t)
}

func TestFetchRefusesADanglingLink(t *testing.T) {
	f, _ := fetchtest.Hostile("dangling", "")
	m := newMirror(t, fetchtest.Options{Faults: map[string]fetchtest.Fault{"cuda_cudart": f}})
	c := newClient(t, m)
	_, err := c.Fetch(t.Context(), minimal124(t, c), t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "lib/libgone.so → libgone.so.1: it dangles") {
		t.Fatalf("Fetch = %v", err)
	}
}

func TestFetchRefusesEntriesAtNamesCudaenvOwns(t *testing.T) {
	cases := []struct {
		name  string
		entry fetchtest.Entry
	}{
		{"a receipt", fetchtest.Entry{Name: "receipt.json", Body: `{"kind":"cuda","version":"12.4.1","source":"archive"}`}},
		{"a receipt link inside the tree", fetchtest.Entry{Name: "receipt.json", Type: tar.TypeSymlink, Link: "LICENSE"}},
		{"a receipt in other case", fetchtest.Entry{Name: "Receipt.JSON", Body: "{}"}},
		{"a marker", fetchtest.Entry{Name: "lib/.cudaenv-1.tmp", Body: "x"}},
		{"a marker folder", fetchtest.Entry{Name: ".cudaenv/x", Body: "x"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := newMirror(t, fetchtest.Options{Faults: map[string]fetchtest.Fault{"cuda_cudart": {Extra: []fetchtest.Entry{tc.entry}}}})
			c := newClient(t, m)
			_, err := c.Fetch(t.Context(), minimal124(t, c), t.TempDir())
			if err == nil || !strings.Contains(err.Error(), "only cudaenv writes") || !strings.Contains(err.Error(), "cuda_cudart") {
				t.Fatalf("Fetch = %v", err)
			}
		})
	}
	t.Run("in a windows zip too", func(t *testing.T) {
		m := newMirror(t, fetchtest.Options{Faults: map[string]fetchtest.Fault{"cuda_cudart": {Extra: []fetchtest.Entry{{Name: "receipt.json", Body: "{}"}}}}})
		c := newClient(t, m)
		arts := selectFrom(t, c, fetch.CUDA, "12.4.1", fetch.Selection{Platform: "windows-x86_64", Profile: "minimal"})
		if _, err := c.Fetch(t.Context(), arts, t.TempDir()); err == nil || !strings.Contains(err.Error(), "only cudaenv writes") {
			t.Fatalf("Fetch = %v", err)
		}
	})
}

func TestFetchBoundsWhatAnArchiveUnpacksTo(t *testing.T) {
	cases := []struct {
		name     string
		entry    fetchtest.Entry
		platform string
		want     string
	}{
		{"a sparse file in the PAX format", fetchtest.Entry{Name: "lib/sparse", Type: fetchtest.TypePAXSparse, Size: 64 << 20}, "linux-x86_64", "sparse"},
		{"a sparse file in the old GNU format", fetchtest.Entry{Name: "lib/sparse", Type: tar.TypeGNUSparse, Size: 64 << 20}, "linux-x86_64", "sparse"},
		{"an xz bomb", fetchtest.Entry{Name: "lib/zeros", Zeros: 4 << 20}, "linux-x86_64", "unpacks to more than"},
		{"a zip bomb", fetchtest.Entry{Name: "lib/zeros", Zeros: 4 << 20}, "windows-x86_64", "unpacks to more than"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := newMirror(t, fetchtest.Options{Faults: map[string]fetchtest.Fault{"cuda_cudart": {Extra: []fetchtest.Entry{tc.entry}}}})
			c := newClient(t, m)
			arts := selectFrom(t, c, fetch.CUDA, "12.4.1", fetch.Selection{Platform: tc.platform, Components: []string{"cuda_cudart"}})
			dest := t.TempDir()
			_, err := c.Fetch(t.Context(), arts, dest)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "cuda_cudart") {
				t.Fatalf("Fetch = %v, want an error containing %q", err, tc.want)
			}
			if total, limit := rootfs.Size(dest), int64(100*arts[0].Size+1<<20); total > limit {
				t.Errorf("%d bytes were written from a %d-byte archive", total, arts[0].Size)
			}
		})
	}
}

func TestLinkLinuxLayoutNeverWritesOutsideTheTree(t *testing.T) {
	cases := []struct {
		name  string
		links map[string]string // in the tree → target ("$OUT" is the folder outside)
	}{
		{"targets is a link out of the tree", map[string]string{"targets": "$OUT"}},
		{"targets is a chain of links each harmless to look at", map[string]string{
			"lib/z1": "..", "lib/z2": "z1/..", "targets": "lib/z2/out"}},
		{"the arch folder is a link out", map[string]string{"targets/x86_64-linux": "$OUT"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newSandbox(t)
			out := filepath.Join(s.root, "store", "staging", "out")
			for _, d := range []string{filepath.Join(s.dest, "lib"), filepath.Join(s.dest, "include"), out} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			s.before = snapshot(t, s.root, s.dest)
			for name, target := range tc.links {
				p := filepath.Join(s.dest, filepath.FromSlash(name))
				os.MkdirAll(filepath.Dir(p), 0o755)
				if err := os.Symlink(strings.ReplaceAll(target, "$OUT", out), p); err != nil {
					t.Skip(err)
				}
			}
			err := fetch.LinkLinuxLayout(s.dest, "linux-x86_64")
			if err == nil {
				t.Error("LinkLinuxLayout wrote through a link")
			}
			s.unchanged(t)
		})
	}
}

func TestFetchChecksTheTreeAnUnpackHookMade(t *testing.T) {
	cases := []struct {
		name  string
		links map[string]string
		want  string
	}{
		{"a chain of links each harmless to look at", map[string]string{"lib/z1": "..", "lib/z2": "z1/.."}, "refusing symlink lib/z2 → z1/..: it resolves outside the tree"},
		{"a link that dangles", map[string]string{"lib/libx.so": "libx.so.1"}, "dangles"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := fetchtest.NewMirror(t, fetchtest.Options{Synthetic: true})
			c := newClient(t, m)
			arts := selectFrom(t, c, fetch.CUDA, "12.4.1", fetch.Selection{Platform: "linux-x86_64", Components: []string{"cuda_cudart"}})
			arts[0].Unpack = func(_ context.Context, _ *os.File, _ int64, dest string) error {
				if err := os.MkdirAll(filepath.Join(dest, "lib"), 0o755); err != nil {
					return err
				}
				for name, target := range tc.links {
					if err := os.Symlink(target, filepath.Join(dest, filepath.FromSlash(name))); err != nil {
						return err
					}
				}
				return nil
			}
			if _, err := c.Fetch(t.Context(), arts, t.TempDir()); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Fetch = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestFetchRefusesVersionsThatAreNotDigitsAndDots(t *testing.T) {
	for _, v := range []string{"12.4.127$(touch x)", "12.4.127;rm", "12.4.127\n", "../12", "", "12..4", "v12.4"} {
		t.Run(v, func(t *testing.T) {
			raw := `{"release_label":"12.4.1","cuda_cudart":{"name":"x","version":` + quote(v) + `,"linux-x86_64":{"relative_path":"c/x.tar.xz","sha256":"` + strings.Repeat("a", 64) + `","size":"10"}}}`
			m, err := fetch.Decode([]byte(raw), "12.4.1")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := m.Select(fetch.Selection{Platform: "linux-x86_64", Components: []string{"cuda_cudart"}}); err == nil || !strings.Contains(err.Error(), "version") {
				t.Errorf("Select = %v", err)
			}
			a := *m.Components["cuda_cudart"].Platforms["linux-x86_64"].Artifact
			a.URL = "http://127.0.0.1:1/x"
			if _, err := (&fetch.Client{}).Fetch(t.Context(), []fetch.Artifact{a}, t.TempDir()); err == nil || !strings.Contains(err.Error(), "version") {
				t.Errorf("Fetch = %v", err)
			}
		})
	}
	t.Run("a release label", func(t *testing.T) {
		raw := `{"release_label":"12.4.1$(id)","c":{"version":"1"}}`
		if _, err := fetch.Decode([]byte(raw), "12.4.1"); err == nil {
			t.Error("Decode accepted it")
		}
	})
}

func quote(s string) string {
	b := []byte{'"'}
	for _, r := range s {
		switch r {
		case '\\', '"':
			b = append(b, '\\', byte(r))
		case '\n':
			b = append(b, `\n`...)
		default:
			b = append(b, string(r)...)
		}
	}
	return string(append(b, '"'))
}
