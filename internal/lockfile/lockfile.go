// Package lockfile reads and writes .cuda-version.lock: for each product a
// .cuda-version selects (CUDA, cuDNN), the exact release, where it comes
// from (nvidia or pypi), and for every platform the archive or wheel of
// each component by file name, size and sha256.
//
// The format is a small, strict subset of TOML: one table per product, one
// table per platform, one component per line, keys in a fixed order, no
// timestamps, so the same lock always encodes to the same bytes and a
// change is a readable diff:
//
//	lock-version = 1
//	profile = "minimal"
//
//	[cuda]
//	spec = "12.4"
//	release = "12.4.1"
//	source = "nvidia"
//
//	[cuda.linux-x86_64]
//	cuda_cccl = { version = "12.4.127", file = "cuda_cccl-linux-x86_64-12.4.127-archive.tar.xz", size = 1048576, sha256 = "…" }
//
// A lock comes from whatever repository was cloned, so it is data only,
// decoded strictly: a size cap, versions and specs that parse, component
// ids and platform keys of a fixed shape, file names without path
// separators, sha256 as 64 hex digits, sizes in range, no unknown keys.
// It never names a path or a URL: where a file is fetched from is the
// configured mirror's or index's business, matched by sha256. Nor does it
// decide what is trusted: install takes a wheel's project from the
// component and CUDA major, never from the file name, and believes a
// sha256 only as a manifest or index page lists it for that component.
package lockfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/cudaenv/cudaenv/internal/version"
)

// FileName is the lock of the .cuda-version in the same directory.
const FileName = ".cuda-version.lock"

// Version is the format version written as lock-version.
const Version = 1

// Limits on what a lock may hold; anything beyond is refused.
const (
	MaxFileSize    = 512 << 10 // the lock itself
	MaxLine        = 1024      // one line
	MaxPlatforms   = 16
	MaxComponents  = 256       // per platform
	MaxArchiveSize = 128 << 30 // one archive or wheel
)

// Sources are where a product can come from.
var Sources = []string{"nvidia", "pypi"}

// Lock is a decoded lock file.
type Lock struct {
	// Profile is minimal, default or full; empty when Components is set.
	Profile string
	// Components, when set, is the exact component list asked for instead
	// of a profile (sorted).
	Components []string
	CUDA       *Product // nil when .cuda-version selects no CUDA
	Cudnn      *Product // nil when it selects no cuDNN
	// Libs are the other libraries built per CUDA major (NCCL, cuSPARSELt,
	// …), locked the way cuDNN is; nil or absent when none is selected.
	Libs map[version.Tool]*Product
}

// Product is one locked product.
type Product struct {
	Spec    version.Spec // as in .cuda-version: 12.4, cudnn@9.5
	Release string       // the release it resolved to: 12.4.1, 9.5.1
	Source  string       // nvidia or pypi
	// CUDAMajor is the CUDA major a library build (cuDNN, NCCL, …) is
	// for; 0 for CUDA.
	CUDAMajor int
	// Platforms maps a platform key (linux-x86_64) to its files, sorted by
	// component.
	Platforms map[string][]File
}

// File is one archive (or wheel) of a component for a platform.
type File struct {
	Component string // cuda_nvcc
	Version   string // the component's version: 12.4.127
	Name      string // the file name, no directories
	Size      int64
	SHA256    string // lower-case hex
}

// PathFor is the lock of a .cuda-version file: beside it.
func PathFor(versionFile string) string {
	return filepath.Join(filepath.Dir(versionFile), FileName)
}

// Products are the locked products, CUDA first, then the libraries in
// version.Libraries order.
func (l *Lock) Products() []*Product {
	var out []*Product
	for _, p := range []*Product{l.CUDA, l.Cudnn} {
		if p != nil {
			out = append(out, p)
		}
	}
	for _, t := range version.Libraries {
		if p := l.Libs[t]; p != nil && t != version.Cudnn {
			out = append(out, p)
		}
	}
	return out
}

// Lib is the locked product of a library (cuDNN included), or nil.
func (l *Lock) Lib(t version.Tool) *Product {
	if t == version.Cudnn {
		return l.Cudnn
	}
	return l.Libs[t]
}

// SetLib sets the locked product of a library (cuDNN included).
func (l *Lock) SetLib(t version.Tool, p *Product) {
	if t == version.Cudnn {
		l.Cudnn = p
		return
	}
	if l.Libs == nil {
		l.Libs = map[version.Tool]*Product{}
	}
	l.Libs[t] = p
}

