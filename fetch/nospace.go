package fetch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cudaenv/cudaenv/internal/rootfs"
)

// withSpaceNeeded completes the hint of a full disk's error with the space
// the run's downloads still need: the archives not complete in dir (the
// partial downloads of a run that filled the disk are removed, see
// download, so all of their bytes are counted again).
func withSpaceNeeded(err error, arts []Artifact, dir string) error {
	var le *LocalError
	if !isNoSpace(err) || !errors.As(err, &le) {
		return err
	}
	var need int64
	seen := map[string]bool{}
	for i := range arts {
		a := &arts[i]
		if seen[a.SHA256] {
			continue
		}
		seen[a.SHA256] = true
		if st, err := os.Stat(filepath.Join(dir, a.SHA256)); err == nil && st.Size() == a.Size {
			continue
		}
		need += a.Size
	}

	msg := err.Error()
	if need == 0 || !strings.HasSuffix(msg, le.Hint) {
		return err
	}
	// Before the hint, which says what to do and ends the message.
	msg = strings.TrimSuffix(msg, le.Hint) + fmt.Sprintf("the downloads still need %s in %s, more to unpack them; ", rootfs.SizeText(need), dir) + le.Hint
	return &reworded{msg, err}
}

// reworded is err with another message.
type reworded struct {
	msg string
	err error
}

func (e *reworded) Error() string { return e.msg }
func (e *reworded) Unwrap() error { return e.err }
