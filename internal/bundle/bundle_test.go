package bundle

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func sum(b string) string {
	s := sha256.Sum256([]byte(b))
	return hex.EncodeToString(s[:])
}

var contents = map[string]string{
	"cuda/redist/redistrib_12.4.1.json":                                                 `{"release_label": "12.4.1"}`,
	"cuda/redist/cuda_nvcc/linux-x86_64/cuda_nvcc-linux-x86_64-12.4.131-archive.tar.xz": "nvcc archive bytes",
}

func goodIndex() Index {
	ix := Index{Format: Format, Entries: []Entry{{
		Kind: "cuda", Name: "12.4.1", Source: "nvidia", Release: "12.4.1", Platform: "linux-x86_64",
		Profile: "minimal", Manifest: "cuda/redist/redistrib_12.4.1.json", Components: []string{"cuda_nvcc"},
	}}}
	for _, name := range []string{"cuda/redist/redistrib_12.4.1.json", "cuda/redist/cuda_nvcc/linux-x86_64/cuda_nvcc-linux-x86_64-12.4.131-archive.tar.xz"} {
		ix.Files = append(ix.Files, File{Name: name, Size: int64(len(contents[name])), SHA256: sum(contents[name])})
	}
	return ix
}

func openContents(f File) (io.ReadCloser, error) {
	return io.NopCloser(strings.NewReader(contents[f.Name])), nil
}

func TestAWrittenBundleReadsBackAndIsAPlainTar(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, goodIndex(), openContents); err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	Write(&again, goodIndex(), openContents)
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Error("the same contents made different bytes")
	}
	r, err := Open(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	paths, err := r.Extract(dir)
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range contents {
		data, err := os.ReadFile(paths[name])
		if err != nil || string(data) != body || filepath.Base(paths[name]) != sum(body) {
			t.Errorf("%s: %q at %s (%v)", name, data, paths[name], err)
		}
	}
	if tarBin, err := exec.LookPath("tar"); err == nil {
		f := filepath.Join(t.TempDir(), "b.tar")
		os.WriteFile(f, buf.Bytes(), 0o644)
		out, err := exec.Command(tarBin, "-tf", f).Output()
		if err != nil {
			t.Fatal(err)
		}
		if lines := strings.Fields(string(out)); len(lines) != 3 || lines[0] != IndexName {
			t.Errorf("tar -tf lists %q", lines)
		}
	}
}

func TestWriteRefusesACacheThatChangedSinceItWasVerified(t *testing.T) {
	err := Write(io.Discard, goodIndex(), func(f File) (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader(strings.ToUpper(contents[f.Name]))), nil
	})
	if err == nil || !strings.Contains(err.Error(), "as verified earlier") {
		t.Fatalf("err = %v", err)
	}
}

// member is one raw tar member of a hand-made (hostile) bundle.
type member struct {
	name     string
	body     string
	typeflag byte
	link     string
	size     int64 // -1: len(body)
}

func rawTar(t *testing.T, members []member) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, m := range members {
		h := &tar.Header{Name: m.name, Typeflag: m.typeflag, Linkname: m.link, Mode: 0o644, Size: int64(len(m.body))}
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Typeflag != tar.TypeReg {
			h.Size = 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			tw.Write([]byte(m.body))
		}
	}
	tw.Close()
	return buf.Bytes()
}

