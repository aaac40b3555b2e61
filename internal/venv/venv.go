// Package venv reads what a Python environment (a venv, a conda prefix,
// any site-packages folder) says about itself, treating every file there
// as hostile: a repository can ship its .venv. Every file is read through
// one bounded reader (ReadFile): opened without following a link and
// without blocking, checked on the descriptor to be a regular file no
// larger than a cap, and read before a deadline. Every name and version
// it returns has been checked to look like what it claims (a PEP 508
// name, a PEP 440 version); paths and the raw requirement lines it
// returns are not escaped, so callers escape them (internal/termsafe)
// before they reach a terminal.
package venv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// Bounds on what is read from an environment. Real files are far smaller:
// torch's METADATA is ~9 KB, its version.py ~300 bytes, the largest
// site-packages folders a few thousand entries.
const (
	MaxMetadataBytes = 1 << 20 // a METADATA file
	MaxSourceBytes   = 64 << 10
	MaxEntries       = 20000 // names listed from one folder
	MaxRequires      = 1000  // Requires-Dist lines kept from one METADATA
	// Timeout is how long one read may take when the caller's context
	// sets no sooner deadline: a file on a hung network mount, or one the
	// kernel makes wait, is given up on rather than waited for.
	Timeout = 5 * time.Second
)

// Errors ReadFile and ReadDir wrap, so callers can say what they passed over.
var (
	ErrLink       = errors.New("is a symbolic link, which cudaenv does not follow in a Python environment")
	ErrNotRegular = errors.New("is not a regular file")
	ErrTooLarge   = errors.New("is larger than any real one")
	ErrTimeout    = errors.New("did not answer in time")
	ErrInvalid    = errors.New("does not hold what it should")
)

// PathError is a read of Path that failed: Err is one of the errors above
// or the system's. Its text is "PATH: reason", the path escaped by the
// caller when printed.
type PathError struct {
	Path string
	Err  error
}

func (e *PathError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *PathError) Unwrap() error { return e.Err }

// ReadFile reads the file at p: refused if p is a symbolic link (its last
// element; the folders above are the caller's to choose), a named pipe, a
// device or anything but a regular file, or larger than max bytes; given up
// with ErrTimeout when ctx ends or Timeout passes first. Only as many bytes
// as the descriptor's size says are read, so a file whose size is made up
// (/proc's) cannot feed it forever.
func ReadFile(ctx context.Context, p string, max int64) ([]byte, error) {
	data, err := withDeadline(ctx, func() ([]byte, error) { return readFile(p, max) })
	if err != nil {
		return nil, &PathError{p, err}
	}
	return data, nil
}

// ReadDir lists up to MaxEntries names of the folder dir, sorted, before
// the deadline ReadFile keeps. dir is the caller's choice: a link to a
// folder is followed.
func ReadDir(ctx context.Context, dir string) ([]string, error) {
	var names []string
	_, err := withDeadline(ctx, func() ([]byte, error) {
		var err error
		names, err = readDir(dir, MaxEntries)
		return nil, err
	})
	if err != nil {
		return nil, &PathError{dir, err}
	}
	slices.Sort(names)
	return names, nil
}

// withDeadline runs read, giving up when ctx is done or Timeout passes.
// A read given up on is left to finish on its own: what it holds is
// bounded by the caller's cap, and it cannot block cudaenv's exit.
func withDeadline(ctx context.Context, read func() ([]byte, error)) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	type result struct {
		data []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		data, err := read()
		done <- result{data, err}
	}()
	select {
	case r := <-done:
		return r.data, r.err
	case <-ctx.Done():
		return nil, ErrTimeout
	}
}

// Env is a Python environment found at a prefix.
type Env struct {
	Prefix string
	// Kind is "venv" (a pyvenv.cfg at the top), "conda" (a conda-meta
	// folder) or "" (neither, but it has site-packages).
	Kind string
	// Sites are its site-packages folders, one per Python it has.
	Sites []string
	// Python is the major.minor of the Python its site-packages is for
	// ("3.12", "3.13t"), from the folder's name; "" when that is not one
	// (Windows' Lib\site-packages), or when it has several.
	Python string
}

// Open finds the Python environment whose top folder is prefix: a venv, a
// conda prefix, or any folder with lib/python3.X/site-packages. It reads
// folder names only.
func Open(ctx context.Context, prefix string) (Env, error) {
	fi, err := os.Stat(prefix)
	if err != nil {
		return Env{}, err
	}
	if !fi.IsDir() {
		return Env{}, &PathError{prefix, errors.New("is not a folder")}
	}
	e := Env{Prefix: prefix}
	if isFile(filepath.Join(prefix, "pyvenv.cfg")) {
		e.Kind = "venv"
	} else if fi, err := os.Lstat(filepath.Join(prefix, "conda-meta")); err == nil && fi.IsDir() {
		e.Kind = "conda"
	}
	e.Sites, e.Python = sitePackages(ctx, prefix)
	if len(e.Sites) == 0 {
		return e, &PathError{prefix, errors.New("has no lib/python3.X/site-packages: not a virtual environment or conda prefix")}
	}
	return e, nil
}