// Specs are the products' specs, CUDA first: what .cuda-version asked for
// when the lock was written.
func (l *Lock) Specs() []version.Spec {
	var out []version.Spec
	for _, p := range l.Products() {
		out = append(out, p.Spec)
	}
	return out
}

// Platforms are the platform keys the lock has files for, sorted.
func (l *Lock) Platforms() []string {
	set := map[string]bool{}
	for _, p := range l.Products() {
		for k := range p.Platforms {
			set[k] = true
		}
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// HasPlatform reports whether every product has files for platform.
func (l *Lock) HasPlatform(platform string) bool {
	ps := l.Products()
	for _, p := range ps {
		if len(p.Platforms[platform]) == 0 {
			return false
		}
	}
	return len(ps) > 0
}

// Tool is the product's tool: cuda or cudnn.
func (p *Product) Tool() version.Tool { return p.Spec.Tool }

var (
	componentRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9_]{0,63}$`) })
	platformRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(linux|windows)-[a-z0-9_]{1,32}$`) })
	fileRE      = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]{0,199}$`) })
	sha256RE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{64}$`) })
	compVerRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]{1,9}(\.[0-9]{1,9}){0,5}$`) })
	profileRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z]{1,16}$`) })
)

// CheckFileName reports whether name is a plain file name a lock may hold:
// no directories, no "..", nothing a shell or a URL would read specially.
func CheckFileName(name string) error {
	if !fileRE().MatchString(name) || strings.Contains(name, "..") {
		return fmt.Errorf("file name %q is not a plain archive name (letters, digits, '.', '_', '+', '-'; no '/', '\\' or '..')", name)
	}
	return nil
}

// Validate checks everything Decode checks, for a lock built in memory.
func (l *Lock) Validate() error {
	if l.Profile != "" && len(l.Components) > 0 {
		return errors.New("both a profile and components; a lock has one of them")
	}
	if l.Profile == "" && len(l.Components) == 0 {
		return errors.New("neither a profile nor components")
	}
	if l.Profile != "" && !profileRE().MatchString(l.Profile) {
		return fmt.Errorf("profile %q is not a profile name", l.Profile)
	}
	if len(l.Components) > MaxComponents {
		return fmt.Errorf("more than %d components", MaxComponents)
	}
	seen := map[string]bool{}
	for _, c := range l.Components {
		if !componentRE().MatchString(c) {
			return fmt.Errorf("component %q is not a component id", c)
		}
		if seen[c] {
			return fmt.Errorf("component %s is listed twice", c)
		}
		seen[c] = true
	}
	for t, p := range l.Libs {
		if p == nil {
			continue
		}
		if !t.Library() || t == version.Cudnn {
			return fmt.Errorf("[%s] is not a library table", t)
		}
		if p.Spec.Tool != t {
			return fmt.Errorf("[%s] has a %s spec", t, p.Spec.Tool.Title())
		}
	}
	if len(l.Products()) == 0 {
		return errors.New("no [cuda] or [cudnn] table; run cudaenv lock to write the lock again")
	}
	var plats []string
	var first version.Tool
	for _, p := range l.Products() {
		if err := p.validate(); err != nil {
			return fmt.Errorf("[%s]: %w", p.Spec.Tool, err)
		}
		have := slices.Sorted(maps.Keys(p.Platforms))
		if plats == nil {
			plats, first = have, p.Spec.Tool
		} else if !slices.Equal(plats, have) {
			return fmt.Errorf("[%s] has platforms %s, [%s] has %s; both need the same", first, strings.Join(plats, ", "), p.Spec.Tool, strings.Join(have, ", "))
		}
	}
	if l.CUDA != nil && l.CUDA.Spec.Tool != version.CUDA {
		return errors.New("[cuda] has a cuDNN spec")
	}
	if l.Cudnn != nil && l.Cudnn.Spec.Tool != version.Cudnn {
		return errors.New("[cudnn] has a CUDA spec")
	}
	return nil
}

