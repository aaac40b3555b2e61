// Command floor is the least a Go shim can do: start, then exec the
// binary named by $SHIM_FLOOR_TARGET. The shim benchmark times it to show
// how much of a shim call is Go's own start-up.
package main

import (
	"os"
	"syscall"
)

func main() {
	t := os.Getenv("SHIM_FLOOR_TARGET")
	syscall.Exec(t, []string{t}, os.Environ())
	os.Exit(126)
}
