package doctor

import (
	"testing"

	"github.com/cudaenv/cudaenv/internal/version"
)

func TestHintsNameOnlyVersionsThatAreInstalled(t *testing.T) {
	any := func(version.Version) bool { return true }
	twelve := func(v version.Version) bool { return v.Major() == 12 }
	for _, tc := range []struct {
		name      string
		installed []string
		fits      func(version.Version) bool
		want      string
	}{
		{"nothing installed: how to install", nil, any, "cudaenv install 12.4"},
		{"the newest installed that fits", []string{"12.4.1", "12.10.0", "11.8.0", "13.0.2"}, twelve, "cudaenv use 12.10.0"},
		{"none fits: how to install", []string{"11.8.0"}, twelve, "cudaenv install 12.4"},
		{"a driver's limit by major.minor", []string{"11.8.0", "12.4.1", "12.6.3"}, atMost("12.4.0"), "cudaenv use 12.4.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := useOrInstall(tc.installed, tc.fits, "12.4"); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestTheDriverHintSwitchesToAnInstalledToolkit(t *testing.T) {
	in := Inputs{InstalledCUDA: []string{"11.4.2", "12.4.1"}}
	in.Toolkit.Version = ""
	if c := checkToolkit(in); c.Hint != "select one: cudaenv use 12.4.1" {
		t.Errorf("nothing selected: hint %q", c.Hint)
	}
}

func TestALinkedIncompleteToolkitIsNotToldToReinstall(t *testing.T) {
	in := Inputs{}
	in.Toolkit.Version, in.Toolkit.Dir, in.Toolkit.Installed, in.Toolkit.HasReceipt, in.Toolkit.From = "12.4.1", "/opt/cuda", true, true, "link"
	in.Toolkit.Facts.Missing = []string{"include/cuda_runtime.h"}
	in.Toolkit.Facts.NVCC = "/opt/cuda/bin/nvcc"
	c := checkToolkit(in)
	if c.Status != Fail || c.Hint != "it is a linked tree: complete it, or replace it with cudaenv's own: cudaenv uninstall 12.4.1 && cudaenv install 12.4.1" {
		t.Errorf("check = %+v", c)
	}
}
