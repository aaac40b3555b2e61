//go:build !unix

package resolve

import "errors"

func mkfifo(string) error { return errors.ErrUnsupported }