func (p *Product) validate() error {
	sp := p.Spec
	switch sp.Kind {
	case version.Prefix, version.Latest:
	case version.System:
		return errors.New("spec system cannot be locked")
	default:
		return errors.New("no spec")
	}
	rel, err := version.Parse(p.Release)
	if err != nil {
		return fmt.Errorf("release %q is not a version", p.Release)
	}
	if rel.String() != p.Release {
		return fmt.Errorf("release %q is not written plainly (%s)", p.Release, rel)
	}
	if !slices.Contains(Sources, p.Source) {
		return fmt.Errorf("source %q is not one of %s", p.Source, strings.Join(Sources, ", "))
	}
	switch {
	case sp.Tool.Library() && (p.CUDAMajor < 1 || p.CUDAMajor > 999):
		return fmt.Errorf("cuda-major %d is not a CUDA major", p.CUDAMajor)
	case sp.Tool == version.CUDA && p.CUDAMajor != 0:
		return errors.New("cuda-major belongs to [cudnn]")
	}
	if len(p.Platforms) == 0 {
		return errors.New("no platform tables")
	}
	if len(p.Platforms) > MaxPlatforms {
		return fmt.Errorf("more than %d platforms", MaxPlatforms)
	}
	matched := sp.Match(rel)
	for plat, files := range p.Platforms {
		if !platformRE().MatchString(plat) {
			return fmt.Errorf("platform %q is not a platform key like linux-x86_64", plat)
		}
		if len(files) == 0 {
			return fmt.Errorf("%s: no files", plat)
		}
		if len(files) > MaxComponents {
			return fmt.Errorf("%s: more than %d files", plat, MaxComponents)
		}
		cudnn := false
		seen := map[string]bool{}
		for _, f := range files {
			if err := f.validate(); err != nil {
				return fmt.Errorf("%s: %w", plat, err)
			}
			if seen[f.Component] {
				return fmt.Errorf("%s: %s is listed twice", plat, f.Component)
			}
			seen[f.Component] = true
			if f.Component == "cudnn" {
				cudnn = true
			}
			if sp.Tool.Library() && (f.Component == string(sp.Tool) || strings.HasPrefix(f.Component, "lib")) {
				// cudnn@9.5.1.17 names the component's version, not the release.
				if v, err := version.Parse(f.Version); err == nil && sp.Match(v) {
					matched = true
				}
			}
		}
		if sp.Tool == version.Cudnn && !cudnn {
			return fmt.Errorf("%s: no cudnn component", plat)
		}
	}
	if !matched {
		return fmt.Errorf("release %s does not match spec %s", p.Release, sp)
	}
	return nil
}

func (f File) validate() error {
	if !componentRE().MatchString(f.Component) {
		return fmt.Errorf("component %q is not a component id", f.Component)
	}
	if !compVerRE().MatchString(f.Version) {
		return fmt.Errorf("%s: version %q is not a version", f.Component, f.Version)
	}
	if err := CheckFileName(f.Name); err != nil {
		return fmt.Errorf("%s: %w", f.Component, err)
	}
	if !sha256RE().MatchString(f.SHA256) {
		return fmt.Errorf("%s: sha256 %q is not 64 lower-case hex digits", f.Component, f.SHA256)
	}
	if f.Size < 1 || f.Size > MaxArchiveSize {
		return fmt.Errorf("%s: size %d is out of range (1 to %d bytes)", f.Component, f.Size, int64(MaxArchiveSize))
	}
	return nil
}

// header is the comment every lock starts with.
const header = "# .cuda-version.lock: the exact CUDA and cuDNN archives `cudaenv install` installs here.\n" +
	"# Written by `cudaenv lock` (newer releases: `cudaenv lock --upgrade`); commit it, do not edit it.\n"

// Encode writes the lock in its one canonical form. It refuses a lock that
// Validate refuses, so whatever it writes Decode reads back.
func Encode(l *Lock) ([]byte, error) {
	c := l.sorted()
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("encode lock: %w", err)
	}
	var b bytes.Buffer
	b.WriteString(header)
	fmt.Fprintf(&b, "lock-version = %d\n", Version)
	if c.Profile != "" {
		fmt.Fprintf(&b, "profile = %q\n", c.Profile)
	} else {
		b.WriteString("components = [")
		for i, id := range c.Components {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%q", id)
		}
		b.WriteString("]\n")
	}
	for _, p := range c.Products() {
		t := string(p.Spec.Tool)
		fmt.Fprintf(&b, "\n[%s]\nspec = %q\nrelease = %q\n", t, p.Spec.String(), p.Release)
		if p.CUDAMajor != 0 {
			fmt.Fprintf(&b, "cuda-major = %d\n", p.CUDAMajor)
		}
		fmt.Fprintf(&b, "source = %q\n", p.Source)
		for _, plat := range slices.Sorted(maps.Keys(p.Platforms)) {
			fmt.Fprintf(&b, "\n[%s.%s]\n", t, plat)
			for _, f := range p.Platforms[plat] {
				fmt.Fprintf(&b, "%s = { version = %q, file = %q, size = %d, sha256 = %q }\n", f.Component, f.Version, f.Name, f.Size, f.SHA256)
			}
		}
	}
	return b.Bytes(), nil
}

