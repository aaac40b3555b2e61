//go:build !windows

package each

import (
	"os/exec"
	"syscall"
)

// interruptible runs cmd in a process group of its own, so that an
// interrupt reaches the programs it starts too (a shell's sleep, make's
// compilers), whether it came from the terminal or from kill.
func interruptible(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) }
}
