package doctor

import "testing"

func TestProductsCheckWantsEachLibraryBuiltForTheSelectedCUDAMajor(t *testing.T) {
	nccl13 := Product{Title: "NCCL", Name: "nccl", Version: "2.30.7", Dir: "/s/nccl/2.30.7-cuda13", VariantMajor: 13}
	tests := []struct {
		name   string
		libs   []Product
		cuda   string
		status Status
		msg    string
		hint   string
	}{
		{"a build for the selected major is ok", []Product{nccl13, {Title: "cuSPARSELt", Name: "cusparselt", Version: "0.8.1.1", VariantMajor: 13}}, "13.0.3", OK,
			"NCCL 2.30.7 (CUDA 13 build), cuSPARSELt 0.8.1.1 (CUDA 13 build) match CUDA 13.0.3", ""},
		{"a build for another major fails and names the install", []Product{nccl13}, "12.4.1", Fail,
			"NCCL 2.30.7 is the CUDA 13 build, but CUDA 12.4.1 is selected", "install the matching build: cudaenv install nccl@2.30.7 --cuda-major 12"},
		{"a damaged tree fails", []Product{{Title: "NCCL", Name: "nccl", Version: "2.30.7", Dir: "/s/n", VariantMajor: 13, Damage: "lib/libnccl.so.2 is gone"}}, "13.0.3", Fail,
			"NCCL 2.30.7 at /s/n is damaged: lib/libnccl.so.2 is gone", "repair it: cudaenv verify --repair nccl@2.30.7 --cuda-major 13"},
		{"with no toolkit there is nothing to compare", []Product{nccl13}, "", OK,
			"NCCL 2.30.7 (CUDA 13 build); no toolkit selected to compare them with", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ProductsCheck(tt.libs, tt.cuda)
			if c.ID != IDProducts || c.Status != tt.status || c.Message != tt.msg || c.Hint != tt.hint {
				t.Errorf("got %+v\nwant status %v message %q hint %q", c, tt.status, tt.msg, tt.hint)
			}
		})
	}
}
