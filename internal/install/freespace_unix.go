//go:build linux || darwin || freebsd

package install

import "syscall"

// freeSpace is the bytes an unprivileged user may still write under dir.
func freeSpace(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return -1, err
	}
	return int64(uint64(st.Bavail) * uint64(st.Bsize)), nil
}
