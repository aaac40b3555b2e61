package pypi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestAnUnpackedWheelsIndexIsReadStrictly(t *testing.T) {
	sum := strings.Repeat("ab", 32)
	file := func(path string) string {
		return `{"path":"` + path + `","size":3,"sha256":"` + sum + `"}`
	}
	index := func(files, links string) string {
		return `{"format":1,"wheel":"` + sum + `","project":"nvidia-cuda-nvcc","version":"13.0.88","files":[` + files + `],"links":[` + links + `]}`
	}
	cases := []struct {
		name, data, want string
	}{
		{"a plain index", index(file("bin/nvcc")+","+file("lib/libx.so.1"), `{"path":"lib/libx.so","target":"libx.so.1"}`), ""},
		{"another format", strings.Replace(index(file("bin/nvcc"), ""), `"format":1`, `"format":2`, 1), "format 2"},
		{"an unknown field", strings.Replace(index(file("bin/nvcc"), ""), `"format":1`, `"format":1,"run":"sh"`, 1), "unknown field"},
		{"data after the index", index(file("bin/nvcc"), "") + " {}", "data after"},
		{"a path that climbs out", index(file("../../evil"), ""), "bad name"},
		{"an absolute path", index(file("/etc/passwd"), ""), "bad name"},
		{"a backslash", index(file(`bin\\nvcc`), ""), "bad name"},
		{"a folder", index(file("bin/"), ""), "bad name"},
		{"the receipt's name", index(file("receipt.json"), ""), "only cudaenv writes"},
		{"a name twice", index(file("bin/nvcc")+","+file("bin/nvcc"), ""), "listed twice"},
		{"a file and a link of one name", index(file("lib/x"), `{"path":"lib/x","target":"y"}`), "listed twice"},
		{"a bad sha256", strings.Replace(index(file("bin/nvcc"), ""), sum+`"}`, `ABCD"}`, 1), "bad size or sha256"},
		{"a negative size", strings.Replace(index(file("bin/nvcc"), ""), `"size":3`, `"size":-1`, 1), "bad size or sha256"},
		{"a link out of the tree", index("", `{"path":"lib/x","target":"../../etc"}`), "leaves the tree"},
		{"an absolute link", index("", `{"path":"lib/x","target":"/etc/passwd"}`), "absolute"},
		{"not JSON", "#!/bin/sh", "invalid character"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeUnpackedIndex([]byte(tc.data))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// recordLine is a RECORD line for body (sum of wrong, if given).
func recordLine(name, body, wrong string) string {
	hashed := body
	if wrong != "" {
		hashed = wrong
	}
	sum := sha256.Sum256([]byte(hashed))
	return fmt.Sprintf("%s,sha256=%s,%d\n", name, base64.RawURLEncoding.EncodeToString(sum[:]), len(body))
}

// A wheel's files are not hashed as they go into the cache: its RECORD
// (part of the wheel whose sha256 the index gave) gives their sha256, and
// the entry is vouched for from then on. A RECORD that lies about its own
// file changes nothing that is installed: the file is the wheel's, and
// only a full check (cudaenv verify --full) would read it against the sum.
func TestTheCacheTakesSumsFromTheWheelsRecordAndSurvivesAWrongOne(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the cache of unpacked wheels is Linux's")
	}
	nvcc, crt := "#!/bin/sh\necho nvcc\n", "crt header\n"
	for _, tc := range []struct {
		name      string
		crtRecord string
		notices   int
	}{
		{"a right RECORD", recordLine("nvidia/cu13/include/crt/host_config.h", crt, ""), 0},
		{"a RECORD with a wrong sum", recordLine("nvidia/cu13/include/crt/host_config.h", crt, "something else"), 0},
		{"a RECORD without sums", "nvidia/cu13/include/crt/host_config.h,,\n", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dist := "nvidia_cuda_nvcc-13.0.88.dist-info/"
			wheel := buildZip(t,
				zipEntry{name: "nvidia/cu13/bin/nvcc", mode: 0o755, body: nvcc},
				zipEntry{name: "nvidia/cu13/include/crt/host_config.h", body: crt},
				zipEntry{name: dist + "METADATA", body: "Name: nvidia-cuda-nvcc\nVersion: 13.0.88\n"},
				zipEntry{name: dist + "RECORD", body: recordLine("nvidia/cu13/bin/nvcc", nvcc, "") + tc.crtRecord + dist + "RECORD,,\n"},
			)
			sha := sha256Hex(wheel)
			base := filepath.Join(t.TempDir(), `c "a" $che`)
			var notices []string
			c := NewWheelCache(filepath.Join(base, "cache"), func(l string) { notices = append(notices, l) })
			ctx := context.Background()
			install := func(name string) string {
				t.Helper()
				dest := filepath.Join(base, name)
				os.MkdirAll(dest, 0o755)
				ok, err := c.Reuse(ctx, sha, dest, "nvidia-cuda-nvcc", "13.0.88")
				if err != nil {
					t.Fatal(err)
				}
				if !ok {
					if err := c.Unpack(ctx, bytes.NewReader(wheel), int64(len(wheel)), sha, dest, "nvidia-cuda-nvcc", "13.0.88"); err != nil {
						t.Fatal(err)
					}
				}
				if b, _ := os.ReadFile(filepath.Join(dest, "include/crt/host_config.h")); string(b) != crt {
					t.Errorf("%s: host_config.h = %q", name, b)
				}
				return dest
			}
			install("first")
			install("second")
			if len(notices) != tc.notices {
				t.Errorf("after the second install: notices %q, want %d", notices, tc.notices)
			}
			third := install("third")
			if len(notices) != tc.notices {
				t.Errorf("after the third install: notices %q, want %d", notices, tc.notices)
			}
			a, _ := os.Stat(filepath.Join(third, "include/crt/host_config.h"))
			b, _ := os.Stat(filepath.Join(base, "cache", "unpacked", sha, "tree", "include/crt/host_config.h"))
			if !os.SameFile(a, b) {
				t.Error("the third install is not linked from the cache")
			}
		})
	}
}