// SitePackages lists the site-packages folders of the environment at
// prefix: prefix/lib/python3.X/site-packages (venvs and conda; lib64 when
// it is another folder) and prefix/Lib/site-packages (Windows).
func SitePackages(ctx context.Context, prefix string) []string {
	sites, _ := sitePackages(ctx, prefix)
	return sites
}

var rePythonDir = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^python(3\.[0-9]{1,3}t?)$`) })

func sitePackages(ctx context.Context, prefix string) (sites []string, python string) {
	if prefix == "" || !filepath.IsAbs(prefix) {
		return nil, ""
	}
	var seen []os.FileInfo // a venv's lib64 is a link to its lib
	var pythons []string
	add := func(sp, py string) {
		fi, err := os.Stat(sp)
		if err != nil || !fi.IsDir() || slices.ContainsFunc(seen, func(o os.FileInfo) bool { return os.SameFile(o, fi) }) {
			return
		}
		seen = append(seen, fi)
		sites = append(sites, sp)
		if !slices.Contains(pythons, py) {
			pythons = append(pythons, py)
		}
	}
	for _, lib := range []string{"lib", "lib64"} {
		// lib64 is a link to lib in many venvs: the folder reached
		// through it is the same one, seen once.
		names, _ := ReadDir(ctx, filepath.Join(prefix, lib))
		for _, name := range names {
			if m := rePythonDir().FindStringSubmatch(name); m != nil {
				add(filepath.Join(prefix, lib, name, "site-packages"), m[1])
			}
		}
	}
	add(filepath.Join(prefix, "Lib", "site-packages"), "")
	if len(pythons) == 1 {
		python = pythons[0]
	}
	return sites, python
}

func isFile(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.Mode().IsRegular()
}

// Dist is one installed distribution: a *.dist-info folder whose METADATA
// names it.
type Dist struct {
	Name    string // as METADATA spells it: "nvidia-cudnn-cu12"; a valid PEP 508 name
	Version string // a valid PEP 440 version: "9.1.0.70", "2.5.1+cu124"
	Dir     string // the .dist-info folder
	// Requires are the Requires-Dist values, markers included, kept only
	// when printable ASCII: check their grammar before using them.
	Requires []string
}

// Dists lists the distributions installed in the site-packages folder
// site whose names keep accepts (nil: all), sorted by folder. keep sees
// the normalized name (Normalize) the folder's name starts with, so a
// METADATA is read only for the ones wanted. A dist-info whose METADATA
// is unreadable, or whose Name or Version is not valid, or whose Name is
// not the one its folder names, is left out.
func Dists(ctx context.Context, site string, keep func(name string) bool) []Dist {
	names, _ := ReadDir(ctx, site)
	var out []Dist
	for _, entry := range names {
		stem, ok := strings.CutSuffix(entry, ".dist-info")
		if !ok {
			continue
		}
		folderName, _, _ := strings.Cut(stem, "-")
		if keep != nil && !keep(Normalize(folderName)) {
			continue
		}
		d, err := ReadDist(ctx, filepath.Join(site, entry))
		if err != nil || Normalize(d.Name) != Normalize(folderName) {
			continue
		}
		out = append(out, d)
	}
	return out
}

// ReadDist reads the METADATA of the .dist-info folder dir.
func ReadDist(ctx context.Context, dir string) (Dist, error) {
	p := filepath.Join(dir, "METADATA")
	data, err := ReadFile(ctx, p, MaxMetadataBytes)
	if err != nil {
		return Dist{}, err
	}
	names, versions := Field(data, "Name"), Field(data, "Version")
	if len(names) != 1 || !ValidName(names[0]) {
		return Dist{}, &PathError{p, fmt.Errorf("%w: no valid Name", ErrInvalid)}
	}
	if len(versions) != 1 || !ValidVersion(versions[0]) {
		return Dist{}, &PathError{p, fmt.Errorf("%w: no valid Version", ErrInvalid)}
	}
	d := Dist{Name: names[0], Version: versions[0], Dir: dir}
	for _, req := range Field(data, "Requires-Dist") {
		if len(d.Requires) == MaxRequires {
			break
		}
		if printable(req) {
			d.Requires = append(d.Requires, req)
		}
	}
	return d, nil
}

// Field returns the values of a header field of a METADATA file (RFC 822
// style, up to the first blank line), spaces trimmed.
func Field(meta []byte, field string) []string {
	var out []string
	for len(meta) > 0 {
		var line []byte
		line, meta, _ = bytes.Cut(meta, []byte("\n"))
		line = bytes.TrimRight(line, "\r")
		if len(line) == 0 {
			break
		}
		k, v, ok := bytes.Cut(line, []byte(":"))
		if ok && strings.EqualFold(string(k), field) {
			out = append(out, strings.TrimSpace(string(v)))
		}
	}
	return out
}

// Torch is what torch/version.py says of the PyTorch it belongs to.
type Torch struct {
	Version string // __version__, a valid PEP 440 version: "2.5.1+cu124"
	CUDA    string // cuda: "12.4", digits and dots; "" for a CPU-only build
	Path    string // the version.py read
}

// ReadTorch reads site/torch/version.py through ReadFile. The error wraps
// fs.ErrNotExist when there is none.
func ReadTorch(ctx context.Context, site string) (Torch, error) {
	p := filepath.Join(site, "torch", "version.py")
	src, err := ReadFile(ctx, p, MaxSourceBytes)
	if err != nil {
		return Torch{}, err
	}
	v, cuda, err := ParseTorchVersionPy(src)
	if err != nil {
		return Torch{}, &PathError{p, err}
	}
	return Torch{Version: v, CUDA: cuda, Path: p}, nil
}

var (
	reTorchVersion = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?m)^__version__\s*(?::[^=\n]*)?=\s*['"]([^'"]*)['"]`)
	})
	reTorchCUDA = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?m)^cuda\s*(?::[^=\n]*)?=\s*(?:['"]([^'"]*)['"]|None)`)
	})
	reCUDAVersion = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]{1,3}(\.[0-9]{1,4}){0,3}$`) })
)

