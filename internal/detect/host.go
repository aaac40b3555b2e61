// Package detect finds facts about this machine that cudaenv's checks need:
// the NVIDIA driver, the GPUs, host compilers, the active Python's PyTorch
// and what a toolkit directory holds. It touches the machine only through a
// Host: an environment map, a root prefix for files and an injected command
// runner, so every answer can be produced from fakes in tests.
package detect

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Runner runs a command and returns its combined stdout and stderr. It
// returns an error when the command cannot start or exits non-zero; the
// output is returned in both cases.
type Runner func(ctx context.Context, name string, args ...string) ([]byte, error)

// Host is the machine as detect sees it.
type Host struct {
	// Root is prepended to every absolute path read ("" reads the real files).
	// Paths handed to Run and returned in results never carry it.
	Root string
	// Env is the process environment (PATH, NVCC_CCBIN, ...).
	Env map[string]string
	// Run runs commands; nil means commands are never run.
	Run Runner
	// GOOS selects Windows conventions (".exe", ";" in PATH) when "windows".
	GOOS string
}

// ErrNoRunner is returned when a fact needs a command and Host.Run is nil.
var ErrNoRunner = errors.New("no command runner")

func (h Host) file(p string) string {
	if h.Root == "" {
		return p
	}
	return filepath.Join(h.Root, p)
}

func (h Host) readFile(p string) ([]byte, error) {
	return os.ReadFile(h.file(p))
}

func (h Host) stat(p string) (fs.FileInfo, error) {
	return os.Stat(h.file(p))
}

func (h Host) isFile(p string) bool {
	fi, err := h.stat(p)
	return err == nil && !fi.IsDir()
}

func (h Host) isDir(p string) bool {
	fi, err := h.stat(p)
	return err == nil && fi.IsDir()
}

func (h Host) run(ctx context.Context, name string, args ...string) ([]byte, error) {
	if h.Run == nil {
		return nil, ErrNoRunner
	}
	return h.Run(ctx, name, args...)
}

// PathList returns the entries of the PATH in Env, in order, empty ones dropped.
func (h Host) PathList() []string {
	return SplitList(h.Env["PATH"], h.GOOS)
}

// SplitList splits a PATH-style list (":" separated, ";" on Windows),
// dropping empty entries.
func SplitList(v, goos string) []string {
	sep := ":"
	if goos == "windows" {
		sep = ";"
	}
	var out []string
	for _, e := range strings.Split(v, sep) {
		if e != "" {
			out = append(out, e)
		}
	}
	return out
}

func (h Host) exe(name string) string {
	if h.GOOS == "windows" && !strings.HasSuffix(strings.ToLower(name), ".exe") {
		return name + ".exe"
	}
	return name
}

// LookPath returns the first PATH entry's name that exists as an executable
// file, joined as "dir/name", or "" if none does.
func (h Host) LookPath(name string) string {
	if all := h.LookPathAll(name); len(all) > 0 {
		return all[0]
	}
	return ""
}

// LookPathAll returns every "dir/name" on PATH that is an executable file, in
// PATH order. The toolkit check uses it to find an nvcc that shadows another.
func (h Host) LookPathAll(name string) []string {
	name = h.exe(name)
	var out []string
	seen := map[string]bool{}
	for _, dir := range h.PathList() {
		p := filepath.Join(dir, name)
		if seen[p] {
			continue
		}
		seen[p] = true
		if h.isExecutable(p) {
			out = append(out, p)
		}
	}
	return out
}

func (h Host) isExecutable(p string) bool {
	fi, err := h.stat(p)
	if err != nil || fi.IsDir() {
		return false
	}
	return h.GOOS == "windows" || fi.Mode()&0o111 != 0
}

// DirsWithFile returns the dirs that hold a file whose name starts with
// prefix ("libcudnn.so"), in the order given. It tells the doctor which
// LD_LIBRARY_PATH entries carry a cuDNN or a CUDA runtime.
func (h Host) DirsWithFile(dirs []string, prefix string) []string {
	var out []string
	for _, d := range dirs {
		entries, err := os.ReadDir(h.file(d))
		if err != nil {
			continue
		}
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), prefix) {
				out = append(out, d)
				break
			}
		}
	}
	return out
}
