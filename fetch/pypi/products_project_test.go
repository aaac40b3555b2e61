package pypi

import "testing"

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