// sorted is a copy with components and files in their canonical order.
func (l *Lock) sorted() *Lock {
	c := *l
	c.Components = slices.Clone(l.Components)
	sort.Strings(c.Components)
	c.Components = slices.Compact(c.Components)
	cp := func(p *Product) *Product {
		if p == nil {
			return nil
		}
		q := *p
		q.Platforms = map[string][]File{}
		for k, fs := range p.Platforms {
			fs = slices.Clone(fs)
			sort.SliceStable(fs, func(i, j int) bool { return fs[i].Component < fs[j].Component })
			q.Platforms[k] = fs
		}
		return &q
	}
	c.CUDA, c.Cudnn = cp(l.CUDA), cp(l.Cudnn)
	c.Libs = nil
	for t, p := range l.Libs {
		if p != nil {
			c.SetLib(t, cp(p))
		}
	}
	return &c
}

// SyntaxError is a line of a lock that cannot be read.
type SyntaxError struct {
	File string
	Line int // 0 for the file as a whole
	Why  string
}

func (e *SyntaxError) Error() string {
	where := e.File
	if e.Line > 0 {
		where += ":" + strconv.Itoa(e.Line)
	}
	return where + ": " + e.Why
}

// Read reads and decodes a lock file of at most MaxFileSize bytes. Only a
// regular file is read: not a FIFO, and not a symbolic link, which a
// cloned repository could point at a secret outside it whose lines an
// error would then quote into a CI log. A missing file is an error
// wrapping fs.ErrNotExist.
func Read(path string) (*Lock, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return nil, &SyntaxError{File: path, Why: "a symbolic link; a lock is a plain file in the repository"}
	}
	if !fi.Mode().IsRegular() {
		return nil, &SyntaxError{File: path, Why: "not a regular file"}
	}
	if fi.Size() > MaxFileSize {
		return nil, &SyntaxError{File: path, Why: fmt.Sprintf("larger than %d bytes; a lock lists a few archives per platform", MaxFileSize)}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return Decode(path, data)
}

// Decode reads a lock; name is used in errors. CRLF line ends are accepted.
func Decode(name string, data []byte) (*Lock, error) {
	if len(data) > MaxFileSize {
		return nil, &SyntaxError{File: name, Why: fmt.Sprintf("larger than %d bytes; a lock lists a few archives per platform", MaxFileSize)}
	}
	d := &decoder{name: name, lock: &Lock{}, tables: map[string]bool{"": true}}
	for i, line := range strings.Split(string(data), "\n") {
		d.line = i + 1
		line = strings.TrimSuffix(line, "\r")
		if len(line) > MaxLine {
			return nil, d.fail("line longer than %d bytes", MaxLine)
		}
		if err := d.readLine(strings.TrimSpace(line)); err != nil {
			return nil, err
		}
	}
	d.line = 0
	if !d.sawVersion {
		return nil, d.fail("no lock-version; this is not a cudaenv lock file")
	}
	if err := d.lock.Validate(); err != nil {
		return nil, d.fail("%v", err)
	}
	return d.lock, nil
}

type decoder struct {
	name       string
	line       int
	lock       *Lock
	product    *Product // the table being read, nil at the top
	platform   string   // "" unless in a platform table
	tables     map[string]bool
	seen       map[string]bool // keys of the current table
	sawVersion bool
}

func (d *decoder) fail(format string, args ...any) error {
	return &SyntaxError{File: d.name, Line: d.line, Why: fmt.Sprintf(format, args...)}
}

var (
	headerRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^\[(cuda|cudnn|nccl|cusparselt|cutensor|cudss|nvshmem)(?:\.([a-z0-9_-]+))?\]$`)
	})
	keyRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([a-z0-9_-]+)\s*=\s*(.*)$`) })
)

