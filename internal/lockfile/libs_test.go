package lockfile

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cudaenv/cudaenv/internal/version"
)

// ncclLock is CUDA 13.0 with NCCL 2.30 from PyPI, as `cudaenv lock`
// writes it.
const ncclLock = `lock-version = 1
profile = "minimal"

[cuda]
spec = "13.0"
release = "13.0.3"
source = "pypi"

[cuda.linux-x86_64]
cuda_nvcc = { version = "13.0.88", file = "nvidia_cuda_nvcc-13.0.88-py3-none-manylinux2014_x86_64.whl", size = 300, sha256 = "` + "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb" + `" }

[nccl]
spec = "nccl@2.30"
release = "2.30.7"
cuda-major = 13
source = "pypi"

[nccl.linux-x86_64]
nccl = { version = "2.30.7", file = "nvidia_nccl_cu13-2.30.7-py3-none-manylinux2014_x86_64.whl", size = 5000, sha256 = "` + "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd" + `" }
`

func TestLibraryTablesRoundTripAfterCUDA(t *testing.T) {
	l, err := Decode("x.lock", []byte(ncclLock))
	if err != nil {
		t.Fatal(err)
	}
	p := l.Lib(version.Nccl)
	if p == nil || p.Release != "2.30.7" || p.CUDAMajor != 13 || p.Source != "pypi" {
		t.Fatalf("[nccl] read as %+v", p)
	}
	ps := l.Products()
	if len(ps) != 2 || ps[0] != l.CUDA || ps[1] != p {
		t.Fatalf("Products() = %v, want CUDA then NCCL", ps)
	}
	if got := l.Specs(); len(got) != 2 || got[1].String() != "nccl@2.30" {
		t.Fatalf("Specs() = %v", got)
	}
	enc, err := Encode(l)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(enc, []byte(header+ncclLock)) {
		t.Fatalf("Encode wrote\n%s\nwant\n%s", enc, header+ncclLock)
	}
}

func TestDecodeRefusesHostileLibraryTables(t *testing.T) {
	repl := func(old, new string) string { return strings.Replace(ncclLock, old, new, 1) }
	tests := []struct {
		name, lock, want string
	}{
		{"a library table without cuda-major", repl("cuda-major = 13\n", ""), "[nccl]: cuda-major 0 is not a CUDA major"},
		{"a library table with a CUDA spec", repl(`spec = "nccl@2.30"`, `spec = "13.0"`), `"13.0" does not select nccl`},
		{"a library table with another library's spec", repl(`spec = "nccl@2.30"`, `spec = "cudnn@9"`), `does not select nccl`},
		{"a release the spec does not match", strings.ReplaceAll(ncclLock, "2.30.7", "2.29.3"), "release 2.29.3 does not match spec nccl@2.30"},
		{"a library with other platforms than CUDA", repl("[nccl.linux-x86_64]", "[nccl.linux-sbsa]"), "[cuda] has platforms linux-x86_64, [nccl] has linux-sbsa; both need the same"},
		{"a library table twice", ncclLock + "\n[nccl]\n", "table [nccl] appears twice"},
		{"a library name that is not one", repl("[nccl]", "[ncclx]"), "unknown table"},
		{"a library platform table before its product", repl("[nccl]\nspec", "[nccl.linux-sbsa]\n[nccl]\nspec"), "table [nccl.linux-sbsa] comes before [nccl]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode("x.lock", []byte(tt.lock))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Decode error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestValidateRefusesALibraryUnderAnotherName(t *testing.T) {
	l, err := Decode("x.lock", []byte(ncclLock))
	if err != nil {
		t.Fatal(err)
	}
	l.Libs[version.Nvshmem], l.Libs[version.Nccl] = l.Libs[version.Nccl], nil
	if err := l.Validate(); err == nil || !strings.Contains(err.Error(), "[nvshmem] has a NCCL spec") {
		t.Fatalf("Validate = %v, want the misfiled table refused", err)
	}
	l.Libs = map[version.Tool]*Product{version.CUDA: l.CUDA}
	if err := l.Validate(); err == nil || !strings.Contains(err.Error(), "[cuda] is not a library table") {
		t.Fatalf("Validate = %v, want CUDA in Libs refused", err)
	}
}