func indexJSON(t *testing.T, ix Index) string {
	data, err := json.Marshal(ix)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// goodMembers is goodIndex's bundle, member by member, for edits.
func goodMembers(t *testing.T, ix Index) []member {
	ms := []member{{name: IndexName, body: indexJSON(t, ix)}}
	for _, f := range goodIndex().Files {
		ms = append(ms, member{name: f.Name, body: contents[f.Name]})
	}
	return ms
}

func TestHostileBundlesAreRefusedAndLeaveNothing(t *testing.T) {
	archive := "cuda/redist/cuda_nvcc/linux-x86_64/cuda_nvcc-linux-x86_64-12.4.131-archive.tar.xz"
	withIndex := func(edit func(*Index)) []member {
		ix := goodIndex()
		edit(&ix)
		return goodMembers(t, ix)
	}
	tests := []struct {
		desc    string
		members []member
		raw     []byte
		want    string
	}{
		{"a changed byte in an archive", func() []member {
			ms := goodMembers(t, goodIndex())
			ms[2].body = "nvcc archive bytez"
			return ms
		}(), nil, "does not match the index: sha256"},
		{"a manifest swapped for another", func() []member {
			ms := goodMembers(t, goodIndex())
			ms[1].body = `{"release_label": "12.4.10"}`
			return ms
		}(), nil, "is 28 bytes; the index says 27"},
		{"a manifest swapped for one of the same size", func() []member {
			ms := goodMembers(t, goodIndex())
			ms[1].body = `{"release_label": "12.4.9"}`
			return ms
		}(), nil, "redistrib_12.4.1.json does not match the index"},
		{"an extra file", append(goodMembers(t, goodIndex()), member{name: "cuda/redist/evil.sh", body: "rm -rf ~"}), nil, `member "cuda/redist/evil.sh" is not in the bundle's index`},
		{"a file the index lists is missing", goodMembers(t, goodIndex())[:2], nil, "which the bundle lacks"},
		{"a member twice", append(goodMembers(t, goodIndex()), goodMembers(t, goodIndex())[2]), nil, "appears twice"},
		{"a symlink member", append(goodMembers(t, goodIndex()), member{name: "cuda/redist/link", typeflag: tar.TypeSymlink, link: "/etc/passwd"}), nil, "is a symbolic link"},
		{"a hard link member", append(goodMembers(t, goodIndex()), member{name: archive + "2", typeflag: tar.TypeLink, link: "/etc/shadow"}), nil, "is a hard link"},
		{"a directory member", append(goodMembers(t, goodIndex())[:1], member{name: "cuda/", typeflag: tar.TypeDir}), nil, "is a directory"},
		{"a device member", append(goodMembers(t, goodIndex())[:1], member{name: "cuda/dev", typeflag: tar.TypeChar}), nil, "is a device"},
		{"a traversal name in the tar", append(goodMembers(t, goodIndex()), member{name: "../../etc/cron.d/x", body: "x"}), nil, `member "../../etc/cron.d/x" is not in the bundle's index`},
		{"a traversal name in the index", withIndex(func(ix *Index) { ix.Files = append(ix.Files, File{Name: "cuda/../../x", Size: 1, SHA256: sum("x")}) }), nil, "not a clean relative path"},
		{"an absolute name in the index", withIndex(func(ix *Index) { ix.Files = append(ix.Files, File{Name: "/etc/passwd", Size: 1, SHA256: sum("x")}) }), nil, "is absolute"},
		{"a dot-dot segment that is clean", withIndex(func(ix *Index) { ix.Files = append(ix.Files, File{Name: "../x", Size: 1, SHA256: sum("x")}) }), nil, "not a plain file name"},
		{"a backslash name", withIndex(func(ix *Index) { ix.Files = append(ix.Files, File{Name: `..\x`, Size: 1, SHA256: sum("x")}) }), nil, "not a plain file name"},
		{"a control character in a name", withIndex(func(ix *Index) { ix.Files = append(ix.Files, File{Name: "a\nb", Size: 1, SHA256: sum("x")}) }), nil, "not a plain file name"},
		{"a file listed twice", withIndex(func(ix *Index) { ix.Files = append(ix.Files, ix.Files[1]) }), nil, "lists " + archive + " twice"},
		{"a sha256 that is not one", withIndex(func(ix *Index) { ix.Files[1].SHA256 = "abc" }), nil, "is not 64 lower-case hex digits"},
		{"a negative size", withIndex(func(ix *Index) { ix.Files[1].Size = -1 }), nil, "out of range"},
		{"a manifest that is not listed", withIndex(func(ix *Index) { ix.Entries[0].Manifest = "cuda/redist/other.json" }), nil, "is not among the bundle's files"},
		{"another format", withIndex(func(ix *Index) { ix.Format = "cudaenv-bundle/99" }), nil, "is not cudaenv-bundle/1"},
		{"a platform that is not a key", withIndex(func(ix *Index) { ix.Entries[0].Platform = "../x" }), nil, "is not a platform key"},
		{"a version name with a slash", withIndex(func(ix *Index) { ix.Entries[0].Name = "../12.4.1" }), nil, "is not a version"},
		{"too many versions", withIndex(func(ix *Index) {
			for i := 0; i < MaxEntries; i++ {
				ix.Entries = append(ix.Entries, ix.Entries[0])
			}
		}), nil, "a bundle holds at most"},
		{"unknown fields in the index", []member{{name: IndexName, body: `{"format":"cudaenv-bundle/1","run":"sh"}`}}, nil, `unknown field "run"`},
		{"an oversized index", []member{{name: IndexName, body: strings.Repeat(" ", MaxIndexSize+1)}}, nil, "more than the 1048576 any bundle needs"},
		{"an index that is not first", append([]member{{name: "cuda/x", body: "x"}}, goodMembers(t, goodIndex())...), nil, `its first member is "cuda/x"`},
		{"an index that is a symlink", []member{{name: IndexName, typeflag: tar.TypeSymlink, link: "/etc/passwd"}}, nil, "not a cudaenv bundle"},
		{"not a tar at all", nil, []byte("PK\x03\x04 a zip"), "not a tar file"},
		{"a bundle cut off halfway", nil, rawTar(t, goodMembers(t, goodIndex()))[:1536+512+10], "unexpected EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			data := tt.raw
			if data == nil {
				data = rawTar(t, tt.members)
			}
			dir := t.TempDir()
			r, err := Open(bytes.NewReader(data))
			if err == nil {
				_, err = r.Extract(dir)
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if des, _ := os.ReadDir(dir); len(des) != 0 {
				t.Errorf("left in the extraction folder: %v", des)
			}
		})
	}
}

func TestCheckNameAcceptsWhatNVIDIAAndPyPIName(t *testing.T) {
	for _, name := range []string{
		"cuda/redist/cuda_nvcc/linux-x86_64/cuda_nvcc-linux-x86_64-12.4.131-archive.tar.xz",
		"cudnn/redist/cudnn/linux-x86_64/cudnn-linux-x86_64-9.5.1.17_cuda12-archive.tar.xz",
		"cuda/redist/libcublas/windows-x86_64/libcublas-windows-x86_64-12.4.5.8-archive.zip",
		"pypi/nvidia_cuda_runtime_cu12-12.4.127-py3-none-manylinux2014_x86_64.whl",
		"pypi/cuda-12.4.1-linux-x86_64.json",
	} {
		if err := CheckName(name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestAllowIsAskedBeforeAMemberIsWritten(t *testing.T) {
	archive := "cuda/redist/cuda_nvcc/linux-x86_64/cuda_nvcc-linux-x86_64-12.4.131-archive.tar.xz"
	// The index and the tar header both say 1 TiB; the bundle holds its
	// first bytes only. Without a cap, Extract would try to write it all.
	ix := goodIndex()
	ix.Files[1].Size = 1 << 40
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, m := range goodMembers(t, ix)[:2] {
		tw.WriteHeader(&tar.Header{Name: m.name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(m.body))})
		tw.Write([]byte(m.body))
	}
	tw.WriteHeader(&tar.Header{Name: archive, Typeflag: tar.TypeReg, Mode: 0o644, Size: 1 << 40})
	tw.Write([]byte("nvcc archive bytes"))
	tw.Flush()
	r, err := Open(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var asked []string
	r.Allow = func(f File, done map[string]string) error {
		asked = append(asked, f.Name)
		if f.Name == archive {
			if done["cuda/redist/redistrib_12.4.1.json"] == "" {
				t.Errorf("asked about the archive before the manifest was extracted: %v", done)
			}
			return fmt.Errorf("member %s is %d bytes; its manifest lists 18", f.Name, f.Size)
		}
		return nil
	}
	dir := t.TempDir()
	_, err = r.Extract(dir)
	if err == nil || err.Error() != "member "+archive+" is 1099511627776 bytes; its manifest lists 18" {
		t.Fatalf("err = %v", err)
	}
	if len(asked) != 2 {
		t.Errorf("asked about %q", asked)
	}
	if des, _ := os.ReadDir(dir); len(des) != 0 {
		t.Errorf("left in the extraction folder: %v", des)
	}
}
