//go:build unix

package cudabin

import (
	"syscall"
	"time"
)

// cpuTime is the process's user and system CPU time: on a machine other
// jobs share, a steadier measure than the wall clock.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
