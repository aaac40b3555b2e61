//go:build !windows

package resolve

import "syscall"

// syscallENOTDIR: a path through a regular file (proj/file/.cuda-version)
// just means there is no version file there.
var syscallENOTDIR error = syscall.ENOTDIR
