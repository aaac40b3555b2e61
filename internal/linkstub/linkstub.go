// Package linkstub gives a Linux CUDA tree the link stubs NVIDIA's redist
// archives carry and its wheels do not: lib/stubs/libcuda.so (with
// cuda_cudart) and lib/stubs/libnvidia-ml.so (with cuda_nvml_dev). A
// program that calls the driver API or NVML links with -lcuda or
// -lnvidia-ml; on a build machine or in CI without a driver only a stub
// answers that. A stub is a small ELF shared object with the real
// library's SONAME (so the program loads the driver's libcuda.so.1 at run
// time) exporting every function its header (include/cuda.h,
// include/nvml.h) declares, versioned names included; it is never put
// where a program loads libraries from, only on the link path, as NVIDIA
// places it. Headers are read from the tree and writes go through its
// rooted writer (rootfs): what an archive shipped cannot send a read or a
// write outside the tree.
package linkstub

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/cudaenv/cudaenv/internal/rootfs"
)

// Library is one driver library a stub stands in for.
type Library struct {
	File   string // lib/stubs/<File>
	Soname string // the real library's
	Header string // include/<Header> declares its functions
	Prefix string // every function's name starts with it
	// Return is what each function returns if the stub is loaded after
	// all: CUDA_ERROR_STUB_LIBRARY (34), which cuda.h defines for just
	// this; NVML_ERROR_LIBRARY_NOT_FOUND (12) for NVML.
	Return uint16
	// needsCudart: the stub comes with the runtime (cuda_cudart), not
	// with the header alone.
	needsCudart bool
}

// Libraries are the stubs a CUDA tree gets.
var Libraries = []Library{
	{File: "libcuda.so", Soname: "libcuda.so.1", Header: "cuda.h", Prefix: "cu", Return: 34, needsCudart: true},
	{File: "libnvidia-ml.so", Soname: "libnvidia-ml.so.1", Header: "nvml.h", Prefix: "nvml", Return: 12},
}

// Dir is where stubs lie in a tree, as in NVIDIA's archives.
const Dir = "lib/stubs"

// stubDirs are the folders a tree may keep its stubs in: cudaenv's and
// NVIDIA's merged trees lib/stubs, installers lib64/stubs, cross trees
// targets/<arch>-linux/lib/stubs.
var stubDirs = []string{"lib/stubs", "lib64/stubs", "targets/x86_64-linux/lib/stubs", "targets/sbsa-linux/lib/stubs", "targets/aarch64-linux/lib/stubs"}

// Wanted is what a tree at dir should have and lacks: the stub paths
// (lib/stubs/libcuda.so) of each library whose files it holds (cuda.h and
// the runtime library for libcuda, nvml.h for NVML) and for which none of
// stubDirs has a stub. Nothing is read but names.
func Wanted(dir string) []string {
	var out []string
	for _, l := range Libraries {
		if !l.wants(dir) {
			continue
		}
		found := false
		for _, d := range stubDirs {
			if fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(d), l.File)); err == nil && fi.Mode().IsRegular() {
				found = true
				break
			}
		}
		if !found {
			out = append(out, path.Join(Dir, l.File))
		}
	}
	return out
}

// wants reports whether a tree holds the library's files: its header
// (what a program calling it includes), and for libcuda the runtime too.
func (l Library) wants(dir string) bool {
	if l.needsCudart && !hasCudart(dir) {
		return false
	}
	for _, inc := range []string{"include", "targets/x86_64-linux/include", "targets/sbsa-linux/include"} {
		if fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(inc), l.Header)); err == nil && fi.Mode().IsRegular() {
			return true
		}
	}
	return false
}

func hasCudart(dir string) bool {
	for _, lib := range []string{"lib", "lib64", "targets/x86_64-linux/lib", "targets/sbsa-linux/lib"} {
		ents, err := os.ReadDir(filepath.Join(dir, filepath.FromSlash(lib)))
		if err != nil {
			continue
		}
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "libcudart.so") {
				return true
			}
		}
	}
	return false
}

// Written is one stub Complete wrote: its path in the tree and how many
// functions it exports.
type Written struct {
	Path      string
	Functions int
}

// Complete writes, into the tree at dir built for platform, each stub
// the tree wants (see Wanted) and lacks in lib/stubs, from the header in
// include/. A tree that already has the stub (NVIDIA's own, from a redist
// archive) keeps it; a platform without stubs (Windows) gets none; a tree
// without the header gets none of that library. Headers are read through
// the tree without following a symlink; stubs are written through t.
func Complete(t *rootfs.Tree, dir, platform string) ([]Written, error) {
	arch, ok := ArchOf(platform)
	if !ok {
		return nil, nil
	}
	var out []Written
	for _, l := range Libraries {
		rel := path.Join(Dir, l.File)
		if !l.wants(dir) {
			continue
		}
		if _, err := t.Root().Lstat(rel); err == nil {
			continue
		}
		header, err := readHeader(dir, path.Join("include", l.Header))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return out, fmt.Errorf("link stub %s: %w", l.File, err)
		}
		names, err := Functions(header, l.Prefix)
		if err != nil {
			return out, fmt.Errorf("link stub %s: include/%s: %w", l.File, l.Header, err)
		}
		if len(names) == 0 {
			return out, fmt.Errorf("link stub %s: include/%s declares no %s* function", l.File, l.Header, l.Prefix)
		}
		so, err := Build(arch, l.Soname, names, l.Return)
		if err != nil {
			return out, fmt.Errorf("link stub %s: %w", l.File, err)
		}
		if err := t.WriteNew(rel, so, 0o444); err != nil {
			return out, fmt.Errorf("link stub %s: %w", l.File, err)
		}
		out = append(out, Written{Path: rel, Functions: len(names)})
	}
	return out, nil
}

// readHeader reads a regular file of the tree, at most MaxHeader bytes,
// never through a symlink.
func readHeader(dir, rel string) ([]byte, error) {
	rt, err := rootfs.OpenRead(dir)
	if err != nil {
		return nil, err
	}
	defer rt.Close()
	f, err := rt.OpenFile(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", rel)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxHeader+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxHeader {
		return nil, fmt.Errorf("%s is larger than the %d bytes a header may be", rel, MaxHeader)
	}
	return b, nil
}
