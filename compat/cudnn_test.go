package compat

import (
	"reflect"
	"strings"
	"testing"
)

func TestCudnn(t *testing.T) {
	tests := []struct {
		name, version, label string
		majors               []int
		exact, ok            bool
		note                 string
	}{
		{"a label is found", "9.5.1", "9.5.1", []int{11, 12}, true, true, ""},
		{"a library version is found", "9.5.1.17", "9.5.1", []int{11, 12}, true, true, ""},
		{"cuDNN 9.12 dropped CUDA 11 and added CUDA 13", "9.12.0", "9.12.0", []int{12, 13}, true, true, ""},
		{"8.9.7.29 has both variants", "8.9.7.29", "8.9.7", []int{11, 12}, true, true, ""},
		{"a bare minor means its newest release", "9.5", "9.5.1", []int{11, 12}, false, true, "9.5 stands for every 9.5 release"},
		{"a missing release falls back to the nearest lower one and says so", "9.10.3.1", "9.10.2", []int{11, 12}, false, true, "9.10.3.1 is not in the table; using 9.10.2"},
		{"CUDA 11 builds end with 9.10.2; 9.19.1 and 9.28.1 are built for CUDA 13 only", "9.10.2.21", "9.10.2", []int{11, 12}, true, true, ""},
		{"9.28.1 is built for CUDA 13 only", "9.28.1.4", "9.28.1", []int{13}, true, true, ""},
		{"a release older than the table is not found", "7.6.5", "", nil, false, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Cudnn(tt.version)
			if ok != tt.ok {
				t.Fatalf("Cudnn(%q) ok = %v", tt.version, ok)
			}
			if !ok {
				return
			}
			if got.Label != tt.label || got.Exact != tt.exact || !reflect.DeepEqual(got.CUDAMajors, tt.majors) {
				t.Errorf("Cudnn(%q) = %+v", tt.version, got)
			}
			if !strings.HasPrefix(got.Note, tt.note) {
				t.Errorf("Note = %q, want prefix %q", got.Note, tt.note)
			}
		})
	}
	if !reflect.DeepEqual(CudnnMajors("9.12.0.46"), []int{12, 13}) {
		t.Error("CudnnMajors(9.12.0.46) wrong")
	}
}

func TestCudnnVariantNames(t *testing.T) {
	if CudnnVariant(12) != "cuda12" {
		t.Error(CudnnVariant(12))
	}
	for _, s := range []string{"cuda12", "12", "cu12", "CUDA12"} {
		if ParseCudnnVariant(s) != 12 {
			t.Errorf("ParseCudnnVariant(%q) = %d", s, ParseCudnnVariant(s))
		}
	}
}

func TestCudnnReleasesAreOldestFirst(t *testing.T) {
	rs := CudnnReleases()
	for i := 1; i < len(rs); i++ {
		if CompareVersions(rs[i-1].Label, rs[i].Label) >= 0 {
			t.Fatalf("%s before %s", rs[i-1].Label, rs[i].Label)
		}
	}
}
