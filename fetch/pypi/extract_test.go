package pypi

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A wheel of many files, written by all cores at once, lands as written:
// every file's bytes and mode, folders made once.
func TestExtractWheelWritesEveryFileOfABigWheelExactly(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	var entries []zipEntry
	want := map[string]zipEntry{}
	for i := range 300 {
		body := make([]byte, rng.Intn(40000))
		rng.Read(body[:len(body)/2]) // half noise, half zeros: both kinds of block
		e := zipEntry{name: fmt.Sprintf("nvidia/cu13/include/d%d/sub%d/h%d.h", i%7, i%13, i), body: string(body)}
		if i%5 == 0 {
			e.name = fmt.Sprintf("nvidia/cu13/bin/tool%d", i)
			e.mode = 0o755
		}
		entries = append(entries, e)
		rel, _ := EntryPath(e.name)
		want[rel] = e
	}
	dest := filepath.Join(t.TempDir(), `a b "c" $d`)
	if err := os.Mkdir(dest, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := extract(t, dest, buildZip(t, entries...)); err != nil {
		t.Fatal(err)
	}
	for rel, e := range want {
		p := filepath.Join(dest, filepath.FromSlash(rel))
		b, err := os.ReadFile(p)
		if err != nil || !bytes.Equal(b, []byte(e.body)) {
			t.Fatalf("%s: %d bytes, err %v; want %d bytes", rel, len(b), err, len(e.body))
		}
		fi, _ := os.Stat(p)
		wantMode := os.FileMode(0o644)
		if e.mode&0o111 != 0 {
			wantMode = 0o755
		}
		if fi.Mode() != wantMode {
			t.Errorf("%s: mode %v, want %v", rel, fi.Mode(), wantMode)
		}
	}
}

// One corrupt entry among many fails the wheel, naming that entry, however
// the entries were shared among the cores.
func TestExtractWheelNamesTheCorruptEntryAmongMany(t *testing.T) {
	var entries []zipEntry
	for i := range 40 {
		entries = append(entries, zipEntry{name: fmt.Sprintf("nvidia/cu13/lib/libx%d.so.13", i), body: strings.Repeat(fmt.Sprintf("entry %d ", i), 5000)})
	}
	data := buildZip(t, entries...)
	name := "nvidia/cu13/lib/libx17.so.13"
	i := bytes.Index(data, []byte(name)) + len(name) + 40
	data[i] ^= 0x55
	err := extract(t, t.TempDir(), data)
	if err == nil || !strings.Contains(err.Error(), name) {
		t.Fatalf("err = %v, want one naming %s", err, name)
	}
}
