package install

import (
	"fmt"
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
	t, err := rootfs.Open(stage)
	if err != nil {
		return err
	}
	defer t.Close()
	if pl.Kind == store.CUDA {
		platform := pl.Receipt.Platform
		if platform == "" && fr != nil {
			platform = fr.Platform
		}
		if _, err := linkstub.Complete(t, stage, platform); err != nil {
			return err
		}
		var comps []cmakepkg.Component
		if fr != nil {
			for _, c := range fr.Components {
				comps = append(comps, cmakepkg.Component{ID: c.ID, Name: c.Name, Version: c.Version})
			}
		}
		if _, err := cmakepkg.WriteToolkit(t, pl.Name, comps); err != nil {
			return err
		}
		return nil
	}
	if pl.Kind.Library() {
		v, _, _ := strings.Cut(pl.Name, "-cuda")
		if _, err := cmakepkg.WritePackage(t, string(pl.Kind), v); err != nil {
			return fmt.Errorf("%s: %w", pl.Label, err)
		}
	}
	return nil
}
