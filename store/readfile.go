package store

import (
	"errors"
	"fmt"
	"io"
)

// maxReceipt bounds a receipt read back: a full toolkit's lists a few
// hundred components.
const maxReceipt = 4 << 20

// readOwnFile reads a file the store wrote, judged by the open
// descriptor: a regular file of at most max bytes.
func readOwnFile(p string, max int64) ([]byte, error) {
	f, err := openOwnFile(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("%d bytes, more than cudaenv writes", fi.Size())
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(data)) > max {
		err = fmt.Errorf("more than %d bytes, more than cudaenv writes", max)
	}
	return data, err
}
