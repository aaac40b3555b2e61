//go:build !linux

package resolve

import "os"

// kernelFS: only Linux is known to put kernel files where a version file
// could point (/proc, /sys); elsewhere the other checks do.
func kernelFS(*os.File) (string, bool) { return "", false }
