package pypi_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/cudaenv/cudaenv/fetch/pypi"
	"github.com/cudaenv/cudaenv/fetch/pypi/pypitest"
)

func TestHostileWheelsFromTheIndexAreRefused(t *testing.T) {
	for _, tc := range []struct{ kind, want string }{
		{"escape", "resolves outside the tree"},
		{"receipt-link", "only cudaenv writes"},
		{"bomb", "unpacks to more than"},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			parent := t.TempDir()
			dest, home := filepath.Join(parent, "a", "b", "tree"), filepath.Join(parent, "home")
			for _, d := range []string{dest, home} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			bashrc := filepath.Join(home, ".bashrc")
			if err := os.WriteFile(bashrc, []byte("# mine\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			arg := ""
			if tc.kind != "bomb" {
				arg = bashrc
			}
			entries, err := pypitest.Hostile(tc.kind, arg)
			if err != nil {
				t.Fatal(err)
			}
			idx := pypitest.New(t, pypitest.Releases("12.4.1"), pypitest.Platforms(pypi.LinuxX86_64), pypitest.Extra("nvidia-cuda-runtime-cu12", entries...))
			ix, err := pypi.NewIndex(idx.URL(), pypi.WithHTTPClient(idx.Client()))
			if err != nil {
				t.Fatal(err)
			}
			res, err := ix.Resolve(context.Background(), pypi.LinuxX86_64, []pypi.Requirement{{Component: "cuda_cudart", Project: "nvidia-cuda-runtime-cu12", Version: "12.4.127"}})
			if err != nil {
				t.Fatal(err)
			}
			a := res.Artifacts[0]
			data := pypitest.Download(t, idx.Client(), a.URL, a.SHA256)
			err = pypi.ExtractWheel(bytes.NewReader(data), int64(len(data)), dest)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ExtractWheel = %v, want an error containing %q", err, tc.want)
			}
			if b, _ := os.ReadFile(bashrc); string(b) != "# mine\n" {
				t.Errorf(".bashrc now holds %q", b)
			}
		})
	}
}

// A hostile index claims a huge wheel and serves a zip64 end record that
// claims 2^56 (or 2^40) entries: archive/zip would size its list of
// entries from the claim (panic: makeslice, or out of memory) after two
// requests. Each lie is refused with one line, before any request for a
// size no wheel has, and without allocating what is claimed.
func TestHostileZip64ClaimsAreRefusedBeforeTheyCostMemory(t *testing.T) {
	const gib = 1 << 30
	for _, tc := range []struct {
		name        string
		entries     uint64
		dirSize     uint64
		claim       int64
		want        string
		noWheelGets bool // the wheel is not asked for at all
	}{
		{"a size of 2^62 on the index page, with 2^56 entries", 1 << 56, 0, 1 << 62, "the index page says the wheel is 4611686018427387904 bytes; no wheel is over 16 GiB: refusing it", true},
		{"2^56 entries in a wheel of 8 GiB", 1 << 56, 0, 8 * gib, "the zip directory claims 72057594037927936 entries; no real archive has more than 262144: refusing it", false},
		{"2^40 entries in a wheel of 8 GiB", 1 << 40, 0, 8 * gib, "the zip directory claims 1099511627776 entries; no real archive has more than 262144: refusing it", false},
		{"2^24 entries, which archive/zip would allocate for", 1 << 24, 1 << 30, 8 * gib, "the zip directory claims 16777216 entries; no real archive has more than 262144", false},
		{"a directory larger than any", 1000, 1 << 40, 8 * gib, "the zip directory claims 1099511627776 bytes; no real archive's is more than", false},
		{"a directory larger than the bytes before its end", 1000, 7 << 20, 7 << 20, "the zip directory claims 7340032 bytes, more than the", false},
		{"more entries than the directory's bytes hold", 10000, 0, 8 * gib, "the zip directory claims 10000 entries in", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := torch215(pypitest.ServeRanges)
			w.Zip64Entries, w.Zip64DirSize, w.ClaimSize = tc.entries, tc.dirSize, tc.claim
			srv, ix := frameworkIndex(t, w)
			f := wheelFile(t, ix, "torch", w.Filename())
			if f.Size != tc.claim {
				t.Fatalf("the page lists %d bytes, want %d", f.Size, tc.claim)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			m, err := ix.WheelMetadata(context.Background(), f, "")
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("WheelMetadata = %+v, %v; want one line containing %q", m, err, tc.want)
			}
			if !strings.HasPrefix(err.Error(), "read metadata of "+w.Filename()+": ") {
				t.Errorf("error %q does not name the wheel", err)
			}
			if hits := srv.Hits("/files/" + w.Filename()); tc.noWheelGets && hits != 0 || hits > 3 {
				t.Errorf("the wheel was requested %d times", hits)
			}
			// Bounded: range blocks and the end record, not the claim.
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
				t.Errorf("reading the lie allocated %d MiB", grew>>20)
			}
		})
	}
}

// The same lies in a wheel already downloaded (its sha256 the hostile
// page's own) are refused when it is opened to unpack.
func TestHostileZip64InADownloadedWheelIsRefusedWhenUnpacked(t *testing.T) {
	for _, entries := range []uint64{1 << 56, 1 << 40, 1 << 26} {
		w := torch215(pypitest.ServeWhole)
		w.Zip64Entries, w.ClaimSize = entries, 4<<30
		srv, _ := frameworkIndex(t, w)
		wh, _ := srv.Wheel(w.Filename())
		r := io.NewSectionReader(claimedBytes{wh.Data, w.ClaimSize}, 0, w.ClaimSize)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err := pypi.ExtractWheel(r, w.ClaimSize, t.TempDir())
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), "open wheel: the zip directory claims ") {
			t.Fatalf("%d entries: ExtractWheel = %v", entries, err)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
			t.Errorf("%d entries: opening the wheel allocated %d MiB", entries, grew>>20)
		}
	}
}

// claimedBytes is a file of size bytes: zeros, then data at its end.
type claimedBytes struct {
	data []byte
	size int64
}

func (c claimedBytes) ReadAt(p []byte, off int64) (int, error) {
	start := c.size - int64(len(c.data))
	for i := range p {
		pos := off + int64(i)
		switch {
		case pos >= c.size:
			return i, io.EOF
		case pos < start:
			p[i] = 0
		default:
			p[i] = c.data[pos-start]
		}
	}
	return len(p), nil
}
