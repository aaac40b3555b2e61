package fetch_test

import (
	"archive/zip"
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/cudaenv/cudaenv/fetch"
	"github.com/cudaenv/cudaenv/fetch/fetchtest"
)

func smallZip(t *testing.T, comment string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, name := range []string{"a.txt", "dir/b.txt"} {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte("hello " + name))
	}
	if comment != "" {
		zw.SetComment(comment)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// withEnd64 is fetchtest.Zip64End with the directory's real size.
func withEnd64(data []byte, entries, loc uint64) []byte {
	return fetchtest.Zip64End(data, entries, 0, loc)
}

func TestOpenZipTakesRealArchivesAndRefusesLiesAboutTheirDirectory(t *testing.T) {
	plain := smallZip(t, "")
	for _, tc := range []struct {
		name string
		data []byte
		want string // "" for an archive that opens
	}{
		{"a plain archive", plain, ""},
		{"an archive with a comment", smallZip(t, strings.Repeat("c", 2000)), ""},
		{"a zip64 end record that tells the truth", withEnd64(plain, 2, 0), ""},
		{"a zip64 end record claiming 2^56 entries", withEnd64(plain, 1<<56, 0), "the zip directory claims 72057594037927936 entries"},
		{"a zip64 end record claiming 2^40 entries", withEnd64(plain, 1<<40, 0), "the zip directory claims 1099511627776 entries"},
		{"more entries than the directory's bytes hold", withEnd64(plain, 1000, 0), "entries in"},
		{"a zip64 locator pointing past the file", withEnd64(plain, 2, 1<<62), "zip64 end record is claimed at byte 4611686018427387904"},
		{"not a zip at all", []byte(strings.Repeat("x", 100)), "has no end record"},
		{"too short to be one", []byte("PK"), "too short"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			zr, err := fetch.OpenZip(bytes.NewReader(tc.data), int64(len(tc.data)))
			if tc.want == "" {
				if err != nil || len(zr.File) != 2 {
					t.Fatalf("OpenZip = %v", err)
				}
				return
			}
			if err == nil || !errors.Is(err, fetch.ErrZipDirectory) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("OpenZip = %v; want an error containing %q", err, tc.want)
			}
		})
	}
}
