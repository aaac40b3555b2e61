package compat

import (
	"fmt"
	"strconv"
)

// DriverReq is the NVIDIA driver a CUDA release needs.
type DriverReq struct {
	CUDA    string // the release asked about, e.g. "12.4.2"
	Release string // the table row the answer comes from, e.g. "12.4.1"
	Exact   bool   // Release is the release asked about

	Linux   string // minimum driver on Linux x86_64 for full support; "" if unknown
	Windows string // minimum driver on Windows x86_64; "" if NVIDIA publishes none
	// LinuxFromManifest is set when Linux comes from the nvidia_driver component
	// of the release's redistrib manifest because the release notes have no row.
	LinuxFromManifest bool

	// Minor-version compatibility floor of the CUDA major: a driver at least this
	// new runs code built with any release of that major, without PTX JIT of
	// newer PTX. See MinorCompatFloor.
	MinorCompatLinux   string
	MinorCompatWindows string

	Note   string // why the answer is approximate, and caveats from the table
	Source string // where the row comes from
}

// Min returns the minimum driver for goos ("linux" or "windows"; anything else
// is treated as linux).
func (r DriverReq) Min(goos string) string {
	if goos == "windows" {
		return r.Windows
	}
	return r.Linux
}

// Unbundled reports whether the release's Linux toolkit bundles no driver
// (CUDA 13.4 and newer 13.x: their manifests name none). Such a release
// runs on the major's minor-version-compatibility floor as a matter of
// course; its Linux minimum is the developer driver its new features need.
func (r DriverReq) Unbundled() bool {
	v := versionParts(r.CUDA)
	return len(v) >= 2 && v[0] == 13 && v[1] >= 4
}

// MinorCompat returns the minor-version-compatibility floor for goos.
func (r DriverReq) MinorCompat(goos string) string {
	if goos == "windows" {
		return r.MinorCompatWindows
	}
	return r.MinorCompatLinux
}

// DriverFor returns the driver a CUDA release needs. A release missing from
// the table is answered from the nearest lower release of the same minor
// (12.4.2 from 12.4.1), else of the same major (12.7 from 12.6.3), and Note
// says so; a bare "12.4" means the first 12.4 release. It reports false when
// the major is unknown or the release predates every row of its major.
func DriverFor(cuda string) (DriverReq, bool) {
	asked, parts := normalize(cuda, 3)
	if parts == 0 {
		return DriverReq{}, false
	}
	var exact, sameMinor, sameMajor, firstOfMinor *driverRow
	mm := majorMinor(asked)
	for i := range driverRows {
		r := &driverRows[i]
		if Major(r.cuda) != Major(asked) {
			continue
		}
		c := CompareVersions(r.cuda, asked)
		if c == 0 {
			exact = r
		}
		if majorMinor(r.cuda) == mm && (firstOfMinor == nil || CompareVersions(r.cuda, firstOfMinor.cuda) < 0) {
			firstOfMinor = r
		}
		if c < 0 {
			if majorMinor(r.cuda) == mm && (sameMinor == nil || CompareVersions(r.cuda, sameMinor.cuda) > 0) {
				sameMinor = r
			}
			if sameMajor == nil || CompareVersions(r.cuda, sameMajor.cuda) > 0 {
				sameMajor = r
			}
		}
	}
	var row *driverRow
	var note string
	switch {
	case exact != nil:
		row = exact
	case parts < 3 && firstOfMinor != nil:
		row = firstOfMinor
		note = fmt.Sprintf("%s stands for every %s release; using %s, the first", cuda, mm, row.cuda)
	case sameMinor != nil:
		row = sameMinor
		note = fmt.Sprintf("%s is not in the table; using %s, the nearest lower %s release (the real minimum may be higher)", cuda, row.cuda, mm)
	case sameMajor != nil:
		row = sameMajor
		note = fmt.Sprintf("%s is not in the table; using %s, the nearest lower %d.x release (the real minimum may be higher)", cuda, row.cuda, Major(asked))
	default:
		return DriverReq{}, false
	}
	req := DriverReq{
		CUDA:               cuda,
		Release:            row.cuda,
		Exact:              row == exact,
		Linux:              row.linuxMin,
		Windows:            row.windowsMin,
		MinorCompatLinux:   row.mvcLinux,
		MinorCompatWindows: row.mvcWindows,
		Note:               joinNotes(note, row.note),
		Source:             row.source,
	}
	if req.Linux == "" && row.manifestDriver != "" {
		req.Linux = row.manifestDriver
		req.LinuxFromManifest = true
	}
	return req, true
}

// MinorCompat is the oldest driver that runs code built with any release of a
// CUDA major through minor-version compatibility.
type MinorCompat struct {
	Major   int
	Linux   string // e.g. "525.60.13" for 12.x
	Windows string // e.g. "527.41" for 12.x
	Source  string
}

