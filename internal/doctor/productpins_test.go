package doctor

import (
	"strings"
	"testing"
)

func TestProductPinsCheckWarnsWhenTorchPinsAnotherLibraryVersion(t *testing.T) {
	nccl := Product{Title: "NCCL", Name: "nccl", Version: "2.29.3", VariantMajor: 13}
	sparse := Product{Title: "cuSPARSELt", Name: "cusparselt", Version: "0.8.1.0", VariantMajor: 13}
	tensor := Product{Title: "cuTENSOR", Name: "cutensor", Version: "2.8.1", VariantMajor: 12}
	tests := []struct {
		name   string
		libs   []Product
		pins   []string
		ok     bool
		status Status
		want   []string
	}{
		{"a pinned NCCL other than the selected one is a warning naming both", []Product{nccl},
			[]string{"nvidia-cudnn-cu13==9.26.0.51", "nvidia-nccl-cu13==2.30.7"}, true, Warn,
			[]string{"torch 2.11.0 pins NCCL 2.30.7 (nvidia-nccl-cu13==2.30.7), but NCCL 2.29.3 is selected"}},
		{"the pinned version with trailing zeros dropped is the selected one", []Product{sparse},
			[]string{"nvidia-cusparselt-cu13==0.8.1"}, true, OK, []string{"cuSPARSELt 0.8.1.0 as torch 2.11.0 pins"}},
		{"the pinned version built for another CUDA major is a warning", []Product{tensor},
			[]string{"cutensor-cu13==2.8.1"}, true, Warn, []string{"pins the CUDA 13 build of cuTENSOR 2.8.1", "the CUDA 12 build is selected"}},
		{"a range pin says nothing", []Product{nccl}, []string{"nvidia-nccl-cu13>=2.27.7"}, false, OK, nil},
		{"a pin of a library that is not selected says nothing", []Product{sparse}, []string{"nvidia-nccl-cu13==2.30.7"}, false, OK, nil},
		{"a project that only starts like the library says nothing", []Product{nccl}, []string{"nvidia-nccl-cu13x==2.30.7", "nvidia-nccl-cu==2.30.7"}, false, OK, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ok := ProductPinsCheck(tt.libs, "2.11.0", tt.pins)
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v (%+v)", ok, tt.ok, c)
			}
			if !ok {
				return
			}
			if c.Status != tt.status {
				t.Errorf("status = %s, want %s: %s", c.Status, tt.status, c.Message)
			}
			for _, w := range tt.want {
				if !strings.Contains(c.Message, w) {
					t.Errorf("message %q lacks %q", c.Message, w)
				}
			}
		})
	}
}
