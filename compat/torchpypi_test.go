package compat

import "testing"

func TestTorchPyPIAnswersWithTheBuildPyPIServes(t *testing.T) {
	tests := []struct {
		name, version, platform                     string
		variant, cuda, cudnn, nccl, cusparselt, shm string
	}{
		{"2.9.0 is PyPI's cu128 build, not the table's newest (cu130)", "2.9.0", "linux-x86_64", "cu128", "12.8.1", "9.10.2.21", "2.27.5", "0.7.1", "3.3.20"},
		{"2.10.0 is cu128 too", "2.10.0", "linux-x86_64", "cu128", "12.8.1", "9.10.2.21", "2.27.5", "0.7.1", "3.4.5"},
		{"2.5.1 is cu124, with the cuDNN it pins", "2.5.1", "linux-x86_64", "cu124", "12.4.1", "9.1.0.70", "2.21.5", "", ""},
		{"2.3.0 is cu121 with cuDNN 8", "2.3.0", "linux-x86_64", "cu121", "12.1.1", "8.9.2.26", "2.20.5", "", ""},
		{"2.7.1's mixed pins name 12.6.3, whose libraries are at least the pins", "2.7.1", "linux-x86_64", "cu126", "12.6.3", "9.5.1.17", "2.26.2", "0.6.3", ""},
		{"2.12.0 pins the cuda-toolkit meta-package", "2.12.0", "linux-x86_64", "cu130", "13.0.2", "9.20.0.48", "2.29.7", "0.8.1", "3.4.5"},
		{"2.15.0 is cu132", "2.15.0", "linux-x86_64", "cu132", "13.2.2", "9.26.0.51", "2.30.7", "0.8.1", "3.7.2"},
		{"a bare minor is its newest patch release", "2.14", "linux-x86_64", "cu130", "13.0.3", "9.24.0.43", "2.30.7", "0.8.1", "3.4.5"},
		{"PyPI's aarch64 wheel of 2.10 is a CPU build", "2.10.0", "linux-sbsa", "cpu", "", "", "", "", ""},
		{"from 2.11 PyPI's aarch64 wheel is cu130", "2.11.0", "linux-sbsa", "cu130", "13.0.2", "9.19.0.56", "2.28.9", "0.8.0", "3.4.5"},
		{"Jetson's key takes the aarch64 wheel", "2.15.0", "linux-aarch64", "cu132", "13.2.2", "9.26.0.51", "2.30.7", "0.8.1", "3.7.2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, ok := TorchPyPI(tt.version, tt.platform)
			if !ok {
				t.Fatalf("TorchPyPI(%q, %q): no answer", tt.version, tt.platform)
			}
			got := []string{b.Variant, b.CUDA, b.Cudnn, b.NCCL, b.CuSPARSELt, b.NVSHMEM}
			want := []string{tt.variant, tt.cuda, tt.cudnn, tt.nccl, tt.cusparselt, tt.shm}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("TorchPyPI(%q, %q) = %+v\nwant variant, cuda, cudnn, nccl, cusparselt, nvshmem = %q", tt.version, tt.platform, b, want)
				}
			}
			if b.Source == "" || b.CPU() != (tt.cuda == "") {
				t.Errorf("source %q, CPU() %v", b.Source, b.CPU())
			}
		})
	}
}

func TestTorchPyPIRefusesWhatIsNotPyPIsBuild(t *testing.T) {
	for _, v := range []string{"2.5.1+cu118", "2.6.0a0", "2.16.0", "1.13.1", "2", "", "2.5.1.post1", "latest"} {
		if b, ok := TorchPyPI(v, "linux-x86_64"); ok {
			t.Errorf("TorchPyPI(%q) = %+v, want no answer", v, b)
		}
	}
	if b, ok := TorchPyPI("2.5.1", "windows-x86_64"); ok {
		t.Errorf("TorchPyPI on Windows = %+v, want no answer (PyPI's Windows wheels are CPU builds)", b)
	}
}

// Every row agrees with the release matrix: its variant is one the
// release was built with, its CUDA release is of that variant's minor,
// and from 2.10, where torch_cuda.tsv records PyPI's default, the same
// variant is marked there.
func TestTorchPyPIRowsAgreeWithTheReleaseMatrix(t *testing.T) {
	n := 0
	for _, r := range torchPyPIRows {
		if r.variant == "cpu" {
			continue
		}
		n++
		rel, ok := Torch(r.torch)
		if !ok {
			t.Errorf("torch %s: not in torch_cuda.tsv", r.torch)
			continue
		}
		v, ok := rel.Variant(r.variant)
		if !ok {
			t.Errorf("torch %s: %s is not one of its builds in torch_cuda.tsv", r.torch, r.variant)
			continue
		}
		if majorMinor(r.cuda) != v.CUDA {
			t.Errorf("torch %s %s: CUDA %s is not of the variant's %s", r.torch, r.variant, r.cuda, v.CUDA)
		}
		if r.platform == "linux-x86_64" && CompareVersions(r.torch, "2.10") >= 0 && v.PyPIDefault != "linux" {
			t.Errorf("torch %s: torch_cuda.tsv does not mark %s as PyPI's default", r.torch, r.variant)
		}
		if r.cudnn == "" || r.nccl == "" || r.source == "" {
			t.Errorf("torch %s %s: no cuDNN, NCCL or source", r.torch, r.platform)
		}
	}
	if got := TorchPyPIReleases("linux-x86_64"); len(got) < 20 || n < 20 {
		t.Errorf("the table has %d x86_64 releases (%d CUDA rows), want every release from 2.0 to 2.15", len(got), n)
	}
}
