//go:build tools

// Package tools pins the module's planned dependencies until code imports them.
package tools

import (
	_ "github.com/adrg/xdg"
	_ "github.com/mholt/archives"
	_ "github.com/rogpeppe/go-internal/testscript"
	_ "github.com/schollz/progressbar/v3"
	_ "github.com/urfave/cli/v2"
)
