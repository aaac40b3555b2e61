package compat

import (
	"strings"
	"testing"
)

func TestPickTorch(t *testing.T) {
	tests := []struct {
		name, torch string
		m           Machine
		variant     string // "" with err
		pypi        bool
		passed      string // in Passed, joined
		err         string
		unverified  bool
	}{
		{name: "a Hopper card with a new driver gets PyPI's default build: plain pip install", torch: "2.10",
			m: Machine{Driver: "580.65.06", GPUs: []string{"9.0"}, Python: "3.12"}, variant: "cu128", pypi: true},
		{name: "a Pascal card on 2.10 gets cu126, since cu128 has no sm_61 kernels", torch: "2.10",
			m: Machine{Driver: "580.65.06", GPUs: []string{"6.1"}, Python: "3.12"}, variant: "cu126", passed: "cu128: no kernels for the GPU's sm_61 (it has sm_70 sm_75 sm_80 sm_86 sm_90 sm_100 sm_120 PTX compute_120)"},
		{name: "an Ada card (8.9) runs the sm_86 kernels of the default build", torch: "2.10",
			m: Machine{Driver: "580.65.06", GPUs: []string{"8.9"}}, variant: "cu128", pypi: true},
		{name: "a Blackwell 12.1 card runs sm_120 kernels", torch: "2.11",
			m: Machine{Driver: "580.65.06", GPUs: []string{"12.1"}}, variant: "cu130", pypi: true},
		{name: "on 2.11 a Volta card is left only cu126", torch: "2.11",
			m: Machine{Driver: "580.65.06", GPUs: []string{"7.0"}}, variant: "cu126", passed: "cu130: no kernels for the GPU's sm_70"},
		{name: "one old card among new ones decides for all of them", torch: "2.10",
			m: Machine{Driver: "580.65.06", GPUs: []string{"9.0", "6.1"}}, variant: "cu126"},
		{name: "on 2.11 no build serves a Hopper and a Pascal card at once", torch: "2.11",
			m: Machine{Driver: "580.65.06", GPUs: []string{"9.0", "6.1"}}, err: "cu126: no kernels for the GPU's sm_90"},
		{name: "a driver of CUDA 12.4 skips the CUDA 13 default for the newest CUDA 12 build it runs", torch: "2.11",
			m: Machine{Driver: "550.54.15", GPUs: []string{"9.0"}}, variant: "cu128", passed: "cu130: CUDA 13.0 needs driver"},
		{name: "a driver too old for every build is an error that says what each needs", torch: "2.10",
			m: Machine{Driver: "470.57.02", GPUs: []string{"8.0"}}, err: "no CUDA build of torch 2.10"},
		{name: "a Python outside the release's range is refused with the range", torch: "2.10",
			m: Machine{Python: "3.9"}, err: "has wheels for Python 3.10-3.14"},
		{name: "nothing known about the machine: PyPI's default", torch: "2.10", variant: "cu128", pypi: true},
		{name: "a build whose architectures the tables lack is taken, and said to be unverified", torch: "2.15",
			m: Machine{Driver: "600.10", GPUs: []string{"9.0"}}, unverified: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rel, ok := Torch(tt.torch)
			if !ok {
				t.Fatalf("torch %s not in the tables", tt.torch)
			}
			got, err := PickTorch(rel, tt.m)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.unverified {
				if got.Unverified == "" {
					t.Errorf("pick %s not marked unverified", got.Variant.Name)
				}
				return
			}
			if got.Variant.Name != tt.variant || got.PyPI != tt.pypi || got.Unverified != "" {
				t.Errorf("pick = %s (PyPI %v, unverified %q), want %s (PyPI %v)", got.Variant.Name, got.PyPI, got.Unverified, tt.variant, tt.pypi)
			}
			if passed := strings.Join(got.Passed, "; "); !strings.Contains(passed, tt.passed) {
				t.Errorf("passed = %q, want %q in it", passed, tt.passed)
			}
			if got.Pip == "" {
				t.Fatal("no pip line")
			}
			hasIndex := strings.Contains(got.Pip, "--index-url https://download.pytorch.org/whl/"+tt.variant)
			if hasIndex == tt.pypi || !strings.HasPrefix(got.Pip, "pip install torch=="+rel.Version) {
				t.Errorf("pip = %q", got.Pip)
			}
			if wantUV := strings.Contains(got.UV, "--torch-backend="+tt.variant); wantUV == tt.pypi || !strings.HasPrefix(got.UV, "uv pip install torch==") || strings.Contains(got.UV, "--index-url") {
				t.Errorf("uv = %q", got.UV)
			}
		})
	}
}

func TestArchRuns(t *testing.T) {
	archs := []string{"7.5", "8.0", "8.6", "9.0"}
	for _, tt := range []struct {
		gpu, ptx string
		want     bool
	}{
		{"8.6", "", true}, {"8.9", "", true}, {"8.0", "", true}, {"7.0", "", false},
		{"10.0", "", false}, {"10.0", "9.0", true}, {"6.1", "9.0", false}, {"sm_75", "", true}, {"bogus", "", false},
	} {
		if got := ArchRuns(archs, tt.ptx, tt.gpu); got != tt.want {
			t.Errorf("ArchRuns(%v, %q, %q) = %v, want %v", archs, tt.ptx, tt.gpu, got, tt.want)
		}
	}
}
