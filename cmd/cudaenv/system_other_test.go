//go:build !linux

package main

import (
	"fmt"

	"github.com/rogpeppe/go-internal/testscript"
)

// The system store's script verbs need Linux (bind mounts, setpriv, ctime).
func systemCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return nil
}

func systemCondition(cond string) (bool, error) {
	switch cond {
	case "romount", "setpriv":
		return false, nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}
