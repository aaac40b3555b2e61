package cudabin

import "errors"

var errNotRegular = errors.New("not a regular file")
