//go:build !windows

package shims

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A command removed between the shim's resolving it and its exec (an
// uninstall that ran meanwhile) is said in one line of cudaenv's; a
// script whose interpreter is missing keeps the system's own reason.
func TestExecSaysWhyTheCommandDidNotStart(t *testing.T) {
	dir := t.TempDir()
	gone := filepath.Join(dir, "cuda", "12.4.1", "bin", "nvcc")
	var stderr bytes.Buffer
	if code := Exec("nvcc", Target{Path: gone, Args: []string{gone}}, &stderr); code != 126 {
		t.Errorf("exit %d", code)
	}
	want := "cudaenv: nvcc: " + gone + " was removed as it started (its version was uninstalled meanwhile); run it again to use what is selected now\n"
	if stderr.String() != want {
		t.Errorf("stderr %q\nwant %q", stderr.String(), want)
	}
	script := filepath.Join(dir, "ptxas")
	os.WriteFile(script, []byte("#!/no/such/interpreter\n"), 0o755)
	stderr.Reset()
	Exec("ptxas", Target{Path: script, Args: []string{script}}, &stderr)
	if got := stderr.String(); strings.Contains(got, "was removed") || !strings.HasPrefix(got, "cudaenv: ptxas: exec "+script+": no such file or directory") {
		t.Errorf("stderr %q", got)
	}
}
