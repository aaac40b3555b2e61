//go:build unix

package venv

import (
	"errors"
	"io"
	"os"
	"syscall"
)

// readFile opens p with O_NOFOLLOW (a link is refused, never followed)
// and O_NONBLOCK (a named pipe is opened without waiting for a writer,
// then refused), and checks the descriptor, not the name, so nothing can
// be swapped in between.
func readFile(p string, max int64) ([]byte, error) {
	fd, err := syscall.Open(p, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC|syscall.O_NOCTTY, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, ErrLink
		}
		return nil, err
	}
	f := os.NewFile(uintptr(fd), p)
	defer f.Close()
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, err
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil, ErrNotRegular
	}
	if st.Size > max {
		return nil, ErrTooLarge
	}
	// The size the descriptor gives, no more: /proc's files say 0.
	buf := make([]byte, st.Size)
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, err
	}
	return buf[:n], nil
}

// readDir lists a folder (O_DIRECTORY: nothing else is opened).
func readDir(dir string, max int) ([]string, error) {
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC|syscall.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), dir)
	defer f.Close()
	names, err := f.Readdirnames(max)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return names, nil
}
