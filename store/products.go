package store

import "github.com/cudaenv/cudaenv/internal/version"

// The kinds of the libraries installed per CUDA major beside cuDNN; each
// has its own folder in the store, named as the kind.
const (
	Nccl       Kind = "nccl"
	Cusparselt Kind = "cusparselt"
	Cutensor   Kind = "cutensor"
	Cudss      Kind = "cudss"
	Nvshmem    Kind = "nvshmem"
)

// Kinds are every kind of entry: the toolkit, then the libraries in
// version.Libraries' order.
func Kinds() []Kind {
	out := []Kind{CUDA}
	for _, t := range version.Libraries {
		out = append(out, Kind(t))
	}
	return out
}

// Library reports whether entries of k are library builds per CUDA major
// (cuDNN, NCCL, …), named <version>-cuda<major>.
func (k Kind) Library() bool { return version.Tool(k).Library() }

// known reports whether k is a kind the store keeps.
func (k Kind) known() bool { return k == CUDA || k.Library() }

// KindOf is the store kind of a tool's entries.
func KindOf(t version.Tool) Kind { return Kind(t) }
