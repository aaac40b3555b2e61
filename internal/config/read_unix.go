//go:build unix

package config

import "syscall"

// openNoWait opens a named pipe without waiting for a writer (it is then
// refused by its mode).
const openNoWait = syscall.O_NONBLOCK
