package install

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/cudaenv/cudaenv/fetch/fetchtest"
	"github.com/cudaenv/cudaenv/internal/bundle"
	"github.com/cudaenv/cudaenv/store"
)

// countingReader counts the bytes an import read from its bundle: what
// was never read was never written.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// unpacked is a bundle taken apart: its index, and each member's bytes.
func unpacked(t *testing.T, data []byte) (bundle.Index, map[string][]byte) {
	t.Helper()
	tr := tar.NewReader(bytes.NewReader(data))
	var ix bundle.Index
	files := map[string][]byte{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return ix, files
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		if h.Name == bundle.IndexName {
			if err := json.Unmarshal(b, &ix); err != nil {
				t.Fatal(err)
			}
			continue
		}
		files[h.Name] = b
	}
}

// packRaw packs a bundle by hand, member by member in the index's order
// (the index as given, not checked); raw replaces a member with the tar
// blocks given, and stop ends the bundle right after that member, with
// no end-of-archive blocks.
func packRaw(t *testing.T, ix bundle.Index, files, raw map[string][]byte, stop string) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	put := func(name string, body []byte) {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Size: int64(len(body)), Mode: 0o644}); err != nil {
			t.Fatal(err)
		}
		tw.Write(body)
		tw.Flush()
	}
	idx, _ := json.Marshal(ix)
	put(bundle.IndexName, idx)
	for _, f := range ix.Files {
		if b, ok := raw[f.Name]; ok {
			buf.Write(b)
		} else {
			put(f.Name, files[f.Name])
		}
		if f.Name == stop {
			return buf.Bytes()
		}
	}
	tw.Close()
	return buf.Bytes()
}

// hugeHeader is a member whose header says size bytes followed by what
// little of it there is: a bundle cut off, or one that would go on.
func hugeHeader(t *testing.T, name string, size int64, start []byte) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Size: size, Mode: 0o644}); err != nil {
		t.Fatal(err)
	}
	tw.Write(start)
	return buf.Bytes()
}

func TestABundleMemberIsCappedBeforeItIsWritten(t *testing.T) {
	w := newWorld(t)
	data, _ := export(t, w.installer(t), ExportRequest{Args: []string{"12.4"}, Profile: "minimal"})
	good, files := unpacked(t, data)
	manifest := "cuda/redist/redistrib_12.4.1.json"
	var nvcc string
	for n := range files {
		if strings.Contains(n, "/cuda_nvcc/") {
			nvcc = n
		}
	}
	sizeOf := func(ix *bundle.Index, name string) *int64 {
		for i := range ix.Files {
			if ix.Files[i].Name == name {
				return &ix.Files[i].Size
			}
		}
		t.Fatalf("no %s in the bundle", name)
		return nil
	}
	const tib = 1 << 40
	tests := []struct {
		desc string
		make func() []byte
		want string
		// maxRead bounds what the import may read of the bundle: the
		// member refused is never read.
		maxRead int64
	}{
		// (Sparse members stay at 1 GiB and less: with both checks gone,
		// the test would write all of it.)
		{"a sparse member of 1 GiB, as the index says but not its manifest", func() []byte {
			ix := good
			ix.Files = append([]bundle.File(nil), good.Files...)
			*sizeOf(&ix, nvcc) = 1 << 30
			return packRaw(t, ix, files, map[string][]byte{nvcc: fetchtest.SparseMember(nvcc, fetchtest.TypePAXSparse, 1<<30)}, "")
		}, nvcc + " in the bundle is not what its manifest lists", 0},
		{"a sparse member of 64 MiB, as the index and its manifest say", func() []byte {
			// The manifest is the bundle's too: all of it agrees, and only
			// the sparseness gives it away.
			const big = 64 << 20
			var m map[string]any
			if err := json.Unmarshal(files[manifest], &m); err != nil {
				t.Fatal(err)
			}
			m["cuda_nvcc"].(map[string]any)["linux-x86_64"].(map[string]any)["size"] = strconv.Itoa(big)
			edited := map[string][]byte{}
			for n, b := range files {
				edited[n] = b
			}
			edited[manifest], _ = json.Marshal(m)
			ix := good
			ix.Files = append([]bundle.File(nil), good.Files...)
			*sizeOf(&ix, nvcc) = big
			*sizeOf(&ix, manifest) = int64(len(edited[manifest]))
			for i := range ix.Files {
				if ix.Files[i].Name == manifest {
					ix.Files[i].SHA256 = sha256Hex(edited[manifest])
				}
			}
			return packRaw(t, ix, edited, map[string][]byte{nvcc: fetchtest.SparseMember(nvcc, fetchtest.TypePAXSparse, big)}, "")
		}, `bundle import: member "` + nvcc + `" is a sparse file; a bundle holds regular files only; nothing was installed`, 0},
		{"a sparse member of the size the manifest lists", func() []byte {
			return packRaw(t, good, files, map[string][]byte{nvcc: fetchtest.SparseMember(nvcc, fetchtest.TypePAXSparse, *sizeOf(&good, nvcc))}, "")
		}, "is a sparse file", 0},
		{"a sparse member in the old GNU format", func() []byte {
			return packRaw(t, good, files, map[string][]byte{nvcc: fetchtest.SparseMember(nvcc, tar.TypeGNUSparse, *sizeOf(&good, nvcc))}, "")
		}, `member "` + nvcc + `" is a sparse file`, 0},
		{"an archive of 1 TiB where its manifest lists less", func() []byte {
			ix := good
			ix.Files = append([]bundle.File(nil), good.Files...)
			*sizeOf(&ix, nvcc) = tib
			return packRaw(t, ix, files, map[string][]byte{nvcc: hugeHeader(t, nvcc, tib, bytes.Repeat([]byte{'x'}, 1<<20))}, nvcc)
		}, nvcc + " in the bundle is not what its manifest lists", 1 << 20},
		{"a manifest larger than any manifest", func() []byte {
			ix := good
			ix.Files = append([]bundle.File(nil), good.Files...)
			*sizeOf(&ix, manifest) = maxManifestSize + 1
			return packRaw(t, ix, files, map[string][]byte{manifest: hugeHeader(t, manifest, maxManifestSize+1, bytes.Repeat([]byte{' '}, 1<<20))}, manifest)
		}, "member " + manifest + " is a manifest of 16777217 bytes; none is more than 16777216; nothing was installed", 1 << 20},
		{"an archive ahead of the manifest that lists it", func() []byte {
			ix := good
			ix.Files = append([]bundle.File(nil), good.Files...)
			for i, f := range ix.Files {
				if f.Name == nvcc {
					ix.Files[0], ix.Files[i] = ix.Files[i], ix.Files[0]
				}
			}
			return packRaw(t, ix, files, nil, "")
		}, "it holds " + nvcc + ", which none of its versions uses (no manifest ahead of it lists it); nothing was installed", 0},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			in, st := airGapped(t, w)
			bad := tt.make()
			r := &countingReader{r: bytes.NewReader(bad)}
			// Room for anything: only the caps can stop these.
			_, err := in.Import(context.Background(), r, ImportRequest{FreeSpace: func(string) (int64, error) { return 1 << 60, nil }})
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasSuffix(err.Error(), "; nothing was installed") {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if tt.maxRead > 0 && r.n >= tt.maxRead {
				t.Errorf("read %d bytes of the bundle, into the member it refuses", r.n)
			}
			nothingLeft(t, st)
		})
	}
}

