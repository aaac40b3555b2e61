package pypi

import (
	"os"
	"strings"
	"testing"
)

// The project names of the library wheels are the ones PyPI has: cuTENSOR
// alone has no nvidia- prefix (nvidia-cutensor-cu13 is a 404 there).
func TestProjectNamesTheLibraryWheelsAsPyPIDoes(t *testing.T) {
	tests := []struct {
		lib   string
		major int
		want  string
	}{
		{"nccl", 13, "nvidia-nccl-cu13"},
		{"cusparselt", 12, "nvidia-cusparselt-cu12"},
		{"cudss", 13, "nvidia-cudss-cu13"},
		{"nvshmem", 12, "nvidia-nvshmem-cu12"},
		{"cutensor", 12, "cutensor-cu12"},
		{"cutensor", 13, "cutensor-cu13"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			got, err := Project(tt.lib, tt.major)
			if err != nil || got != tt.want {
				t.Fatalf("Project(%q, %d) = %q, %v; want %q", tt.lib, tt.major, got, err, tt.want)
			}
		})
	}
}

// Every entry of the real library wheels (testdata/real_library_layouts.txt)
// lands inside the product's folder, headers under include/ and shared
// libraries under lib/, with no nvidia/, cu13/ or cutensor/ prefix left.
func TestEntryPathPlacesTheRealLibraryWheels(t *testing.T) {
	data, err := os.ReadFile("testdata/real_library_layouts.txt")
	if err != nil {
		t.Fatal(err)
	}
	headers, libs := map[string]int{}, map[string]int{}
	for _, line := range strings.Split(string(data), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		wheel, entry, ok := strings.Cut(line, "\t")
		if !ok {
			t.Fatalf("bad line %q", line)
		}
		dest, err := entryPath(entry)
		if strings.Contains(entry, ".dist-info/") {
			if err != errSkip {
				t.Errorf("%s: %s: dist-info entry placed at %q, %v", wheel, entry, dest, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %s: %v", wheel, entry, err)
			continue
		}
		top, _, _ := strings.Cut(dest, "/")
		switch {
		case top == "nvidia" || top == "cutensor" || isSharedRoot(top):
			t.Errorf("%s: %s kept its wheel prefix: %q", wheel, entry, dest)
		case strings.HasSuffix(entry, ".h") && top != "include":
			t.Errorf("%s: header %s placed at %q", wheel, entry, dest)
		case strings.Contains(entry, ".so.") && top != "lib":
			t.Errorf("%s: library %s placed at %q", wheel, entry, dest)
		}
		if strings.HasPrefix(dest, "include/") && strings.HasSuffix(dest, ".h") {
			headers[wheel]++
		}
		if strings.HasPrefix(dest, "lib/") && strings.Contains(dest, ".so.") {
			libs[wheel]++
		}
	}
	if len(headers) < 8 || len(libs) < 8 {
		t.Fatalf("headers placed for %d wheels, libraries for %d; want all 8: %v %v", len(headers), len(libs), headers, libs)
	}
}
