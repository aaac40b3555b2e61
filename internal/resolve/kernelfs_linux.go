package resolve

import (
	"os"
	"syscall"
)

// kernelFileSystems are the Linux file systems whose files are the
// kernel's, not data: reading them can block (/proc/kmsg), consume what
// others wait for, or touch hardware. Magic numbers from linux/magic.h.
var kernelFileSystems = map[int64]string{
	0x9fa0:     "proc",
	0x62656572: "sysfs",
	0x64626720: "debugfs",
	0x74726163: "tracefs",
	0x73636673: "securityfs",
	0xf97cff8c: "selinuxfs",
	0x43415d53: "smackfs",
	0x27e0eb:   "cgroup",
	0x63677270: "cgroup2",
	0xcafe4a11: "bpf",
	0x62656570: "configfs",
	0xde5e81e4: "efivarfs",
	0x6165676c: "pstore",
	0x65735543: "fusectl",
	0x1cd1:     "devpts",
	0x42494e4d: "binfmt_misc",
	0x6e736673: "nsfs",
	0x19800202: "mqueue",
}

// kernelFS names the kernel file system f is on, if it is one.
func kernelFS(f *os.File) (string, bool) {
	rc, err := f.SyscallConn()
	if err != nil {
		return "", false
	}
	var st syscall.Statfs_t
	var serr error
	// Control, not Fd: Fd would switch the file to blocking mode.
	if err := rc.Control(func(fd uintptr) { serr = syscall.Fstatfs(int(fd), &st) }); err != nil || serr != nil {
		return "", false
	}
	name, ok := kernelFileSystems[int64(uint32(st.Type))] // 32 bits on some platforms
	return name, ok
}