// MinorCompatFloor returns the minor-version-compatibility floor of a CUDA
// major (11, 12, 13), taken from the newest release of that major.
func MinorCompatFloor(major int) (MinorCompat, bool) {
	var last *driverRow
	for i := range driverRows {
		r := &driverRows[i]
		if Major(r.cuda) == major && (last == nil || CompareVersions(r.cuda, last.cuda) > 0) {
			last = r
		}
	}
	if last == nil || last.mvcLinux == "" {
		return MinorCompat{}, false
	}
	return MinorCompat{Major: major, Linux: last.mvcLinux, Windows: last.mvcWindows, Source: last.source}, true
}

// DriverStatus says how well a driver runs a CUDA release.
type DriverStatus int

const (
	// DriverUnknown: the release or the driver version is not known.
	DriverUnknown DriverStatus = iota
	// DriverOK: the driver is at least the release's minimum.
	DriverOK
	// DriverMinorCompat: older than the minimum but at least the major's
	// minor-version-compatibility floor: code built with the release runs,
	// PTX newer than the driver cannot be JIT-compiled, and features that need
	// the newer driver are unavailable.
	DriverMinorCompat
	// DriverTooOld: older than the minor-version-compatibility floor.
	DriverTooOld
)

// String returns "ok", "minor-compat", "too-old" or "unknown".
func (s DriverStatus) String() string {
	switch s {
	case DriverOK:
		return "ok"
	case DriverMinorCompat:
		return "minor-compat"
	case DriverTooOld:
		return "too-old"
	}
	return "unknown"
}

// DriverCheck is the verdict of CheckDriver.
type DriverCheck struct {
	Status DriverStatus
	Driver string    // the driver checked
	Need   string    // minimum for full support on the OS ("" if unknown)
	Floor  string    // minor-version-compatibility floor on the OS ("" if unknown)
	Req    DriverReq // the table answer behind Need and Floor
}

// CheckDriver decides whether driver runs code built with CUDA release cuda on
// goos ("linux" or "windows").
func CheckDriver(cuda, driver, goos string) DriverCheck {
	req, ok := DriverFor(cuda)
	chk := DriverCheck{Driver: driver, Req: req}
	if !ok || len(versionParts(driver)) == 0 {
		return chk
	}
	chk.Need, chk.Floor = req.Min(goos), req.MinorCompat(goos)
	switch {
	case chk.Need != "" && DriverAtLeast(driver, chk.Need):
		chk.Status = DriverOK
	case chk.Need == "" && chk.Floor != "" && DriverAtLeast(driver, chk.Floor):
		// No published minimum for this OS (Windows, CUDA 13): the branch floor is all we know.
		chk.Status = DriverOK
	case chk.Floor != "" && DriverAtLeast(driver, chk.Floor):
		chk.Status = DriverMinorCompat
	case chk.Need == "" && chk.Floor == "":
		chk.Status = DriverUnknown
	default:
		chk.Status = DriverTooOld
	}
	return chk
}

// MaxCUDAForDriver returns the newest CUDA release in the table that driver
// fully supports on goos (its minimum is met), e.g. "12.4.1" for 550.54.15.
func MaxCUDAForDriver(driver, goos string) (string, bool) {
	best := ""
	for _, r := range driverRows {
		min := r.linuxMin
		if goos == "windows" {
			min = r.windowsMin
		} else if min == "" {
			min = r.manifestDriver
		}
		if min == "" || !DriverAtLeast(driver, min) {
			continue
		}
		if best == "" || CompareVersions(r.cuda, best) > 0 {
			best = r.cuda
		}
	}
	return best, best != ""
}

// CUDAReleases returns every CUDA release the driver table knows, oldest first.
func CUDAReleases() []string {
	out := make([]string, 0, len(driverRows))
	for _, r := range driverRows {
		out = append(out, r.cuda)
	}
	sortVersions(out)
	return out
}

func joinNotes(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

func sortVersions(vs []string) {
	for i := 1; i < len(vs); i++ {
		for j := i; j > 0 && CompareVersions(vs[j-1], vs[j]) > 0; j-- {
			vs[j-1], vs[j] = vs[j], vs[j-1]
		}
	}
}

// itoa is strconv.Itoa, kept short for message building.
func itoa(n int) string { return strconv.Itoa(n) }

// NewestRelease returns the newest CUDA release in the table that starts
// with prefix: "12.4" gives "12.4.1", "12" gives "12.9.1", "12.4.1" itself.
func NewestRelease(prefix string) (string, bool) {
	want := versionParts(prefix)
	if len(want) == 0 {
		return "", false
	}
	best := ""
	for _, r := range driverRows {
		have := versionParts(r.cuda)
		if len(have) < len(want) {
			continue
		}
		match := true
		for i := range want {
			if have[i] != want[i] {
				match = false
			}
		}
		if match && (best == "" || CompareVersions(r.cuda, best) > 0) {
			best = r.cuda
		}
	}
	return best, best != ""
}
