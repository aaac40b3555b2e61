package store

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// Damage says what is wrong with an installed entry that its receipt
// does not explain: a receipt field that does not decode, or a file its
// components always have that is gone (bin/ deleted, say). It stats a few
// files; nil for a whole entry, and for linked and broken ones (Err says
// what is wrong with those).
func (e Entry) Damage() error {
	if e.Err != nil || e.Linked() {
		return nil
	}
	if e.receiptErr != nil {
		return fmt.Errorf("%s does not read: %v", ReceiptName, e.receiptErr)
	}
	var gone []string
	for _, c := range e.Receipt.Components {
		if c.ID == "cuda_nvcc" && e.Receipt.LibrariesOnly {
			continue // the CUDA 12 nvcc wheel ships no nvcc
		}
		for _, f := range keyFiles[c.ID] {
			if !exists(filepath.Join(e.Path, filepath.FromSlash(f[0]))) && (f[1] == "" || !exists(filepath.Join(e.Path, filepath.FromSlash(f[1])))) {
				gone = append(gone, f[0]+" ("+c.ID+")")
			}
		}
	}
	if len(gone) > 0 {
		return fmt.Errorf("%s missing", strings.Join(gone, ", "))
	}
	return nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
