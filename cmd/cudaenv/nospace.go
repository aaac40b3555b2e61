package main

import (
	"errors"
	"fmt"
	"strings"
	"syscall"

	"github.com/cudaenv/cudaenv/fetch"
)

// noSpaceHint ends a full disk's error (or a full file-count quota's:
// the same ENOSPC, or EDQUOT) with what to do, where the path that failed
// has not said it already (fetch's errors do: *fetch.LocalError): a store
// write, a pin, a receipt.
func noSpaceHint(err error) error {
	var le *fetch.LocalError
	if err == nil || !(errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)) || errors.As(err, &le) || strings.Contains(err.Error(), "free space") {
		return err
	}
	return fmt.Errorf("%w; that disk, or its file-count quota, is full: free space there (cudaenv cache prune drops cached downloads, cudaenv uninstall versions you no longer use)", err)
}