func TestABundleWhoseIndexIsSparseIsNoBundle(t *testing.T) {
	w := newWorld(t)
	in, st := airGapped(t, w)
	data := append(fetchtest.SparseMember(bundle.IndexName, fetchtest.TypePAXSparse, 1<<20), make([]byte, 1024)...)
	_, err := in.Import(context.Background(), bytes.NewReader(data), ImportRequest{})
	if err == nil || err.Error() != "bundle import: not a cudaenv bundle: its index is a sparse file, not a regular file" {
		t.Fatalf("err = %v", err)
	}
	nothingLeft(t, st)
}

func TestABundleLargerThanTheFreeSpaceIsRefusedFirst(t *testing.T) {
	w := newWorld(t)
	data, ex := export(t, w.installer(t), ExportRequest{Args: []string{"12.4"}, Profile: "minimal"})
	// Where the index ends: an import refused for room reads no further.
	cr := &countingReader{r: bytes.NewReader(data)}
	tr := tar.NewReader(cr)
	if _, err := tr.Next(); err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, tr)
	indexEnd := cr.n

	in, st := airGapped(t, w)
	var asked string
	r := &countingReader{r: bytes.NewReader(data)}
	_, err := in.Import(context.Background(), r, ImportRequest{FreeSpace: func(dir string) (int64, error) {
		asked = dir
		return ex.Bytes - 1, nil
	}})
	if err == nil {
		t.Fatal("imported with no room")
	}
	m := regexp.MustCompile(`^bundle import: the bundle holds (\d+) MiB and (.+) has (\d+) MiB free; free some space \(cudaenv cache prune\) or point CUDAENV_CACHE_DIR at a disk with room; nothing was installed$`).FindStringSubmatch(err.Error())
	if m == nil || m[2] != st.Dirs.Cache {
		t.Fatalf("err = %v", err)
	}
	if need, free := atoi(t, m[1]), atoi(t, m[3]); need <= free {
		t.Errorf("%d MiB needed and %d MiB free read as if it fits: %v", need, free, err)
	}
	if !strings.HasPrefix(asked, st.Dirs.Cache+string(filepath.Separator)) {
		t.Errorf("asked about %q, not a folder of the cache %s", asked, st.Dirs.Cache)
	}
	if r.n > indexEnd+512 {
		t.Errorf("read %d bytes of the bundle; its index ends at %d", r.n, indexEnd)
	}
	nothingLeft(t, st)

	// Exactly enough room is enough.
	res, err := in.Import(context.Background(), bytes.NewReader(data), ImportRequest{FreeSpace: func(string) (int64, error) { return ex.Bytes, nil }})
	if err != nil || len(res) != 1 || res[0].Outcome != Installed {
		t.Fatalf("with room: %+v, %v", res, err)
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// nothingLeft checks a refused import installed nothing and left nothing
// in the cache.
func nothingLeft(t *testing.T, st *store.Store) {
	t.Helper()
	for _, k := range []store.Kind{store.CUDA, store.Cudnn} {
		if list, _ := st.List(k); len(list) != 0 {
			t.Errorf("installed %+v", list)
		}
	}
	if des, _ := os.ReadDir(st.Dirs.Cache); len(des) != 0 {
		t.Errorf("left in the cache: %v", des)
	}
}
