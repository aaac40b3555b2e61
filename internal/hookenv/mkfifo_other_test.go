//go:build !unix

package hookenv

import "errors"

func mkfifo(string) error { return errors.ErrUnsupported }
