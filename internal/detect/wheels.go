package detect

import (
	"bufio"
	"bytes"
	"context"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/cudaenv/cudaenv/internal/venv"
)

// WheelLib is one shared library an nvidia-* wheel installed in a Python
// environment: site-packages/nvidia/<name>/lib/<soname>, which a framework
// built against the wheels (PyTorch, JAX) loads through its RUNPATH,
// unless LD_LIBRARY_PATH names a folder with the same soname first.
type WheelLib struct {
	Soname  string // libnvJitLink.so.12
	Path    string // the file, without Host.Root
	Wheel   string // the distribution that installed it: nvidia-nvjitlink-cu12
	Version string // its version: 12.4.127
	// Framework is the installed distribution that requires the wheel
	// (torch); "" when none of the known frameworks does.
	Framework string
}

// Bounds on what is read from site-packages, which any package can write:
// a hostile or broken environment makes doctor skip, never hang or fill
// memory.
const (
	maxSiteEntries   = 20000
	maxNvidiaEntries = 256
	maxLibEntries    = 1024
	maxRecordBytes   = 4 << 20
	maxMetadataBytes = 1 << 20
)

var (
	reSoname      = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^lib[A-Za-z0-9_+-]{1,64}\.so\.[0-9]{1,4}$`) })
	reDistName    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`) })
	reWheelVer    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]{1,9}(\.[0-9]{1,9}){0,5}$`) })
	frameworkDist = []string{"torch", "jax_cuda12_plugin", "jax_cuda13_plugin", "jax_cuda12_pjrt", "jax_cuda13_pjrt", "tensorflow", "paddlepaddle_gpu", "cupy_cuda12x", "cupy_cuda13x"}
)

// SitePackages lists the site-packages folders of the Python environment
// at prefix (a venv's or conda's): prefix/lib/python3.*/site-packages.
// It starts no interpreter.
func (h Host) SitePackages(prefix string) []string {
	if prefix == "" || !filepath.IsAbs(prefix) {
		return nil
	}
	var out []string
	for _, sp := range venv.SitePackages(context.Background(), h.file(prefix)) {
		out = append(out, filepath.Join(prefix, strings.TrimPrefix(sp, h.file(prefix))))
	}
	return out
}

// WheelLibs lists the libraries the nvidia-* wheels in the site-packages
// folders installed, each with the wheel it came from (its dist-info's
// RECORD says which; METADATA gives the name and version) and the
// framework that requires that wheel. It reads directory names and a few
// bounded files; names and versions that are not plain are left out.
func (h Host) WheelLibs(sites []string) []WheelLib {
	return h.WheelLibsWhere(sites, nil)
}

// WheelLibsWhere is WheelLibs for the sonames keep accepts (nil: all);
// when it accepts none, no dist-info is read (the prompt hook's cheap
// case: a few folder listings).
func (h Host) WheelLibsWhere(sites []string, keep func(soname string) bool) []WheelLib {
	var out []WheelLib
	for _, site := range sites {
		out = append(out, h.wheelLibs(site, keep)...)
	}
	return out
}

func (h Host) wheelLibs(site string, keep func(string) bool) []WheelLib {
	// site/nvidia/*/lib/<soname>, and cuTENSOR's site/cutensor/lib (its
	// wheels, cutensor-cu12 and -cu13, are the one NVIDIA library outside
	// nvidia/), by path relative to site.
	libs := map[string]string{}
	libDirs := []string{"cutensor/lib"}
	for _, pkg := range h.readNames(filepath.Join(site, "nvidia"), maxNvidiaEntries) {
		if reDistName().MatchString(pkg) {
			libDirs = append(libDirs, path.Join("nvidia", pkg, "lib"))
		}
	}
	for _, dir := range libDirs {
		for _, name := range h.readNames(filepath.Join(site, filepath.FromSlash(dir)), maxLibEntries) {
			if reSoname().MatchString(name) && (keep == nil || keep(name)) {
				libs[path.Join(dir, name)] = name
			}
		}
	}
	if len(libs) == 0 {
		return nil
	}
	type dist struct{ name, version string }
	owner := map[string]dist{}
	required := map[string]string{} // normalized wheel name -> framework
	for _, entry := range h.readNames(site, maxSiteEntries) {
		stem, ok := strings.CutSuffix(entry, ".dist-info")
		if !ok {
			continue
		}
		lower := strings.ToLower(stem)
		dir := filepath.Join(site, entry)
		if fw := frameworkOf(lower); fw != "" {
			meta := h.readCappedFile(filepath.Join(dir, "METADATA"), maxMetadataBytes)
			for _, req := range metadataField(meta, "Requires-Dist") {
				if n := requirementName(req); n != "" {
					if _, seen := required[n]; !seen {
						required[n] = fw
					}
				}
			}
			continue
		}
		if !strings.HasPrefix(lower, "nvidia_") && !strings.HasPrefix(lower, "nvidia-") && !strings.HasPrefix(lower, "cutensor_cu") && !strings.HasPrefix(lower, "cutensor-cu") {
			continue
		}
		meta := h.readCappedFile(filepath.Join(dir, "METADATA"), maxMetadataBytes)
		names, versions := metadataField(meta, "Name"), metadataField(meta, "Version")
		if len(names) != 1 || len(versions) != 1 || !reDistName().MatchString(names[0]) || !reWheelVer().MatchString(versions[0]) {
			continue
		}
		d := dist{names[0], versions[0]}
		record := h.readCappedFile(filepath.Join(dir, "RECORD"), maxRecordBytes)
		sc := bufio.NewScanner(bytes.NewReader(record))
		sc.Buffer(make([]byte, 0, 4096), 64<<10)
		for sc.Scan() {
			file, _, _ := strings.Cut(sc.Text(), ",")
			if _, ok := libs[file]; ok {
				owner[file] = d
			}
		}
	}
	var out []WheelLib
	for _, rel := range slices.Sorted(maps.Keys(libs)) {
		d, ok := owner[rel]
		if !ok {
			continue // no wheel's RECORD lists it: not a wheel's file
		}
		out = append(out, WheelLib{
			Soname: libs[rel], Path: filepath.Join(site, filepath.FromSlash(rel)),
			Wheel: d.name, Version: d.version, Framework: required[normalizeDist(d.name)],
		})
	}
	return out
}

// frameworkOf is the framework a dist-info folder stem (torch-2.5.1)
// belongs to, or "".
func frameworkOf(stem string) string {
	name, _, _ := strings.Cut(stem, "-")
	name = normalizeDist(name)
	for _, fw := range frameworkDist {
		if name == normalizeDist(fw) {
			return name
		}
	}
	return ""
}

// normalizeDist is PEP 503's name normalization, with _ for the runs.
func normalizeDist(name string) string { return venv.Normalize(name) }

// requirementName is the distribution a Requires-Dist value names:
// "nvidia-nvjitlink-cu12==12.4.127; platform_system == \"Linux\"".
func requirementName(req string) string {
	end := strings.IndexFunc(req, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.')
	})
	if end >= 0 {
		req = req[:end]
	}
	if !reDistName().MatchString(req) {
		return ""
	}
	return normalizeDist(req)
}

// metadataField returns the values of a header field of a METADATA file.
func metadataField(meta []byte, field string) []string { return venv.Field(meta, field) }

// readNames lists up to max names in a folder, sorted; nothing when it is
// not one, or when it does not answer in time.
func (h Host) readNames(dir string, max int) []string {
	names, _ := venv.ReadDir(context.Background(), h.file(dir))
	if len(names) > max {
		names = names[:max]
	}
	return names
}

// readCappedFile reads a file of a Python environment through venv's
// bounded reader: a link, a named pipe, a device or a file over max bytes
// gives nil.
func (h Host) readCappedFile(p string, max int64) []byte {
	data, _ := venv.ReadFile(context.Background(), h.file(p), max)
	return data
}

// LibVersion is the full version of the library dir/soname, read from the
// file names: libnvJitLink.so.12 -> libnvJitLink.so.12.1.105, as NVIDIA's
// archives link them (a few links followed, within dir), else a file
// soname.X.Y beside it. ok is false when the names do not say; the file
// is then not necessarily absent (Exists says).
func (h Host) LibVersion(dir, soname string) (v string, ok bool) {
	name := soname
	for range 4 {
		target, err := os.Readlink(h.file(filepath.Join(dir, name)))
		if err != nil || strings.ContainsRune(target, '/') {
			break
		}
		name = target
	}
	// libX.so.12.1.105 is version 12.1.105 of libX.so.12.
	full := func(name string) (string, bool) {
		i := strings.LastIndex(soname, ".so.")
		if i < 0 || !strings.HasPrefix(name, soname+".") {
			return "", false
		}
		v := name[i+len(".so."):]
		return v, reWheelVer().MatchString(v)
	}
	if v, ok := full(name); ok {
		return v, true
	}
	var found []string
	for _, n := range h.readNames(dir, maxLibEntries) {
		if v, ok := full(n); ok {
			found = append(found, v)
		}
	}
	if len(found) == 1 {
		return found[0], true
	}
	return "", false
}

// Exists reports whether a file (or a link to one) is at p.
func (h Host) Exists(p string) bool {
	_, err := os.Stat(h.file(p))
	return err == nil
}

// PythonSites is the site-packages (and dist-packages) folders on the
// sys.path of the python3 (else python) on PATH, asked as Torch asks it:
// the one script that prints sys.path, nothing imported.
func (h Host) PythonSites(ctx context.Context) []string {
	py := h.LookPath("python3")
	if py == "" {
		py = h.LookPath("python")
	}
	if py == "" {
		return nil
	}
	out, err := h.run(ctx, py, "-c", sysPathScript)
	if err != nil {
		return nil
	}
	var sites []string
	for _, dir := range strings.Split(strings.ReplaceAll(string(out), "\r\n", "\n"), "\n") {
		dir = strings.TrimSpace(dir)
		base := filepath.Base(dir)
		if filepath.IsAbs(dir) && (base == "site-packages" || base == "dist-packages") && h.isDir(dir) && !slices.Contains(sites, dir) {
			sites = append(sites, dir)
		}
	}
	return sites
}
