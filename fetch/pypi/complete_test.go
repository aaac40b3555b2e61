package pypi

import (
	"strings"
	"testing"
)

func TestPickComponentVersionForAReleaseTheTableLacks(t *testing.T) {
	tests := []struct {
		name              string
		avail             []string
		tracking          bool
		release, prev, nx string
		want              string
	}{
		{"a versioned-with-CUDA component takes the newest of the release's minor",
			[]string{"12.4.127", "12.5.39", "12.5.82", "12.6.37"}, true, "12.5", "12.5.39", "12.6.68", "12.5.82"},
		{"one with its own numbering takes the newest before the next known release's",
			[]string{"11.2.3.18", "11.2.3.61", "11.2.6.59"}, false, "12.5", "11.2.3.18", "11.2.6.59", "11.2.3.61"},
		{"after the newest known release, the newest the index has",
			[]string{"13.3.4.3.1", "13.3.5.0.6"}, false, "13.5", "13.3.4.3.1", "", "13.3.5.0.6"},
		{"unchanged between its neighbours, it is their version",
			[]string{"12.6.77", "12.6.85"}, false, "12.6", "12.6.77", "12.6.77", "12.6.77"},
		{"nothing fits", []string{"13.4.92"}, true, "13.5", "13.4.92", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := pickComponentVersion(tt.avail, tt.tracking, tt.release, tt.prev, tt.nx); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// Several projects that cannot be read are one error, on one line, as
// every error cudaenv prints is.
func TestManyVersionsReportsEveryFailureOnOneLine(t *testing.T) {
	ix, err := NewIndex("http://127.0.0.1:9/simple/", WithRetries(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	_, err = ix.ManyVersions(t.Context(), []string{"nvidia-cuda-runtime-cu12", "nvidia-cuda-runtime-cu11"})
	if err == nil || strings.Contains(err.Error(), "\n") || strings.Count(err.Error(), "127.0.0.1:9") < 2 {
		t.Errorf("err = %q; want both failures on one line", err)
	}
}