// ParseTorchVersionPy reads __version__ and cuda from the text of
// torch/version.py, in either form PyTorch has written them:
//
//	__version__ = '2.5.1+cu124'
//	cuda: Optional[str] = '12.4'
//
// cuda is "" for a CPU-only build (cuda = None). A __version__ that is not
// a PEP 440 version, or a cuda that is not digits and dots, is refused
// with ErrInvalid.
func ParseTorchVersionPy(src []byte) (version, cuda string, err error) {
	m := reTorchVersion().FindSubmatch(src)
	if m == nil {
		return "", "", fmt.Errorf("%w: no __version__", ErrInvalid)
	}
	version = string(m[1])
	if !ValidVersion(version) {
		return "", "", fmt.Errorf("%w: __version__ is not a PEP 440 version", ErrInvalid)
	}
	if c := reTorchCUDA().FindSubmatch(src); c != nil {
		cuda = string(c[1])
		if cuda != "" && !reCUDAVersion().MatchString(cuda) {
			return "", "", fmt.Errorf("%w: cuda is not a version", ErrInvalid)
		}
	}
	return version, cuda, nil
}

var (
	// rePEP440 is PEP 440's own pattern (its appendix), anchored.
	rePEP440 = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)^v?(?:[0-9]+!)?[0-9]+(?:\.[0-9]+)*` +
			`(?:[-_.]?(?:alpha|a|beta|b|preview|pre|c|rc)[-_.]?[0-9]*)?` +
			`(?:-[0-9]+|[-_.]?(?:post|rev|r)[-_.]?[0-9]*)?` +
			`(?:[-_.]?dev[-_.]?[0-9]*)?` +
			`(?:\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?$`)
	})
	// rePEP508Name is PEP 508's name, case-insensitive.
	rePEP508Name = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)^(?:[a-z0-9]|[a-z0-9][a-z0-9._-]*[a-z0-9])$`)
	})
)

// ValidVersion reports whether v is a PEP 440 version of at most 100 bytes.
func ValidVersion(v string) bool { return len(v) <= 100 && rePEP440().MatchString(v) }

// ValidName reports whether n is a PEP 508 distribution name of at most
// 100 bytes.
func ValidName(n string) bool { return len(n) <= 100 && rePEP508Name().MatchString(n) }

// Normalize is PEP 503's name normalization with _ for the runs, as
// dist-info folders spell names: "Nvidia-CUDNN.cu12" -> "nvidia_cudnn_cu12".
func Normalize(name string) string {
	var b strings.Builder
	run := false
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c == '-' || c == '_' || c == '.' {
			if !run {
				b.WriteByte('_')
			}
			run = true
			continue
		}
		run = false
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

// printable reports whether s is printable ASCII (no control character),
// at most 1000 bytes.
func printable(s string) bool {
	if len(s) > 1000 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= 0x7f {
			return false
		}
	}
	return true
}
