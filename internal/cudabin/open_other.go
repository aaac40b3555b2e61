//go:build !unix

package cudabin

import "os"

const openFlags = os.O_RDONLY
