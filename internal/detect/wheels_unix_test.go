//go:build unix

package detect

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A METADATA or RECORD that is a named pipe is never opened: doctor and
// the prompt hook would block on it.
func TestWheelLibsDoesNotOpenANamedPipe(t *testing.T) {
	for _, name := range []string{"METADATA", "RECORD"} {
		t.Run(name, func(t *testing.T) {
			dir := site(t, nvjitlinkWheel(nil))
			p := filepath.Join(dir, "nvidia_nvjitlink_cu12-12.4.127.dist-info", name)
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Skip("no named pipes here:", err)
			}
			if got := (Host{}).WheelLibs([]string{dir}); len(got) != 0 {
				t.Errorf("got %+v, want nothing", got)
			}
		})
	}
}
