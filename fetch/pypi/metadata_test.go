package pypi_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cudaenv/cudaenv/fetch/pypi"
	"github.com/cudaenv/cudaenv/fetch/pypi/pypitest"
)

// torch215 is a torch-like wheel of a release newer than every table: the
// CUDA 13 pins of torch 2.11+ (cuda-toolkit with extras, cuDNN, NCCL;
// shape from the research data in shared/nvidia/compat/torch_pins.tsv), with versions of
// the future.
func torch215(serve pypitest.ServeMode) pypitest.FrameworkWheel {
	return pypitest.FrameworkWheel{
		Project: "torch", Version: "2.15.0", Serve: serve,
		Requires: []string{
			`filelock`,
			`typing-extensions>=4.10.0`,
			`cuda-toolkit[cublas,cudart,cufft,cupti,nvrtc]==13.2.2; platform_system == "Linux"`,
			`nvidia-cudnn-cu13==9.26.0.51; platform_system == "Linux"`,
			`nvidia-nccl-cu13==2.30.1; platform_system == "Linux" and platform_machine == "x86_64"`,
			`triton==3.9.0; platform_system == "Linux" and platform_machine == "x86_64"`,
			`optree>=0.13.0; extra == "optree"`,
			`sympy>=1.13.3; python_version >= "3.9"`,
		},
		ProvidesExtra: []string{"optree", "opt-einsum"},
	}
}

func frameworkIndex(t *testing.T, ws ...pypitest.FrameworkWheel) (*pypitest.Index, *pypi.Index) {
	t.Helper()
	srv := pypitest.New(t, pypitest.Frameworks(ws...))
	ix, err := pypi.NewIndex(srv.URL(), pypi.WithHTTPClient(srv.Client()), pypi.WithRetries(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	return srv, ix
}

func wheelFile(t *testing.T, ix *pypi.Index, project, filename string) pypi.File {
	t.Helper()
	page, err := ix.Project(context.Background(), project)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range page.Files {
		if f.Filename == filename {
			return f
		}
	}
	t.Fatalf("%s is not on the page of %s", filename, project)
	return pypi.File{}
}

func TestWheelMetadataIsReadEachWayTheIndexAllows(t *testing.T) {
	big := torch215(pypitest.ServeRanges)
	big.Padding = 6 << 20 // more than cudaenv reads whole
	tests := []struct {
		name      string
		wheel     pypitest.FrameworkWheel
		via       string
		wholeGets bool // whether the wheel file itself may be fetched
	}{
		{"a PEP 658 metadata file is read without touching the wheel", torch215(pypitest.ServeMetadata), "metadata", false},
		{"a big wheel on a server with ranges is read through its zip directory", big, "range", true},
		{"a small wheel on a server without ranges is read whole", torch215(pypitest.ServeWhole), "wheel", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, ix := frameworkIndex(t, tt.wheel)
			f := wheelFile(t, ix, "torch", tt.wheel.Filename())
			m, err := ix.WheelMetadata(context.Background(), f, "")
			if err != nil {
				t.Fatal(err)
			}
			if m.Via != tt.via {
				t.Errorf("read via %q, want %q", m.Via, tt.via)
			}
			if m.Name != "torch" || m.Version != "2.15.0" || !slices.Equal(m.RequiresDist, tt.wheel.Requires) {
				t.Errorf("metadata = %+v", m)
			}
			if hits := srv.Hits("/files/" + tt.wheel.Filename()); (hits > 0) != tt.wholeGets || hits > 4 {
				t.Errorf("the wheel was requested %d times", hits)
			}
		})
	}
}

func TestWheelMetadataFromAPlainHTMLIndexUsesItsMetadataAttribute(t *testing.T) {
	w := torch215(pypitest.ServeMetadata)
	srv := pypitest.New(t, pypitest.Frameworks(w), pypitest.HTMLOnly())
	ix, _ := pypi.NewIndex(srv.URL(), pypi.WithHTTPClient(srv.Client()), pypi.WithRetries(0, 0))
	f := wheelFile(t, ix, "torch", w.Filename())
	if !f.Metadata || len(f.MetadataSHA256) != 64 {
		t.Fatalf("file = %+v, want core metadata with its sha256", f)
	}
	m, err := ix.WheelMetadata(context.Background(), f, "")
	if err != nil || m.Via != "metadata" {
		t.Fatalf("metadata %+v, %v", m, err)
	}
}

// cachedMetadata is the one file under cache/metadata.
func cachedMetadata(t *testing.T, cache string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(cache, "metadata", "*.METADATA"))
	if len(files) != 1 {
		t.Fatalf("metadata cache holds %q, want one file", files)
	}
	return files[0]
}