func (d *decoder) readLine(line string) error {
	if line == "" || strings.HasPrefix(line, "#") {
		return nil
	}
	if strings.HasPrefix(line, "[") {
		m := headerRE().FindStringSubmatch(line)
		if m == nil {
			return d.fail("unknown table %s; a lock has [cuda], [cudnn] (or another library: [nccl], …) and [cuda.<platform>] tables", quoteShort(line))
		}
		name := m[1]
		if m[2] != "" {
			name += "." + m[2]
		}
		if d.tables[name] {
			return d.fail("table [%s] appears twice", name)
		}
		d.tables[name] = true
		d.seen = map[string]bool{}
		p := d.productFor(m[1])
		if m[2] != "" {
			if !d.tables[m[1]] {
				return d.fail("table [%s] comes before [%s]", name, m[1])
			}
			if !platformRE().MatchString(m[2]) {
				return d.fail("platform %q is not a platform key like linux-x86_64", m[2])
			}
			if p.Platforms == nil {
				p.Platforms = map[string][]File{}
			}
			p.Platforms[m[2]] = []File{}
		}
		d.product, d.platform = p, m[2]
		return nil
	}
	m := keyRE().FindStringSubmatch(line)
	if m == nil {
		return d.fail("expected key = value, got %s", quoteShort(line))
	}
	key := m[1]
	if d.seen == nil {
		d.seen = map[string]bool{}
	}
	if d.seen[key] {
		return d.fail("key %s appears twice", key)
	}
	d.seen[key] = true
	s := &scanner{s: m[2]}
	var err error
	switch {
	case d.product == nil:
		err = d.topKey(key, s)
	case d.platform == "":
		err = d.productKey(key, s)
	default:
		err = d.fileLine(key, s) // its errors name the component
	}
	if err != nil && d.platform == "" {
		err = fmt.Errorf("%s: %w", key, err)
	}
	if err != nil {
		return d.fail("%v", err)
	}
	if !s.done() {
		return d.fail("%s: unexpected text after the value: %s", key, quoteShort(s.rest()))
	}
	return nil
}

func (d *decoder) productFor(tool string) *Product {
	t, ok := version.ToolNamed(tool)
	if !ok || t == version.CUDA {
		if d.lock.CUDA == nil {
			d.lock.CUDA = &Product{Spec: version.Spec{Tool: version.CUDA, Kind: -1}}
		}
		return d.lock.CUDA
	}
	p := d.lock.Lib(t)
	if p == nil {
		p = &Product{Spec: version.Spec{Tool: t, Kind: -1}}
		d.lock.SetLib(t, p)
	}
	return p
}

func (d *decoder) topKey(key string, s *scanner) error {
	switch key {
	case "lock-version":
		n, err := s.int()
		if err != nil {
			return err
		}
		if n != Version {
			return fmt.Errorf("%d is not a version this cudaenv reads (it reads %d); update cudaenv or run cudaenv lock again", n, Version)
		}
		d.sawVersion = true
	case "profile":
		v, err := s.str()
		if err != nil {
			return err
		}
		d.lock.Profile = v
	case "components":
		v, err := s.strList()
		if err != nil {
			return err
		}
		d.lock.Components = v
	default:
		return errors.New("unknown key; a lock's first lines are lock-version and profile or components")
	}
	return nil
}

func (d *decoder) productKey(key string, s *scanner) error {
	p := d.product
	switch key {
	case "spec", "release", "source":
		v, err := s.str()
		if err != nil {
			return err
		}
		switch key {
		case "spec":
			sp, err := version.ParseSpec(v)
			if err != nil || strings.ContainsAny(v, " \t") {
				return fmt.Errorf("%q is not a version spec", v)
			}
			if sp.Tool != p.Spec.Tool {
				return fmt.Errorf("%q does not select %s", v, p.Spec.Tool)
			}
			p.Spec = sp
		case "release":
			p.Release = v
		case "source":
			p.Source = v
		}
	case "cuda-major":
		n, err := s.int()
		if err != nil {
			return err
		}
		p.CUDAMajor = int(n)
	default:
		return errors.New("unknown key; a product table has spec, release, cuda-major and source")
	}
	return nil
}

// fileLine reads `component = { version = "…", file = "…", size = N, sha256 = "…" }`.
func (d *decoder) fileLine(component string, s *scanner) error {
	f := File{Component: component}
	fields, err := s.inlineTable()
	if err != nil {
		return fmt.Errorf("%s: %w", component, err)
	}
	want := []string{"file", "sha256", "size", "version"}
	if got := slices.Sorted(maps.Keys(fields)); !slices.Equal(got, want) {
		return fmt.Errorf("%s: has keys %s; a file line has exactly version, file, size and sha256", component, strings.Join(got, ", "))
	}
	for k, v := range fields {
		switch k {
		case "size":
			if !v.isInt {
				return fmt.Errorf("%s: size is not a number", component)
			}
			f.Size = v.n
		default:
			if v.isInt {
				return fmt.Errorf("%s: %s is not a string", component, k)
			}
			switch k {
			case "version":
				f.Version = v.s
			case "file":
				f.Name = v.s
			case "sha256":
				f.SHA256 = v.s
			}
		}
	}
	if err := f.validate(); err != nil {
		return err
	}
	p := d.product
	p.Platforms[d.platform] = append(p.Platforms[d.platform], f)
	return nil
}

