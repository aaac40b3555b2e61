package main

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
)

// noSpaceHint ends a full disk's error (or a full file-count quota's:
// the same ENOSPC, or EDQUOT) with what to do, where the path that failed
// has not said it already (downloads' errors do: "free space, or drop
// cached downloads …"): a store write, a pin, a receipt.
func noSpaceHint(err error) error {
	if err == nil || !(errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)) || strings.Contains(err.Error(), "free space") {
		return err
	}
	return fmt.Errorf("%w; that disk, or its file-count quota, is full: free space there (cudaenv cache prune drops cached downloads, cudaenv uninstall versions you no longer use)", err)
}
