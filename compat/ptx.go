package compat

// ptxISARows: each PTX ISA version and the first CUDA release whose nvcc
// emits it (a newer nvcc writes its own ISA version into the PTX it
// generates, so PTX of ISA 8.4 was built with CUDA 12.4 or newer).
// Source: NVIDIA's PTX ISA release history table
// (docs.nvidia.com/cuda/parallel-thread-execution/#release-notes-ptx-release-history),
// as NVIDIA's cuda-python copies it (cuda/bindings/utils/_ptx_utils.py,
// 1.0 to 9.1); 9.4 is CUDA 13.4's (ForceInjection/cuda-code-skill
// release cuda-13.4: "CUDA Toolkit 13.4 / PTX ISA 9.4"); 9.5 is what
// nvcc 13.5.37 of NVIDIA's nvidia-cuda-nvcc wheel writes (the fixtures in
// internal/fatbin/testdata); 9.2 and 9.3 follow the one-to-one numbering
// of CUDA 13.x (9.0 is 13.0, 9.1 13.1). 12.6 emits 8.5 as 12.5 did.
var ptxISARows = []struct{ isa, cuda string }{
	{"1.0", "1.0"}, {"1.1", "1.1"}, {"1.2", "2.0"}, {"1.3", "2.1"}, {"1.4", "2.2"},
	{"2.0", "3.0"}, {"2.1", "3.1"}, {"2.2", "3.2"}, {"2.3", "4.0"},
	{"3.0", "4.1"}, {"3.1", "5.0"}, {"3.2", "5.5"},
	{"4.0", "6.0"}, {"4.1", "6.5"}, {"4.2", "7.0"}, {"4.3", "7.5"},
	{"5.0", "8.0"},
	{"6.0", "9.0"}, {"6.1", "9.1"}, {"6.2", "9.2"}, {"6.3", "10.0"}, {"6.4", "10.1"}, {"6.5", "10.2"},
	{"7.0", "11.0"}, {"7.1", "11.1"}, {"7.2", "11.2"}, {"7.3", "11.3"}, {"7.4", "11.4"},
	{"7.5", "11.5"}, {"7.6", "11.6"}, {"7.7", "11.7"}, {"7.8", "11.8"},
	{"8.0", "12.0"}, {"8.1", "12.1"}, {"8.2", "12.2"}, {"8.3", "12.3"}, {"8.4", "12.4"},
	{"8.5", "12.5"}, {"8.6", "12.7"}, {"8.7", "12.8"}, {"8.8", "12.9"},
	{"9.0", "13.0"}, {"9.1", "13.1"}, {"9.2", "13.2"}, {"9.3", "13.3"}, {"9.4", "13.4"}, {"9.5", "13.5"},
}

// PTXBuiltWith is the oldest CUDA release (major.minor) that emits PTX of
// ISA version isa ("8.4" -> "12.4"); false for a version the table lacks.
func PTXBuiltWith(isa string) (string, bool) {
	for _, r := range ptxISARows {
		if r.isa == isa {
			return r.cuda, true
		}
	}
	return "", false
}

// NewestPTXISA is the newest ISA version the table knows and its CUDA.
func NewestPTXISA() (isa, cuda string) {
	r := ptxISARows[len(ptxISARows)-1]
	return r.isa, r.cuda
}