// scanner reads the values of the TOML subset: plain strings (no escapes),
// non-negative integers, lists of strings and flat inline tables.
type scanner struct {
	s string
	i int
}

func (s *scanner) space() {
	for s.i < len(s.s) && (s.s[s.i] == ' ' || s.s[s.i] == '\t') {
		s.i++
	}
}

func (s *scanner) done() bool { s.space(); return s.i == len(s.s) }
func (s *scanner) rest() string {
	return s.s[s.i:]
}

func (s *scanner) peek() byte {
	s.space()
	if s.i < len(s.s) {
		return s.s[s.i]
	}
	return 0
}

func (s *scanner) expect(c byte) error {
	if s.peek() != c {
		return fmt.Errorf("expected %q at %s", c, quoteShort(s.rest()))
	}
	s.i++
	return nil
}

// str reads "text": printable ASCII without quotes or backslashes, which
// is all a lock ever needs and leaves no escape to get wrong.
func (s *scanner) str() (string, error) {
	if err := s.expect('"'); err != nil {
		return "", err
	}
	start := s.i
	for s.i < len(s.s) {
		c := s.s[s.i]
		switch {
		case c == '"':
			v := s.s[start:s.i]
			s.i++
			return v, nil
		case c == '\\':
			return "", errors.New("a backslash in a string; lock strings have no escapes")
		case c < 0x20 || c > 0x7e:
			return "", errors.New("a control or non-ASCII character in a string")
		}
		s.i++
	}
	return "", errors.New("a string without its closing quote")
}

func (s *scanner) int() (int64, error) {
	s.space()
	start := s.i
	for s.i < len(s.s) && s.s[s.i] >= '0' && s.s[s.i] <= '9' {
		s.i++
	}
	digits := s.s[start:s.i]
	if digits == "" {
		return 0, fmt.Errorf("expected a number at %s", quoteShort(s.rest()))
	}
	if len(digits) > 15 || (len(digits) > 1 && digits[0] == '0') {
		return 0, fmt.Errorf("number %s is out of range", digits)
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("number %s is out of range", digits)
	}
	return n, nil
}

func (s *scanner) strList() ([]string, error) {
	if err := s.expect('['); err != nil {
		return nil, err
	}
	var out []string
	for s.peek() != ']' {
		if len(out) > 0 {
			if err := s.expect(','); err != nil {
				return nil, err
			}
		}
		v, err := s.str()
		if err != nil {
			return nil, err
		}
		if len(out) >= MaxComponents {
			return nil, fmt.Errorf("more than %d entries", MaxComponents)
		}
		out = append(out, v)
	}
	s.i++
	return out, nil
}

type value struct {
	s     string
	n     int64
	isInt bool
}

func (s *scanner) inlineTable() (map[string]value, error) {
	if err := s.expect('{'); err != nil {
		return nil, err
	}
	out := map[string]value{}
	for s.peek() != '}' {
		if len(out) > 0 {
			if err := s.expect(','); err != nil {
				return nil, err
			}
		}
		s.space()
		start := s.i
		for s.i < len(s.s) && (s.s[s.i] >= 'a' && s.s[s.i] <= 'z' || s.s[s.i] >= '0' && s.s[s.i] <= '9') {
			s.i++
		}
		k := s.s[start:s.i]
		if k == "" {
			return nil, fmt.Errorf("expected a key at %s", quoteShort(s.rest()))
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("key %s appears twice", k)
		}
		if len(out) >= 8 {
			return nil, errors.New("too many keys")
		}
		if err := s.expect('='); err != nil {
			return nil, err
		}
		var v value
		var err error
		if s.peek() == '"' {
			v.s, err = s.str()
		} else {
			v.n, err = s.int()
			v.isInt = true
		}
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	s.i++
	return out, nil
}

// quoteShort quotes text for an error, cut to a readable length.
func quoteShort(s string) string {
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return strconv.Quote(s)
}
