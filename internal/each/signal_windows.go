package each

import "os/exec"

// interruptible: Windows has no process-group interrupt to send; the
// run is killed when the context ends.
func interruptible(cmd *exec.Cmd) {}