func TestWheelMetadataIsCachedOnlyWhenCheckedAndTiedToWhatItDescribes(t *testing.T) {
	other := torch215(pypitest.ServeMetadata)
	other.Version = "2.14.0"
	w := torch215(pypitest.ServeMetadata)
	srv, ix := frameworkIndex(t, w, other)
	cache := filepath.Join(t.TempDir(), "a cache 'with' $pace")
	f := wheelFile(t, ix, "torch", w.Filename())
	read := func() *pypi.Metadata {
		t.Helper()
		m, err := ix.WheelMetadata(context.Background(), f, cache)
		if err != nil || m.Name != "torch" || m.Version != "2.15.0" {
			t.Fatalf("WheelMetadata = %+v, %v", m, err)
		}
		return m
	}
	read()
	if m := read(); m.Via != "cache" {
		t.Fatalf("second read via %q; want it from the cache", m.Via)
	}
	if n := srv.Hits("/files/" + w.Filename() + ".metadata"); n != 1 {
		t.Errorf("metadata fetched %d times, want 1", n)
	}
	cached := cachedMetadata(t, cache)
	if strings.Contains(filepath.Base(cached), f.SHA256) {
		t.Errorf("cached as %s: under the sha256 the page claims alone", filepath.Base(cached))
	}
	honest, _ := os.ReadFile(cached)

	fresh := func(why string) {
		t.Helper()
		if m := read(); m.Via == "cache" {
			t.Fatalf("%s: believed", why)
		}
		os.Remove(cached)
		read() // cached again, as it was
	}
	// Other pins with the right first line: the .metadata file's sha256
	// is checked again.
	sealed := bytes.SplitN(honest, []byte("\n"), 2)[0]
	os.WriteFile(cached, append(sealed, "\nMetadata-Version: 2.1\nName: torch\nVersion: 2.15.0\nRequires-Dist: nvidia-cudnn-cu13==1.0\n\n"...), 0o600)
	fresh("other pins under the right key")
	// Another wheel's cached metadata renamed to this one's name.
	fo := wheelFile(t, ix, "torch", other.Filename())
	if _, err := ix.WheelMetadata(context.Background(), fo, cache); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(cache, "metadata", "*.METADATA"))
	for _, p := range files {
		if p != cached {
			os.Rename(p, cached)
		}
	}
	fresh("another wheel's metadata renamed")
	// A file others may write.
	os.Chmod(cached, 0o666)
	fresh("a file others may write")
	// A link planted at the cache name is not followed.
	os.Remove(cached)
	target := filepath.Join(t.TempDir(), "elsewhere")
	os.WriteFile(target, honest, 0o600)
	if err := os.Symlink(target, cached); err != nil {
		t.Fatal(err)
	}
	fresh("a link")
	// Metadata another user wrote in a shared cache is not believed.
	if err := os.Chown(cached, 65534, 65534); err == nil {
		fresh("another user's file")
	} else {
		t.Logf("cannot give the cache file to another user (%v); that case is not checked here", err)
	}
}

func TestWheelMetadataNothingCheckedIsCached(t *testing.T) {
	big := torch215(pypitest.ServeRanges)
	big.Padding = 6 << 20
	small := torch215(pypitest.ServeWhole)
	unhashed := torch215(pypitest.ServeMetadata)
	for _, tc := range []struct {
		name   string
		wheel  pypitest.FrameworkWheel
		opts   []pypitest.Option
		cached bool
	}{
		{"metadata read by ranges (part of a wheel no hash checked) is read again", big, nil, false},
		{"a small wheel read whole, its sha256 checked, is cached", small, nil, true},
		{"a .metadata file checked against its sha256 is cached, the wheel's own unlisted", unhashed, []pypitest.Option{pypitest.WithoutHash("torch")}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := pypitest.New(t, append(tc.opts, pypitest.Frameworks(tc.wheel))...)
			ix, _ := pypi.NewIndex(srv.URL(), pypi.WithHTTPClient(srv.Client()), pypi.WithRetries(0, 0))
			f := wheelFile(t, ix, "torch", tc.wheel.Filename())
			cache := t.TempDir()
			for range 2 {
				if _, err := ix.WheelMetadata(context.Background(), f, cache); err != nil {
					t.Fatal(err)
				}
			}
			m, err := ix.WheelMetadata(context.Background(), f, cache)
			if err != nil || (m.Via == "cache") != tc.cached {
				t.Fatalf("third read via %q (%v); cached: %v", m.Via, err, tc.cached)
			}
		})
	}
}

