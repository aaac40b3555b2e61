package main

import (
	"errors"
	"fmt"

	"github.com/cudaenv/cudaenv/internal/activate"
	"github.com/cudaenv/cudaenv/internal/install"
	"github.com/cudaenv/cudaenv/internal/version"
)

// addHintFlags completes the command an error tells the user to run with
// the flags it needs on this machine, so that pasted as is it works:
// --source pypi where every installed version came from PyPI and the
// settings name no source (install.HintSource). A CUDA version that is no
// release at all (12.99) gets no install command: what there is instead.
func addHintFlags(e *env, err error) {
	var ni *activate.NotInstalledError
	if err == nil || !errors.As(err, &ni) || ni.InstallFlags != "" || e.dirsErr != nil {
		return
	}
	ni.NoRelease = noSuchRelease(e, ni.Spec)
	setting, serr := e.setting("source")
	if serr != nil {
		return
	}
	if src := install.HintSource(e.store(), setting); src != "" {
		ni.InstallFlags = " --source " + src
	}
}

// noSuchRelease says, for a CUDA spec no release cudaenv knows of has
// (its tables, and the release index cached from NVIDIA's server), that
// there is none and which there are: "there is no CUDA 12.99 (the newest
// CUDA 12: 12.9.1); see: cudaenv ls-remote 12". A spec newer than every
// known release may be one NVIDIA published since: "" (install it).
func noSuchRelease(e *env, sp version.Spec) string {
	if sp.Tool != version.CUDA || sp.Kind != version.Prefix || len(sp.Prefix) == 0 {
		return ""
	}
	known := install.KnownReleases(e.dirs.Cache)
	var newest, sameMajor version.Version
	for _, v := range known {
		if v.HasPrefix(sp.Prefix) {
			return ""
		}
		if newest == nil || version.Compare(v, newest) > 0 {
			newest = v
		}
		if v.Major() == sp.Prefix.Major() && (sameMajor == nil || version.Compare(v, sameMajor) > 0) {
			sameMajor = v
		}
	}
	if newest == nil || version.Compare(sp.Prefix, newest[:min(len(newest), len(sp.Prefix))]) > 0 {
		return ""
	}
	if sameMajor != nil {
		return fmt.Sprintf("there is no CUDA %s release (the newest CUDA %d: %s); see: cudaenv ls-remote %d", sp.Prefix, sp.Prefix.Major(), sameMajor, sp.Prefix.Major())
	}
	return fmt.Sprintf("there is no CUDA %s release; see: cudaenv ls-remote", sp.Prefix)
}
