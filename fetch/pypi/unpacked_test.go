package pypi

import (
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
