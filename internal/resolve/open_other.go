//go:build !unix

package resolve

import "os"

func openNoBlock(path string) (*os.File, error) { return os.Open(path) }
