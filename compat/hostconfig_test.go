package compat

import (
	"errors"
	"os"
	"testing"
)

func TestParseHostConfig(t *testing.T) {
	tests := []struct {
		file string
		want HostLimits
		str  string
	}{
		{"host_config_11.8.h", HostLimits{GCCMax: "11", ClangMin: "3.3", ClangMax: "14", MSVCMin: 1910, MSVCMax: 1939}, "GCC <= 11, clang 3.3-14, MSVC 1910-1939"},
		{"host_config_12.6.h", HostLimits{GCCMax: "13", ClangMin: "3.3", ClangMax: "18", MSVCMin: 1910, MSVCMax: 1949}, "GCC <= 13, clang 3.3-18, MSVC 1910-1949"},
		{"host_config_13.0.h", HostLimits{GCCMax: "15", ClangMin: "3.3", ClangMax: "20", MSVCMin: 1920, MSVCMax: 1950}, "GCC <= 15, clang 3.3-20, MSVC 1920-1950"},
		{"host_config_8.0.h", HostLimits{GCCMax: "5.3"}, "GCC <= 5.3"},
		{"host_config_patched.h", HostLimits{MSVCMin: 1700, MSVCMax: 1929}, "MSVC 1700-1929"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			src, err := os.ReadFile("testdata/" + tt.file)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseHostConfig(src)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("ParseHostConfig = %+v, want %+v", got, tt.want)
			}
			if got.String() != tt.str {
				t.Errorf("String() = %q, want %q", got.String(), tt.str)
			}
		})
	}
}

func TestParseHostConfigWithoutLimits(t *testing.T) {
	_, err := ParseHostConfig([]byte("#if defined(__GNUC__)\n#endif\n"))
	if !errors.Is(err, ErrNoHostLimits) {
		t.Errorf("err = %v, want ErrNoHostLimits", err)
	}
}

func TestHostLimitsAccept(t *testing.T) {
	cuda124 := HostLimits{GCCMax: "13", ClangMin: "3.3", ClangMax: "17", MSVCMin: 1910, MSVCMax: 1949}
	cuda8 := HostLimits{GCCMax: "5.3"}
	tests := []struct {
		name    string
		lim     HostLimits
		kind, v string
		want    bool
	}{
		{"GCC 13.3 is a 13.x and accepted", cuda124, "gcc", "13.3.0", true},
		{"GCC 14 is refused", cuda124, "gcc", "14.2.0", false},
		{"clang 17 is accepted", cuda124, "clang", "17.0.6", true},
		{"clang 18 is refused", cuda124, "clang", "18.1.3", false},
		{"clang 3.2 is too old", cuda124, "clang", "3.2", false},
		{"MSVC 1939 is accepted", cuda124, "msvc", "1939", true},
		{"MSVC 1950 is refused", cuda124, "msvc", "1950", false},
		{"a major.minor limit accepts 5.3.1", cuda8, "gcc", "5.3.1", true},
		{"a major.minor limit refuses 5.4", cuda8, "gcc", "5.4.0", false},
		{"no clang limit accepts any clang", cuda8, "clang", "19.0.0", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.lim.Accepts(tt.kind, tt.v); got != tt.want {
				t.Errorf("Accepts(%q, %q) = %v, want %v", tt.kind, tt.v, got, tt.want)
			}
		})
	}
}
