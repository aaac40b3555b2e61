//go:build !unix

package fetch_test

import "errors"

func mkfifo(string) error { return errors.New("no named pipes here") }
