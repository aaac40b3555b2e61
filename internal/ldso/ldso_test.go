package ldso

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// fakeFS is a set of objects by path; Open fails for the others.
type fakeFS map[string]Object

func (fs fakeFS) open(p string, arch int32) (Object, error) {
	o, ok := fs[p]
	if !ok {
		return Object{}, errors.New("no such file")
	}
	if o.Arch != arch {
		return Object{}, ErrWrongKind
	}
	o.Path = p
	return o, nil
}

const x86 = FlagX8664Lib64

func picks(r Result) []string {
	var out []string
	for _, p := range r.Picks {
		out = append(out, fmt.Sprintf("%s<-%s: %s (%s)", p.Name, p.By, p.Path, p.Via))
	}
	return out
}

func TestTheLoaderSearchesInGlibcsOrder(t *testing.T) {
	fs := fakeFS{
		"/app/lib/libtorch.so":                        {Arch: x86, Needed: []string{"libcusparse.so.12"}, RPath: []string{"$ORIGIN/../nvidia/jit"}},
		"/app/nvidia/sp/libcusparse.so.12":            {Arch: x86, Soname: "libcusparse.so.12", Needed: []string{"libnvJitLink.so.12"}, RunPath: []string{"$ORIGIN"}},
		"/app/nvidia/sp/libnvJitLink.so.12":           {Arch: x86, Soname: "libnvJitLink.so.12"},
		"/app/nvidia/jit/libnvJitLink.so.12":          {Arch: x86, Soname: "libnvJitLink.so.12"},
		"/cuda/lib64/libnvJitLink.so.12":              {Arch: x86, Soname: "libnvJitLink.so.12"},
		"/cuda/lib64/libcusparse.so.12":               {Arch: x86, Soname: "libcusparse.so.12"},
		"/usr/lib/x86_64-linux-gnu/libcusparse.so.12": {Arch: x86, Soname: "libcusparse.so.12"},
		"/i386/libcusparse.so.12":                     {Arch: 0x0800, Soname: "libcusparse.so.12"},
	}
	torch := func(rpath, runpath []string) Object {
		return Object{Path: "/app/lib/libtorch.so", Arch: x86, Needed: []string{"libcusparse.so.12"}, RPath: rpath, RunPath: runpath}
	}
	tests := []struct {
		desc string
		env  Env
		root Object
		want []string
	}{
		{"RUNPATH of a dependency comes after LD_LIBRARY_PATH (the nvJitLink trap)",
			Env{LibraryPath: []string{"/cuda/lib64"}},
			torch([]string{"$ORIGIN/../nvidia/sp"}, nil),
			[]string{"libcusparse.so.12<-/app/lib/libtorch.so: /app/nvidia/sp/libcusparse.so.12 (RPATH of /app/lib/libtorch.so)",
				"libnvJitLink.so.12<-/app/nvidia/sp/libcusparse.so.12: /cuda/lib64/libnvJitLink.so.12 (LD_LIBRARY_PATH)"}},
		{"RUNPATH on the loading object turns its RPATH off",
			Env{},
			torch([]string{"/nowhere"}, []string{"$ORIGIN/../nvidia/sp"}),
			[]string{"libcusparse.so.12<-/app/lib/libtorch.so: /app/nvidia/sp/libcusparse.so.12 (RUNPATH)",
				"libnvJitLink.so.12<-/app/nvidia/sp/libcusparse.so.12: /app/nvidia/sp/libnvJitLink.so.12 (RUNPATH)"}},
		{"an object of another kind is passed over",
			Env{LibraryPath: []string{"/i386"}, DefaultDirs: []string{"/usr/lib/x86_64-linux-gnu"}},
			Object{Path: "/p", Arch: x86, Needed: []string{"libcusparse.so.12"}},
			[]string{"libcusparse.so.12<-/p: /usr/lib/x86_64-linux-gnu/libcusparse.so.12 (default folder)"}},
		{"nothing found is said",
			Env{DefaultDirs: []string{}},
			Object{Path: "/p", Arch: x86, Needed: []string{"libnope.so.1"}},
			[]string{"libnope.so.1<-/p:  ()"}},
		{"NODEFLIB skips the default folders",
			Env{DefaultDirs: []string{"/usr/lib/x86_64-linux-gnu"}},
			Object{Path: "/p", Arch: x86, Needed: []string{"libcusparse.so.12"}, NoDefaultLib: true},
			[]string{"libcusparse.so.12<-/p:  ()"}},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			tt.env.Open = fs.open
			if got := picks(tt.env.Load(tt.root)); !slices.Equal(got, tt.want) {
				t.Errorf("\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestRPATHIsInheritedDownAChainWithoutRUNPATH(t *testing.T) {
	fs := fakeFS{
		"/a/libb.so": {Arch: x86, Soname: "libb.so", Needed: []string{"libc.so"}},
		"/c/libc.so": {Arch: x86, Soname: "libc.so"},
	}
	env := Env{Open: fs.open, DefaultDirs: []string{}}
	root := Object{Path: "/main", Arch: x86, Needed: []string{"libb.so"}, RPath: []string{"/a", "/c"}}
	want := []string{"libb.so<-/main: /a/libb.so (RPATH of /main)", "libc.so<-/a/libb.so: /c/libc.so (RPATH of /main)"}
	if got := picks(env.Load(root)); !slices.Equal(got, want) {
		t.Errorf("%q", got)
	}
}

func TestASonameLoadedFirstIsUsedAgainAndLoopsEnd(t *testing.T) {
	fs := fakeFS{
		"/a/liba.so": {Arch: x86, Soname: "liba.so", Needed: []string{"libb.so"}},
		"/a/libb.so": {Arch: x86, Soname: "libb.so", Needed: []string{"liba.so"}},
		"/b/liba.so": {Arch: x86, Soname: "liba.so"},
	}
	env := Env{Open: fs.open, LibraryPath: []string{"/a"}, DefaultDirs: []string{}}
	pre := Object{Path: "/b/liba.so", Arch: x86, Soname: "liba.so"}
	r := env.Load(pre, Object{Path: "/main", Arch: x86, Needed: []string{"liba.so", "libb.so"}})
	want := []string{"liba.so<-/main: /b/liba.so (already loaded)", "libb.so<-/main: /a/libb.so (LD_LIBRARY_PATH)", "liba.so<-/a/libb.so: /b/liba.so (already loaded)"}
	if got := picks(r); !slices.Equal(got, want) {
		t.Errorf("%q", got)
	}
	// A library loaded as libx.so answers to that name though its soname
	// is libx.so.1.
	fs2 := fakeFS{"/l/libx.so": {Arch: x86, Soname: "libx.so.1"}, "/l/liby.so": {Arch: x86, Soname: "liby.so", Needed: []string{"libx.so"}}}
	r = Env{Open: fs2.open, LibraryPath: []string{"/l"}, DefaultDirs: []string{}}.Load(Object{Path: "/main", Arch: x86, Needed: []string{"libx.so", "liby.so"}})
	if got := picks(r); got[2] != "libx.so<-/l/liby.so: /l/libx.so (already loaded)" {
		t.Errorf("%q", got)
	}
	// Many distinct objects are capped.
	many := fakeFS{}
	for i := range 100 {
		many[fmt.Sprintf("/l/lib%d.so", i)] = Object{Arch: x86, Soname: fmt.Sprintf("lib%d.so", i), Needed: []string{fmt.Sprintf("lib%d.so", i+1)}}
	}
	r = Env{Open: many.open, LibraryPath: []string{"/l"}, MaxObjects: 10, DefaultDirs: []string{}}.Load(Object{Path: "/main", Arch: x86, Needed: []string{"lib0.so"}})
	if !r.Truncated || len(r.Loaded) != 10 {
		t.Errorf("truncated %v, %d loaded", r.Truncated, len(r.Loaded))
	}
}

// cacheFile builds an ld.so.cache in glibc's new format, optionally after
// the old format's table.
func cacheFile(old bool, entries [][3]any) []byte {
	var strs bytes.Buffer
	n := len(entries)
	base := 48 + n*24
	var tab []byte
	for _, e := range entries {
		key := base + strs.Len()
		strs.WriteString(e[1].(string) + "\x00")
		val := base + strs.Len()
		strs.WriteString(e[2].(string) + "\x00")
		tab = binary.LittleEndian.AppendUint32(tab, uint32(e[0].(int)))
		tab = binary.LittleEndian.AppendUint32(tab, uint32(key))
		tab = binary.LittleEndian.AppendUint32(tab, uint32(val))
		tab = append(tab, make([]byte, 12)...)
	}
	hdr := []byte(newMagic)
	hdr = binary.LittleEndian.AppendUint32(hdr, uint32(n))
	hdr = binary.LittleEndian.AppendUint32(hdr, uint32(strs.Len()))
	hdr = append(hdr, make([]byte, 48-len(hdr))...)
	out := append(append(hdr, tab...), strs.Bytes()...)
	if old {
		o := append([]byte(oldMagic), 0)
		o = binary.LittleEndian.AppendUint32(o, 1)
		o = append(o, make([]byte, 12)...) // one old entry
		for len(o)%8 != 0 {
			o = append(o, 0)
		}
		out = append(o, out...)
	}
	return out
}

func TestParseCache(t *testing.T) {
	entries := [][3]any{
		{3, "libcudart.so.12", "/usr/lib/i686/libcudart.so.12"}, // i386: no architecture flag
		{0x0303&^0xff00 | FlagX8664Lib64, "libcudart.so.12", "/usr/local/cuda/lib64/libcudart.so.12"},
		{3 | FlagX8664Lib64, "libcudart.so.12", "/opt/other/libcudart.so.12"},
	}
	for _, old := range []bool{false, true} {
		c, err := ParseCache(cacheFile(old, entries))
		if err != nil {
			t.Fatal(err)
		}
		if p, ok := c.Lookup("libcudart.so.12", FlagX8664Lib64); !ok || p != "/usr/local/cuda/lib64/libcudart.so.12" {
			t.Errorf("old %v: %q %v", old, p, ok)
		}
		if _, ok := c.Lookup("libcudart.so.12", FlagAArch64); ok {
			t.Error("found for aarch64")
		}
	}
	good := cacheFile(false, entries)
	le := binary.LittleEndian
	for desc, b := range map[string][]byte{
		"empty":                  nil,
		"another format":         []byte("ld.so-1.7.0\x00\x00\x00\x00\x00"),
		"2^31 entries":           func() []byte { b := append([]byte{}, good...); le.PutUint32(b[20:], 1<<31); return b }(),
		"a name past the end":    func() []byte { b := append([]byte{}, good...); le.PutUint32(b[48+4:], 1<<30); return b }(),
		"a name without its end": good[:len(good)-1],
		"truncated header":       good[:30],
	} {
		if _, err := ParseCache(b); err == nil {
			t.Errorf("%s: parsed", desc)
		}
	}
}

func FuzzParseCache(f *testing.F) {
	f.Add(cacheFile(true, [][3]any{{3 | FlagX8664Lib64, "liba.so.1", "/a/liba.so.1"}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseCache(b)
		if err == nil && c.Len() > len(b)/24 {
			t.Fatalf("%d entries from %d bytes", c.Len(), len(b))
		}
	})
}
