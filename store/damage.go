package store

import (
	"bytes"
	"os"
)

// InstalledReceipt is the one reading of a receipt that every reader
// shares, the hook's and the shims' (activate.load, the C fast shim) as
// well as List's: a receipt the store wrote whole, for files it installed
// (not a link to a tree elsewhere), is one that begins with { and ends
// with } and does not name the "link" source. Such an entry is installed
// and its files are in its own folder, whatever its fields hold; a field
// that does not decode makes it damaged (see Entry.Damage), not broken.
// Any other receipt is decoded in full, and one that does not decode is
// broken.
func InstalledReceipt(data []byte) bool {
	t := bytes.TrimSpace(data)
	return len(t) >= 2 && t[0] == '{' && t[len(t)-1] == '}' && !bytes.Contains(data, []byte(`"link"`))
}

// keyFiles are, per component, files its archive always has (either name
// of a pair: Windows's, or the header an older layout or a wheel has in
// its place) whose absence
// means the tree was damaged after it was installed. A few stats: list,
// doctor and install check them, the hook does not.
var keyFiles = map[string][][2]string{
	"cuda_nvcc":   {{"bin/nvcc", "bin/nvcc.exe"}},
	"cuda_cudart": {{"include/cuda_runtime.h", ""}},
	"cudnn":       {{"include/cudnn_version.h", "include/cudnn.h"}},
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
