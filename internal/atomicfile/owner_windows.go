package atomicfile

import (
	"io/fs"
	"os"
)

// On Windows a folder's files are the user's unless an admin shares it;
// age alone decides.
func ownedByMe(fs.FileInfo) bool { return true }

// processGone reports whether no process pid runs on this machine.
func processGone(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return true
	}
	p.Release()
	return false
}
