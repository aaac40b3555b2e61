package rootfs

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// tree makes a tree under a fresh folder: "name" is a folder when it ends
// in '/', "name -> target" a symlink, anything else a file. It returns the
// tree and, beside it, a folder "outside" holding a file "secret".
func tree(t *testing.T, entries ...string) (dir, outside string) {
	t.Helper()
	parent := filepath.Join(t.TempDir(), `a b "c" $d`)
	dir, outside = filepath.Join(parent, "tree"), filepath.Join(parent, "outside")
	for _, d := range []string{dir, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		p := filepath.Join(dir, filepath.FromSlash(strings.TrimSuffix(strings.Fields(e)[0], "/")))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		switch {
		case strings.Contains(e, " -> "):
			_, target, _ := strings.Cut(e, " -> ")
			err = os.Symlink(filepath.FromSlash(target), p)
			if err != nil && runtime.GOOS == "windows" {
				t.Skipf("symlinks need privileges here: %v", err)
			}
		case strings.HasSuffix(e, "/"):
			err = os.MkdirAll(p, 0o755)
		default:
			err = os.WriteFile(p, []byte("x"), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return dir, outside
}

func TestCheckAcceptsLinksThatStayInside(t *testing.T) {
	dir, _ := tree(t,
		"lib/libx.so.1",
		"lib/libx.so -> libx.so.1",
		"lib64 -> lib",
		"targets/x86_64-linux/lib -> ../../lib",
		"targets/x86_64-linux/libx -> lib/libx.so",
		"up -> lib/..",
		"deep -> targets/x86_64-linux/lib/../lib64/libx.so",
		"sub/dir/",
	)
	if err := Check(dir); err != nil {
		t.Fatal(err)
	}
}

func TestCheckRefusesLinksThatLeaveDangleOrLoop(t *testing.T) {
	cases := []struct {
		name    string
		entries []string
		want    string
	}{
		{"a chain of links each harmless to look at", []string{"lib/z1 -> ..", "lib/z2 -> z1/.."}, "refusing symlink lib/z2 → z1/..: it resolves outside the tree"},
		{"a chain made lexically deep by a link to a shallow folder", []string{
			"lib/", "targets/x86_64-linux/lib64 -> ../../lib",
			"lib/up1 -> ../targets/x86_64-linux/lib64/..",
			"lib/up2 -> ../targets/x86_64-linux/lib64/up1/.."}, "lib/up2"},
		{"a link into the folder beside the tree", []string{"lib/s -> ../../outside/secret"}, "resolves outside"},
		{"an absolute link", []string{"lib/abs -> /etc/passwd"}, "absolute"},
		{"a link that dangles", []string{"lib/gone -> libgone.so.1"}, "refusing symlink lib/gone → libgone.so.1: it dangles"},
		{"a link through a file", []string{"lib/f", "lib/g -> f/x"}, "dangles"},
		{"a loop", []string{"a -> b", "b -> a"}, "loops"},
		{"a folder link outside reached through an inside link", []string{"x -> y", "y -> ../outside"}, "resolves outside"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, _ := tree(t, tc.entries...)
			err := Check(dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Check = %v, want an error containing %q", err, tc.want)
			}
			var le *LinkError
			if !errors.As(err, &le) {
				t.Errorf("%T is not a *LinkError", err)
			}
		})
	}
}

func TestWriteNewNeverWritesThroughAName(t *testing.T) {
	cases := []struct {
		name    string
		entries []string
	}{
		{"a link to a file outside", []string{"receipt.json -> ../outside/secret"}},
		{"a dangling link outside", []string{"receipt.json -> ../outside/new"}},
		{"a link inside", []string{"other", "receipt.json -> other"}},
		{"a folder on the way that is a link outside", []string{"d -> ../outside"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, outside := tree(t, tc.entries...)
			tr, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			name := ReceiptName
			if strings.HasPrefix(tc.entries[0], "d ") {
				name = "d/" + ReceiptName
			}
			if err := tr.WriteNew(name, []byte("pwned\n"), 0o644); err == nil {
				t.Fatal("WriteNew wrote through an existing name")
			}
			if b, _ := os.ReadFile(filepath.Join(outside, "secret")); string(b) != "secret\n" {
				t.Errorf("outside/secret = %q", b)
			}
			if des, _ := os.ReadDir(outside); len(des) != 1 {
				t.Errorf("outside holds %v", des)
			}
		})
	}
	t.Run("a free name is written", func(t *testing.T) {
		dir, _ := tree(t)
		tr, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer tr.Close()
		if err := tr.WriteNew("sub/r.json", []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "sub", "r.json")); string(b) != "{}\n" {
			t.Errorf("content %q", b)
		}
	})
}

func TestMkdirAllRefusesToPassThroughALink(t *testing.T) {
	dir, outside := tree(t, "lib/", "inside -> lib", "out -> ../outside", "file")
	tr, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	for _, rel := range []string{"inside/x", "out/x", "out"} {
		if err := tr.MkdirAll(rel); !errors.Is(err, ErrThroughLink) {
			t.Errorf("MkdirAll(%s) = %v, want ErrThroughLink", rel, err)
		}
	}
	var nd *NotDirError
	if err := tr.MkdirAll("file/x"); !errors.As(err, &nd) || nd.Rel != "file" {
		t.Errorf("MkdirAll(file/x) = %v", err)
	}
	if err := tr.MkdirAll("lib/a/b"); err != nil {
		t.Fatal(err)
	}
	if des, _ := os.ReadDir(outside); len(des) != 1 {
		t.Errorf("outside holds %v", des)
	}
}

func TestOwnedNamesAreTheReceiptAndMarkers(t *testing.T) {
	for rel, want := range map[string]bool{
		"receipt.json":          true,
		"RECEIPT.JSON":          true,
		".cudaenv-1.tmp":        true,
		"lib/.cudaenv-stamp":    true,
		"lib/.CUDAENV":          true,
		"lib/receipt.json":      false,
		"receipt.json.bak":      false,
		"lib/libcudart.so.12":   false,
		"share/doc/cudaenv.txt": false,
	} {
		if got := Owned(rel); got != want {
			t.Errorf("Owned(%q) = %v, want %v", rel, got, want)
		}
	}
}

func TestCheckLinkTargetRefusesWhatLeavesLexically(t *testing.T) {
	for _, tc := range []struct {
		rel, target string
		ok          bool
	}{
		{"lib/libx.so", "libx.so.1", true},
		{"lib/sub/up", "../libx.so", true},
		{"lib/escape", "../../etc", false},
		{"lib/abs", "/etc/passwd", false},
		{"lib/drive", "C:/x", false},
		{"lib/bs", `..\..\x`, false},
		{"lib/empty", "", false},
	} {
		if err := CheckLinkTarget(tc.rel, tc.target); (err == nil) != tc.ok {
			t.Errorf("CheckLinkTarget(%s, %q) = %v", tc.rel, tc.target, err)
		}
	}
}

func TestMaxUnpackedIsAGenerousMultiple(t *testing.T) {
	if got := MaxUnpacked(150 << 10); got != 150<<10*MaxExpansion+1<<20 {
		t.Errorf("MaxUnpacked(150 KiB) = %d", got)
	}
	if got := MaxUnpacked(1 << 61); got != 1<<62 {
		t.Errorf("MaxUnpacked does not saturate: %d", got)
	}
}

func TestShowKeepsMessagesOnOneLine(t *testing.T) {
	for name, want := range map[string]string{
		"lib/libcudart.so.12":  "lib/libcudart.so.12",
		`ho me "q" $x/.bashrc`: `ho me "q" $x/.bashrc`,
		"lib/x\ncudaenv: fine": `"lib/x\ncudaenv: fine"`,
		"lib/\x1b[2Jx":         `"lib/\x1b[2Jx"`,
		"include/ünïcode.h":    "include/ünïcode.h",
	} {
		if got := Show(name); got != want {
			t.Errorf("Show(%q) = %s, want %s", name, got, want)
		}
	}
}
