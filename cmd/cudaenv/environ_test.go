package main

import (
	"testing"

	"github.com/cudaenv/cudaenv/internal/activate"
	"github.com/cudaenv/cudaenv/internal/envdiff"
)

func TestWindowsPathIsEditedNotReplaced(t *testing.T) {
	vars := envdiff.ParseEnv([]string{`Path=C:\Windows;C:\tools`, "OTHER=x"}, "windows")
	if vars["PATH"] != `C:\Windows;C:\tools` {
		t.Fatalf("PATH = %q", vars["PATH"])
	}
	want := envdiff.Want{Prepend: map[string][]string{"PATH": {`C:\cuda\bin`}}}
	changes := activate.Changes(vars, want, "windows")
	got := envdiff.Result(vars, changes)["PATH"]
	if got != `C:\cuda\bin;C:\Windows;C:\tools` {
		t.Errorf("PATH after activation = %q", got)
	}
	if unix := envdiff.ParseEnv([]string{"Path=a", "PATH=b"}, "linux"); unix["Path"] != "a" || unix["PATH"] != "b" {
		t.Errorf("linux keys were folded: %v", unix)
	}
}
