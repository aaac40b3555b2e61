package install

import (
	"fmt"
	"path"
	"strings"

	"github.com/cudaenv/cudaenv/fetch"
	"github.com/cudaenv/cudaenv/internal/cmakepkg"
	"github.com/cudaenv/cudaenv/internal/linkstub"
	"github.com/cudaenv/cudaenv/internal/rootfs"
	"github.com/cudaenv/cudaenv/store"
)

// finishTree adds to a staged tree what NVIDIA's archives and installers
// carry and its wheels lack, so that every tree builds alike: a toolkit
// gets its link stubs (lib/stubs/libcuda.so, libnvidia-ml.so) and a
// version.json (with version.txt for older CMake); a library whose
// archive ships a CMake package (cuDSS, NVSHMEM) gets one written from
// its files. What the tree already has, NVIDIA's own, is kept. Every
// write goes through the tree's rooted writer.
func finishTree(stage string, pl *Plan, fr *fetch.Result) error {
	platform := pl.Receipt.Platform
	if platform == "" && fr != nil {
		platform = fr.Platform
	}
	var comps []cmakepkg.Component
	if fr != nil {
		for _, c := range fr.Components {
			comps = append(comps, cmakepkg.Component{ID: c.ID, Name: c.Name, Version: c.Version})
		}
	}
	return finish(stage, pl.Kind, pl.Name, pl.Label, platform, comps)
}

// finish is finishTree for an entry named by kind and name, built for
// platform from comps: what install does to a staged tree and an image
// to an entry's files (ImageEntry.Finish), so both hold the same files.
func finish(dir string, kind store.Kind, name, label, platform string, comps []cmakepkg.Component) error {
	t, err := rootfs.Open(dir)
	if err != nil {
		return err
	}
	defer t.Close()
	if kind == store.CUDA {
		if _, err := linkstub.Complete(t, dir, platform); err != nil {
			return err
		}
		if _, err := cmakepkg.WriteToolkit(t, name, comps); err != nil {
			return err
		}
		return nil
	}
	if kind.Library() {
		v, _, _ := strings.Cut(name, "-cuda")
		if _, err := cmakepkg.WritePackage(t, string(kind), v); err != nil {
			return fmt.Errorf("%s: %w", label, err)
		}
	}
	return nil
}

// FinishInputs are the files of a tree whose bytes finishing it reads
// (the headers the link stubs are made from), relative to the tree; of
// every other file it reads no more than the name. MaxFinishInput bytes
// of one are enough to finish as install does (a longer one is refused
// alike).
func FinishInputs() []string {
	var out []string
	for _, l := range linkstub.Libraries {
		out = append(out, path.Join("include", l.Header))
	}
	return out
}

// MaxFinishInput bounds what is kept of each of FinishInputs.
const MaxFinishInput = linkstub.MaxHeader + 1

// Finish adds to dir, the entry's files as an image holds them (the
// bytes of FinishInputs, names of the rest, and the layout links), what
// install adds to the same tree: link stubs, version files, CMake
// packages.
func (e *ImageEntry) Finish(dir string) error {
	var comps []cmakepkg.Component
	for _, c := range e.Components {
		comps = append(comps, cmakepkg.Component{ID: c.ID, Name: c.art.Name, Version: c.Version})
	}
	if err := finish(dir, e.Kind, e.Name, e.Label, e.Platform, comps); err != nil {
		return fmt.Errorf("image %s: %w", e.Label, err)
	}
	return nil
}
