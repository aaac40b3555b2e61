package compat

import (
	"fmt"
	"sort"
)

// Verdict says in a few words how the checked driver runs the release, as
// `cudaenv compat torch==X` prints it after a build: "driver 550.54.15 runs
// it". With no driver (Driver ""), building is still fine.
func (c DriverCheck) Verdict() string {
	if c.Driver == "" {
		return "driver: none found (fine for building, not for running)"
	}
	switch c.Status {
	case DriverOK:
		return "driver " + c.Driver + " runs it"
	case DriverMinorCompat:
		return fmt.Sprintf("driver %s runs it through minor-version compatibility (full support needs %s)", c.Driver, c.Need)
	case DriverTooOld:
		return fmt.Sprintf("driver %s is too old (needs %s)", c.Driver, c.Need)
	}
	return "driver " + c.Driver + ": unknown requirement"
}

// Verdict is the row's THIS MACHINE column in `cudaenv compat`: "runs",
// "runs (minor-version compat)", "driver too old (needs …)", or "-" when
// nothing is known (no driver, or a release the tables lack).
func (r TorchMatrixRow) Verdict() string {
	switch r.Driver {
	case DriverOK:
		return "runs"
	case DriverMinorCompat:
		return "runs (minor-version compat)"
	case DriverTooOld:
		return "driver too old (needs " + r.Need + ")"
	}
	return "-"
}

// BuildFor picks the CUDA build of the release to install for a machine:
// the one with the newest CUDA that driver runs on goos (minor-version
// compatibility and unknown requirements count as running it); any driver
// "" (none found: building only) takes the newest. Builds without a CUDA
// (cpu) are never picked. It reports false when the driver runs none.
func (t TorchRelease) BuildFor(driver, goos string) (TorchVariant, bool) {
	vs := append([]TorchVariant(nil), t.Variants...)
	sort.SliceStable(vs, func(i, j int) bool { return CompareVersions(vs[i].CUDA, vs[j].CUDA) > 0 })
	for _, v := range vs {
		if v.CUDA == "" || (v.OS != "" && v.OS != goosOr(goos)) {
			continue
		}
		if driver != "" && CheckDriver(v.CUDA, driver, goos).Status == DriverTooOld {
			continue
		}
		return v, true
	}
	return TorchVariant{}, false
}

// goosOr is goos, "" meaning linux (as Min does).
func goosOr(goos string) string {
	if goos == "windows" {
		return goos
	}
	return "linux"
}
