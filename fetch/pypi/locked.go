package pypi

import (
	"archive/zip"
	"context"
	"fmt"
	"io"
)

// NotTheWheelError is a wheel file name, from a lock, that is not a wheel
// of the project cudaenv derives for the component: a lock that could
// name any project would install anyone's upload as nvcc.
type NotTheWheelError struct {
	Component string
	File      string
	Project   string // the project the component's wheel comes from
	Why       string // "", or what else is wrong (version, platform)
}

func (e *NotTheWheelError) Error() string {
	msg := fmt.Sprintf("%s: file %s is not a wheel of %s", e.Component, e.File, e.Project)
	if e.Why != "" {
		msg += " (" + e.Why + ")"
	}
	return msg
}

// CheckLockedWheel checks a wheel file name a lock lists for a component,
// before anything is fetched: it must be a wheel of the project that the
// component and the CUDA major map to (Project), of the locked version or
// a post-release of it (NVIDIA's re-uploads), for the platform. It returns
// that project.
func CheckLockedWheel(component string, cudaMajor int, version, platform, filename string) (string, error) {
	project, err := Project(component, cudaMajor)
	if err != nil {
		return "", err
	}
	bad := func(why string) error {
		return &NotTheWheelError{Component: component, File: filename, Project: project, Why: why}
	}
	if !wheelFilename().MatchString(filename) {
		return "", bad("")
	}
	w, err := ParseWheelName(filename)
	if err != nil || w.Project != NormalizeProject(project) {
		return "", bad("")
	}
	if !SameVersion(w.Version, version) && !isPostOf(w.Version, version) {
		return "", bad(fmt.Sprintf("its version is %s, the lock's %s", w.Version, version))
	}
	fits := false
	for _, tag := range w.Platforms {
		fits = fits || platformRank(platform, tag) > 0
	}
	if !fits {
		return "", bad("not built for " + platform)
	}
	return project, nil
}

// WheelFor reports whether filename is a wheel of project (any spelling
// of it) built for platform.
func WheelFor(filename, project, platform string) bool {
	if !wheelFilename().MatchString(filename) {
		return false
	}
	w, err := ParseWheelName(filename)
	if err != nil || w.Project != NormalizeProject(project) {
		return false
	}
	for _, tag := range w.Platforms {
		if platformRank(platform, tag) > 0 {
			return true
		}
	}
	return false
}

// ExtractPlannedWheel is ExtractWheelContext for a wheel planned as
// project==version: its *.dist-info/METADATA must exist once and name that
// project (PEP 503 normalized) and version (PEP 440), or nothing is
// extracted. The file name and the index only say what a wheel claims to
// be; its metadata is what pip would install it as.
func ExtractPlannedWheel(ctx context.Context, r io.ReaderAt, size int64, dest, project, version string) error {
	wp, err := openPlannedWheel(ctx, r, size, project, version)
	if err != nil {
		return err
	}
	return extractPlanned(ctx, wp, dest)
}

// checkPlannedMetadata refuses a wheel whose METADATA does not say it is
// project==version.
func checkPlannedMetadata(zr *zip.Reader, project, version string) error {
	name, ver, err := wheelMetadata(zr)
	if err != nil {
		return fmt.Errorf("wheel of %s %s: %w", project, version, err)
	}
	if NormalizeProject(name) != NormalizeProject(project) || !SameVersion(ver, version) {
		return fmt.Errorf("wheel of %s %s: its METADATA says it is %s %s; refusing it", project, version, quoteMeta(name), quoteMeta(ver))
	}
	return nil
}

// wheelMetadata reads Name and Version from the one *.dist-info/METADATA
// at the top of a wheel (the same reading as the index's metadata files).
func wheelMetadata(zr *zip.Reader) (name, version string, err error) {
	data, err := metadataEntry(zr, "")
	if err != nil {
		return "", "", err
	}
	m, err := ParseMetadata(data)
	if err != nil {
		return "", "", err
	}
	return m.Name, m.Version, nil
}

// quoteMeta shows a METADATA value in an error: quoted, cut short, so a
// hostile wheel cannot write to the terminal.
func quoteMeta(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	return fmt.Sprintf("%q", s)
}
