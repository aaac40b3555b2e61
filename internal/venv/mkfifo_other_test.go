//go:build !unix

package venv

import "errors"

func mkfifo(string) error { return errors.New("no named pipes here") }
