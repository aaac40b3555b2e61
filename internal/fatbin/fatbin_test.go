package fatbin

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// cuobjdump reads what `cuobjdump --list-elf --list-ptx` printed for a
// fixture (testdata/build.sh): the cubins' and the PTX's architectures in
// its order ("sm_90a"; PTX is named sm_ too).
func cuobjdump(t *testing.T, name string) (elf, ptx []string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".cuobjdump"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		parts := strings.Split(f[len(f)-1], ".")
		arch := parts[len(parts)-2]
		if f[0] == "ELF" {
			elf = append(elf, arch)
		} else {
			ptx = append(ptx, arch)
		}
	}
	return elf, ptx
}

func names(es []Entry) (sass, ptx []string) {
	for _, e := range es {
		if e.Kind == SASS {
			sass = append(sass, e.Name())
		} else {
			ptx = append(ptx, strings.Replace(e.Name(), "compute_", "sm_", 1))
		}
	}
	return sass, ptx
}

var fixtures = []string{"plain", "lz4", "zstd", "default", "concat", "ptx78"}

func TestReadListsWhatCuobjdumpLists(t *testing.T) {
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", name+".fatbin"))
			if err != nil {
				t.Fatal(err)
			}
			wantELF, wantPTX := cuobjdump(t, name)
			es, err := Read(bytes.NewReader(b), int64(len(b)), DefaultLimits)
			if err != nil {
				t.Fatal(err)
			}
			sass, ptx := names(es)
			if !slices.Equal(sass, wantELF) || !slices.Equal(ptx, wantPTX) {
				t.Errorf("Read: sass %v ptx %v; cuobjdump: %v %v", sass, ptx, wantELF, wantPTX)
			}
			// In a stream, with other bytes around it (a magic among them).
			junk := binary.LittleEndian.AppendUint32([]byte("\x7fELF.."), Magic)
			stream := append(append(append([]byte{}, junk...), b...), junk...)
			es2, err := Scan(bytes.NewReader(stream), DefaultLimits)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(es, es2) {
				t.Errorf("Scan: %+v\nRead: %+v", es2, es)
			}
		})
	}
}

func TestHeadersSayISAAndCompression(t *testing.T) {
	tests := []struct {
		name string
		want []string // kind name isa compression, for each entry
	}{
		{"plain", []string{"sm_75 1.8 -", "sm_90 1.8 -", "compute_90 9.5 -"}},
		{"lz4", []string{"sm_75 1.8 lz4", "sm_90a 1.8 lz4", "compute_90a 9.5 lz4", "sm_100 1.8 lz4", "compute_100f 9.5 lz4"}},
		{"zstd", []string{"sm_80 1.8 zstd", "sm_120 1.8 zstd", "compute_120 9.5 zstd"}},
		{"default", []string{"sm_86 1.8 -", "sm_89 1.8 -", "compute_89 9.5 zstd"}},
		{"ptx78", []string{"compute_80 7.8 zstd"}},
	}
	for _, tt := range tests {
		b, _ := os.ReadFile(filepath.Join("testdata", tt.name+".fatbin"))
		es, err := Read(bytes.NewReader(b), int64(len(b)), DefaultLimits)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range es {
			c := e.Compression
			if c == "" {
				c = "-"
			}
			got = append(got, e.Name()+" "+e.ISA+" "+c)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestHostileFatbinsAreRefusedWithoutPanicking(t *testing.T) {
	plain, _ := os.ReadFile("testdata/plain.fatbin")
	concat, _ := os.ReadFile("testdata/concat.fatbin")
	le := binary.LittleEndian
	mod := func(src []byte, f func(b []byte)) []byte {
		b := append([]byte{}, src...)
		f(b)
		return b
	}
	tests := []struct {
		desc string
		data []byte
	}{
		{"a container claiming more bytes than the section has", mod(plain, func(b []byte) { le.PutUint64(b[8:], 1<<62) })},
		{"an entry whose payload runs past its container", mod(plain, func(b []byte) { le.PutUint64(b[16+8:], 1<<40) })},
		{"an entry header shorter than 64 bytes", mod(plain, func(b []byte) { le.PutUint32(b[16+4:], 8) })},
		{"an entry header of 4 GiB", mod(plain, func(b []byte) { le.PutUint32(b[16+4:], 0xffffffff) })},
		{"a wrong version", mod(plain, func(b []byte) { le.PutUint16(b[4:], 2) })},
		{"a concatenated entry listing 2^31 images", mod(concat, func(b []byte) { le.PutUint32(b[concatAt(concat)+64:], 1<<31) })},
		{"a concatenated entry whose images do not chain", mod(concat, func(b []byte) { le.PutUint32(b[concatAt(concat)+72+4:], 12345) })},
		{"a truncated container", plain[:len(plain)-100]},
		{"garbage", bytes.Repeat([]byte{0xff}, 300)},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			_, err := Read(bytes.NewReader(tt.data), int64(len(tt.data)), DefaultLimits)
			if !errors.Is(err, ErrFormat) {
				t.Errorf("Read: err = %v, want ErrFormat", err)
			}
			Scan(bytes.NewReader(tt.data), DefaultLimits) // must not panic or hang
		})
	}
}

// concatAt is the offset of the first concatenated entry in a fixture.
func concatAt(b []byte) int {
	for p := 16; p+64 <= len(b); {
		if binary.LittleEndian.Uint16(b[p:]) == kindConcat {
			return p
		}
		p += int(binary.LittleEndian.Uint32(b[p+4:])) + int(binary.LittleEndian.Uint64(b[p+8:]))
	}
	panic("no concatenated entry")
}

func TestCountsAreCapped(t *testing.T) {
	// Many empty containers, each a header with one tiny entry.
	var one []byte
	one = binary.LittleEndian.AppendUint32(one, Magic)
	one = binary.LittleEndian.AppendUint16(one, 1)
	one = binary.LittleEndian.AppendUint16(one, 16)
	one = binary.LittleEndian.AppendUint64(one, 64)
	e := make([]byte, 64)
	binary.LittleEndian.PutUint16(e, kindELF)
	binary.LittleEndian.PutUint32(e[4:], 64)
	binary.LittleEndian.PutUint32(e[28:], 80)
	one = append(one, e...)
	data := bytes.Repeat(one, 100)
	lim := Limits{Containers: 10, Entries: 50}
	if _, err := Read(bytes.NewReader(data), int64(len(data)), lim); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "more than 10") {
		t.Errorf("Read: %v", err)
	}
	if _, err := Scan(bytes.NewReader(data), lim); !errors.Is(err, ErrFormat) {
		t.Errorf("Scan: %v", err)
	}
	es, err := Read(bytes.NewReader(data), int64(len(data)), DefaultLimits)
	if err != nil || len(es) != 100 || es[0].Name() != "sm_80" {
		t.Errorf("%d entries, %v", len(es), err)
	}
}

func FuzzRead(f *testing.F) {
	for _, name := range fixtures {
		b, _ := os.ReadFile(filepath.Join("testdata", name+".fatbin"))
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		lim := Limits{Containers: 64, Entries: 256}
		es, _ := Read(bytes.NewReader(b), int64(len(b)), lim)
		if len(es) > lim.Entries {
			t.Fatalf("%d entries past the cap", len(es))
		}
		Scan(bytes.NewReader(b), lim)
	})
}
