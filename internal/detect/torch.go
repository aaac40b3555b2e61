package detect

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/cudaenv/cudaenv/internal/venv"
)

// Torch is the PyTorch installed for the active Python.
type Torch struct {
	Version string // torch.__version__: "2.5.1+cu124"
	CUDA    string // torch.version.cuda: "12.4"; "" for a CPU-only build
	Path    string // the version.py read
	Python  string // the interpreter asked for sys.path
	// PythonVersion is that interpreter's major.minor ("3.12"); "" when
	// it did not say.
	PythonVersion string
	// CUDAPins are the CUDA requirements (nvidia-*, cuda-toolkit) of the
	// Requires-Dist lines of the torch dist-info beside version.py whose
	// METADATA names the same version, markers dropped:
	// "nvidia-cudnn-cu13==9.26.0.51". Lines of any other shape are left out.
	CUDAPins []string
}

// ErrNoPython is returned by Torch when neither python3 nor python is on PATH.
var ErrNoPython = fmt.Errorf("no python3 or python on PATH")

// sysPathScript prints sys.path, one entry a line, then "#python 3.12"
// (a line no path entry can be, being relative).
const sysPathScript = `import sys; print("\n".join(sys.path)); print("#python %d.%d" % sys.version_info[:2])`

// Torch finds PyTorch for the python3 (else python) on PATH without importing
// it: it asks the interpreter for sys.path and reads the first
// <dir>/torch/version.py. found is false when torch is not installed.
func (h Host) Torch(ctx context.Context) (t Torch, found bool, err error) {
	py := h.LookPath("python3")
	if py == "" {
		py = h.LookPath("python")
	}
	if py == "" {
		return Torch{}, false, ErrNoPython
	}
	out, err := h.run(ctx, py, "-c", sysPathScript)
	if err != nil {
		return Torch{}, false, fmt.Errorf("%s sys.path: %s", py, firstLine(out, err))
	}
	lines := strings.Split(strings.ReplaceAll(string(out), "\r\n", "\n"), "\n")
	pyVersion := ""
	for _, l := range lines {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "#python "); ok && rePythonVersion().MatchString(v) {
			pyVersion = v
		}
	}
	for _, dir := range lines {
		dir = strings.TrimSpace(dir)
		if dir == "" || !filepath.IsAbs(dir) && !strings.HasPrefix(dir, "/") {
			continue // "" is the current directory, not an install
		}
		// Through venv's bounded reader: a repository can ship its .venv,
		// with a version.py that is a link to /dev/zero, a named pipe or
		// a line of terminal escapes.
		tv, err := venv.ReadTorch(ctx, h.file(dir))
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			continue
		}
		p := filepath.Join(dir, "torch", "version.py")
		if err != nil {
			var pe *venv.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return Torch{Python: py, PythonVersion: pyVersion}, false, fmt.Errorf("%s: %w", p, err)
		}
		return Torch{Version: tv.Version, CUDA: tv.CUDA, Path: p, Python: py, PythonVersion: pyVersion, CUDAPins: h.torchCUDAPins(ctx, dir, tv.Version)}, true, nil
	}
	return Torch{Python: py, PythonVersion: pyVersion}, false, nil
}
