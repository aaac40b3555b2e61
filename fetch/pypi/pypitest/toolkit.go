package pypitest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/cudaenv/cudaenv/fetch/pypi"
)

// ToolkitWheel is a cuda-toolkit meta-package wheel for rel uploaded as
// version (rel.Version, or 13.0.3.0 for 13.0.3): shaped as NVIDIA's are
// (testdata/cuda_toolkit-13.0.2.METADATA of the pypi package), an "all"
// extra pinning each component wheel by ==VERSION.*, and one extra per
// component. A component whose Platforms name no Windows platform is
// pinned for Linux only, as cuFile is.
func ToolkitWheel(rel pypi.Release, version string) FrameworkWheel {
	w := FrameworkWheel{Project: pypi.ToolkitProject, Version: version, Python: "py2.py3", Platform: "any", ProvidesExtra: []string{"all"}}
	var single []string
	for _, c := range rel.Components {
		project, err := pypi.Project(c.ID, rel.Major())
		if err != nil {
			continue
		}
		systems := "sys_platform == 'linux' or sys_platform == 'win32'"
		if c.Platforms != nil && !strings.Contains(strings.Join(c.Platforms, ","), "windows") {
			systems = "sys_platform == 'linux'"
		}
		w.Requires = append(w.Requires, fmt.Sprintf("%s==%s.*; (%s) and extra == 'all'", project, c.Version, systems))
		extra := strings.TrimPrefix(strings.TrimPrefix(c.ID, "cuda_"), "lib")
		w.ProvidesExtra = append(w.ProvidesExtra, extra)
		single = append(single, fmt.Sprintf("%s==%s.*; (%s) and extra == '%s'", project, c.Version, systems, extra))
	}
	w.Requires = append(w.Requires, single...)
	return w
}

// Sdist adds a source distribution project-version.tar.gz, and no wheel,
// to a project: an upload pip could build but cudaenv does not install.
func Sdist(project, version string) Option {
	return func(c *config) { c.sdists = append(c.sdists, [2]string{project, version}) }
}

// addSdists puts the Sdist files into their projects.
func (ix *Index) addSdists() {
	for _, s := range ix.cfg.sdists {
		project := pypi.NormalizeProject(s[0])
		p := ix.projects[project]
		if p == nil {
			p = &projectFiles{}
			ix.projects[project] = p
		}
		data := []byte("sdist of " + project + " " + s[1] + "\n")
		sum := sha256.Sum256(data)
		name := strings.ReplaceAll(project, "-", "_") + "-" + s[1] + ".tar.gz"
		p.fixed = append(p.fixed, Wheel{Project: project, Version: s[1], Filename: name, SHA256: hex.EncodeToString(sum[:]), Data: data})
	}
}
