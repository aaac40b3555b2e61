package main

import (
	"errors"

	"github.com/cudaenv/cudaenv/internal/activate"
	"github.com/cudaenv/cudaenv/internal/install"
)

// addHintFlags completes the command an error tells the user to run with
// the flags it needs on this machine, so that pasted as is it works:
// --source pypi where every installed version came from PyPI and the
// settings name no source (install.HintSource).
func addHintFlags(e *env, err error) {
	var ni *activate.NotInstalledError
	if err == nil || !errors.As(err, &ni) || ni.InstallFlags != "" || e.dirsErr != nil {
		return
	}
	setting, serr := e.setting("source")
	if serr != nil {
		return
	}
	if src := install.HintSource(e.store(), setting); src != "" {
		ni.InstallFlags = " --source " + src
	}
}