// A hostile index lists an honest wheel's sha256 and serves its own
// pins: one run against it plants nothing that a later run against the
// honest index reads "from the cache".
func TestAHostileIndexPlantsNoMetadataAnHonestIndexReads(t *testing.T) {
	honestWheel := torch215(pypitest.ServeMetadata)
	honestSrv, honest := frameworkIndex(t, honestWheel)
	hf := wheelFile(t, honest, "torch", honestWheel.Filename())
	evil := torch215(pypitest.ServeMetadata)
	evil.Requires = []string{`nvidia-cudnn-cu13==6.6.6.6; platform_system == "Linux"`}
	evil.ClaimSHA256 = hf.SHA256
	_, hostile := frameworkIndex(t, evil)
	ef := wheelFile(t, hostile, "torch", evil.Filename())
	if ef.SHA256 != hf.SHA256 || ef.Filename != hf.Filename {
		t.Fatalf("the hostile page lists %s %s, not the honest wheel's", ef.Filename, ef.SHA256)
	}
	cache := t.TempDir()
	if _, err := hostile.WheelMetadata(context.Background(), ef, cache); err != nil {
		t.Fatal(err)
	}
	m, err := honest.WheelMetadata(context.Background(), hf, cache)
	if err != nil || m.Via == "cache" || slices.Contains(m.RequiresDist, evil.Requires[0]) {
		t.Fatalf("the honest index's wheel read %+v, %v: the hostile run's pins", m, err)
	}
	if n := honestSrv.Hits("/files/" + honestWheel.Filename() + ".metadata"); n != 1 {
		t.Errorf("the honest metadata was fetched %d times, want 1", n)
	}
}

func TestHostileMetadataGivesAClearError(t *testing.T) {
	huge := "Metadata-Version: 2.1\nName: torch\nVersion: 2.15.0\nSummary: " + strings.Repeat("x", 5<<20) + "\n\n"
	deep := torch215(pypitest.ServeMetadata)
	deep.Requires = append(deep.Requires, `nvidia-cublas==13.1.0.3; `+strings.Repeat("(", 40)+`os_name == "posix"`+strings.Repeat(")", 40))
	liar := torch215(pypitest.ServeMetadata)
	liar.Metadata = "Metadata-Version: 2.1\nName: nvidia-cudnn-cu13\nVersion: 2.15.0\n\n"
	hugeRange := torch215(pypitest.ServeRanges)
	hugeRange.Metadata, hugeRange.Padding = huge, 6<<20
	badRange := torch215(pypitest.ServeRanges)
	badRange.Padding, badRange.BadRange = 6<<20, true
	tests := []struct {
		name  string
		wheel pypitest.FrameworkWheel
		want  string
	}{
		{"a huge metadata file", func() pypitest.FrameworkWheel { w := torch215(pypitest.ServeMetadata); w.Metadata = huge; return w }(), "larger than"},
		{"a huge METADATA inside the wheel", hugeRange, "more than the"},
		{"a marker nested deeper than any real one", deep, "nested deeper than"},
		{"metadata that is not headers", func() pypitest.FrameworkWheel {
			w := torch215(pypitest.ServeMetadata)
			w.Metadata = "Metadata-Version: 2.1\nName: torch\nVersion: 2.15.0\nthis line is no header\n\n"
			return w
		}(), "is not a header"},
		{"a requirement that cannot be read", func() pypitest.FrameworkWheel {
			w := torch215(pypitest.ServeMetadata)
			w.Requires = []string{`nvidia-cudnn-cu13==9.26.0.51 $(rm -rf ~)`}
			return w
		}(), "cannot read version clause"},
		{"metadata that names another project", liar, "not the wheel's torch 2.15.0"},
		{"range answers with other bytes than asked", badRange, "range answer does not match the request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ix := frameworkIndex(t, tt.wheel)
			_, err := ix.FrameworkPins(context.Background(), pypi.Framework{Project: "torch", Version: "2.15.0"}, pypi.LinuxX86_64, "3.12", "")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one saying %q", err, tt.want)
			}
		})
	}
}

// BenchmarkWheelMetadataByRanges reads a 6 MiB wheel's METADATA through
// range requests on a local index (no cache): the cost a new torch
// release adds to install --for, less the network.
func BenchmarkWheelMetadataByRanges(b *testing.B) {
	w := torch215(pypitest.ServeRanges)
	w.Padding = 6 << 20
	srv := pypitest.New(b, pypitest.Frameworks(w))
	ix, _ := pypi.NewIndex(srv.URL(), pypi.WithHTTPClient(srv.Client()), pypi.WithRetries(0, 0))
	page, err := ix.Project(context.Background(), "torch")
	if err != nil {
		b.Fatal(err)
	}
	f := page.Files[0]
	b.ResetTimer()
	for range b.N {
		if _, err := ix.WheelMetadata(context.Background(), f, ""); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(srv.Hits("/files/"+w.Filename()))/float64(b.N), "requests/op")
}
