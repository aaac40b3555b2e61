package install

import "golang.org/x/sys/windows"

// freeSpace is the bytes this user may still write under dir.
func freeSpace(dir string) (int64, error) {
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return -1, err
	}
	var avail, total, free uint64
	if err := windows.GetDiskFreeSpaceEx(p, &avail, &total, &free); err != nil {
		return -1, err
	}
	return int64(avail), nil
}
