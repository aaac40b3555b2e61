// Package resolve decides which versions apply to a directory: the
// CUDAENV_VERSION variable, then the nearest .cuda-version (or a .tool-versions
// naming cuda or cudnn) walking up to the root, then the global default.
//
// Version files come from untrusted repositories: they are parsed as data,
// capped in size, and every word must be a version spec, never a path.
// Only regular files on ordinary file systems are opened, without blocking
// and against a deadline, so a named pipe, a device or a kernel file such
// as /proc/kmsg under that name is skipped with a warning instead of
// hanging the prompt.
package resolve

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cudaenv/cudaenv/internal/lockfile"
	"github.com/cudaenv/cudaenv/internal/version"
)

// EnvVar is the variable that outranks every file.
const EnvVar = "CUDAENV_VERSION"

// FileName is the per-project version file.
const FileName = ".cuda-version"

// ToolVersionsName is asdf's and mise's file; its cuda, cudnn and other
// library lines (nccl, cusparselt, …) count.
const ToolVersionsName = ".tool-versions"

// MaxFileSize caps a .cuda-version file and the global default; anything
// larger is refused unread, as an error.
const MaxFileSize = 1024

// MaxToolVersionsSize caps a .tool-versions file, which lists other tools
// too; a larger one is skipped with a warning.
const MaxToolVersionsSize = 64 << 10

// readTimeout bounds opening and reading one version file: a file system
// that hangs (a dead network mount) must not hang the prompt.
var readTimeout = time.Second

// Kind says where a selection came from.
type Kind int

const (
	None Kind = iota
	FromEnv
	FromFile
	FromGlobal
)

// Source is where a selection came from.
type Source struct {
	Kind Kind
	Path string // the file, for FromFile and FromGlobal
}

func (s Source) String() string {
	switch s.Kind {
	case FromEnv:
		return EnvVar
	case FromFile:
		return s.Path
	case FromGlobal:
		return s.Path + " (global default)"
	}
	return "nothing"
}

// Selection is the specs that apply and where they came from.
type Selection struct {
	Specs  []version.Spec
	Source Source
	// Written are the specs as the version file has them, when its lock
	// narrowed Specs to the locked releases; nil otherwise.
	Written []version.Spec
	// Warnings name the version files skipped on the way (not regular
	// files, kernel files, too slow to read, too large a .tool-versions)
	// and why. They are set even when Find returns an error.
	Warnings []string
	// Options are the settings written beside the specs (libraries=off).
	Options Options
}

// AsWritten is what the version file says: Written where a lock narrowed
// Specs, else Specs. Locking and installing from a lock compare these.
func (s Selection) AsWritten() []version.Spec {
	if s.Written != nil {
		return s.Written
	}
	return s.Specs
}

// System reports whether cudaenv should step aside: nothing is selected,
// or the selection says system.
func (s Selection) System() bool {
	if len(s.Specs) == 0 {
		return true
	}
	for _, sp := range s.Specs {
		if sp.Kind == version.System {
			return true
		}
	}
	return false
}

// Spec returns the selection's spec for a tool.
func (s Selection) Spec(t version.Tool) (version.Spec, bool) {
	for _, sp := range s.Specs {
		if sp.Tool == t && sp.Kind != version.System {
			return sp, true
		}
	}
	return version.Spec{}, false
}

// Watch lists everything a selection depended on, so a shell hook can tell
// cheaply, without starting a process, whether it could have changed.
type Watch struct {
	Dir      string
	EnvSet   bool
	EnvValue string
	Files    []FileState
	// AnyDir: the selection does not depend on the directory at all (it
	// came from CUDAENV_VERSION).
	AnyDir bool
	// Within is the folder whose version file decided, or the root when
	// none did (the global default, or nothing): below it, a directory
	// with no version file between itself and Within has the same
	// selection, given the same Files. The prompt check uses it so that
	// a cd inside a project starts no process.
	Within string
}

// FileState is one file the selection looked at.
type FileState struct {
	Path    string
	Exists  bool
	ModTime time.Time
}

// Lookup reads one environment variable.
type Lookup func(string) (string, bool)

// Find resolves the selection for dir. The Watch is valid even when err is
// not nil, so a broken file is reported once and not at every prompt.
func Find(dir string, env Lookup, globalFile string) (Selection, Watch, error) {
	w := Watch{Dir: dir}
	// $PWD as the shell has it (os.Getwd) may end in "..": walking up
	// from it must not pass through the folder it leaves.
	dir = filepath.Clean(dir)
	if v, ok := env(EnvVar); ok {
		w.EnvSet, w.EnvValue = true, v
		if strings.TrimSpace(v) != "" {
			w.AnyDir = true
			specs, opts, err := ParseOptions(EnvVar, []byte(v))
			return Selection{Specs: specs, Source: Source{Kind: FromEnv}, Options: opts}, w, err
		}
	}
	var warnings []string
	var opts Options
	found := func(specs []version.Spec, src Source, err error) (Selection, Watch, error) {
		if err != nil {
			return Selection{Warnings: warnings}, w, err
		}
		return Selection{Specs: specs, Source: src, Warnings: warnings, Options: opts}, w, nil
	}
	for d := dir; ; {
		for _, name := range []string{FileName, ToolVersionsName} {
			path := filepath.Join(d, name)
			limit := int64(MaxFileSize)
			if name == ToolVersionsName {
				limit = MaxToolVersionsSize
			}
			data, st, skip, err := readCapped(path, limit, name == FileName)
			w.Files = append(w.Files, st)
			if skip != "" {
				warnings = append(warnings, skip+"; skipped")
				continue
			}
			if !st.Exists {
				continue
			}
			w.Within = d
			if err != nil {
				return found(nil, Source{}, err)
			}
			var specs []version.Spec
			if name == FileName {
				specs, opts, err = ParseOptions(path, data)
				if err == nil && len(specs) > 0 {
					locked := lockedSpecs(&w, d, specs)
					if !slices.EqualFunc(locked, specs, func(a, b version.Spec) bool { return a.String() == b.String() }) {
						sel, w, _ := found(locked, Source{Kind: FromFile, Path: path}, nil)
						sel.Written = specs
						return sel, w, nil
					}
				}
			} else {
				specs, err = ParseToolVersions(path, data)
			}
			if err != nil || len(specs) > 0 {
				return found(specs, Source{Kind: FromFile, Path: path}, hideLinked(path, err))
			}
		}
		parent := filepath.Dir(d)
		if parent == d {
			w.Within = d
			break
		}
		d = parent
	}
	if globalFile != "" {
		data, st, skip, err := readCapped(globalFile, MaxFileSize, true)
		w.Files = append(w.Files, st)
		if skip != "" {
			warnings = append(warnings, skip+"; skipped")
		} else if st.Exists {
			if err != nil {
				return found(nil, Source{}, err)
			}
			specs, o, err := ParseOptions(globalFile, data)
			opts = o
			if err != nil || len(specs) > 0 {
				return found(specs, Source{Kind: FromGlobal, Path: globalFile}, err)
			}
		}
	}
	return found(nil, Source{}, nil)
}

// ReadFile reads one file in the .cuda-version grammar (a pin, the global
// default) with the care Find takes. A missing file is an error wrapping
// fs.ErrNotExist; one Find would skip is an error saying why.
func ReadFile(path string) ([]version.Spec, error) {
	specs, _, err := ReadFileOptions(path)
	return specs, err
}

// ReadFileOptions is ReadFile with the file's settings.
func ReadFileOptions(path string) ([]version.Spec, Options, error) {
	data, st, skip, err := readCapped(path, MaxFileSize, true)
	switch {
	case skip != "":
		return nil, Options{}, errors.New(skip)
	case !st.Exists:
		return nil, Options{}, fmt.Errorf("%s: %w", path, fs.ErrNotExist)
	case err != nil:
		return nil, Options{}, err
	}
	return ParseOptions(path, data)
}

// readCapped reads a version file of at most limit bytes; a larger one is
// an error when bigIsError, else skipped. A file to skip (it is not a
// regular file, lies on a kernel file system, or takes longer than
// readTimeout) comes back as skip, which says why; Find warns and goes on
// past it. Nothing but a regular file is ever opened (opening a device
// can have effects), and that without blocking, in case it was swapped.
func readCapped(path string, limit int64, bigIsError bool) (data []byte, st FileState, skip string, err error) {
	st = FileState{Path: path}
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscallENOTDIR) {
			return nil, st, "", nil
		}
		st.Exists = true
		return nil, st, "", fmt.Errorf("%s: %w", path, err)
	}
	st.Exists, st.ModTime = true, fi.ModTime()
	if !fi.Mode().IsRegular() {
		return nil, st, path + ": not a regular file (" + kindOf(fi.Mode()) + ")", nil
	}
	tooBig := func() (string, error) {
		if bigIsError {
			return "", fmt.Errorf("%s: larger than %d bytes; a version file holds a few version specs like 12.4", path, limit)
		}
		return fmt.Sprintf("%s: larger than %d bytes", path, limit), nil
	}
	if fi.Size() > limit {
		skip, err = tooBig()
		return nil, st, skip, err
	}
	type result struct {
		data []byte
		skip string
		err  error
	}
	done := make(chan result, 1) // buffered: a late reader must not block
	go func() {
		data, skip, err := readRegular(path, fi, limit)
		done <- result{data, skip, err}
	}()
	timer := time.NewTimer(readTimeout)
	defer timer.Stop()
	select {
	case r := <-done:
		if r.skip != "" || r.err != nil {
			return nil, st, r.skip, r.err
		}
		if int64(len(r.data)) > limit {
			skip, err = tooBig()
			return nil, st, skip, err
		}
		return r.data, st, "", nil
	case <-timer.C:
		return nil, st, fmt.Sprintf("%s: not read within %s", path, readTimeout), nil
	}
}

// readRegular opens path without blocking and reads up to limit+1 bytes,
// if it is still the regular file fi and not on a kernel file system.
var readRegular = func(path string, fi fs.FileInfo, limit int64) ([]byte, string, error) {
	f, err := openNoBlock(path)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	defer f.Close()
	now, err := f.Stat()
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	if !now.Mode().IsRegular() || !os.SameFile(fi, now) {
		return nil, path + ": changed while it was read", nil
	}
	if fsName, ok := kernelFS(f); ok {
		return nil, path + ": on the kernel's " + fsName + " file system, not a version file", nil
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	return data, "", nil
}

func kindOf(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}

// SyntaxError is a word in a version file that is not a version spec.
type SyntaxError struct {
	File string
	Line int // 0 when the text has no lines (CUDAENV_VERSION)
	Text string
	Why  string
	// Linked: File is a symbolic link, so its text may be any file's (a
	// cloned repository can point .cuda-version at ~/.aws/credentials):
	// the error then does not show the text.
	Linked bool
}

func (e *SyntaxError) Error() string {
	where := e.File
	if e.Line > 0 {
		where += ":" + strconv.Itoa(e.Line)
	}
	why := e.Why
	switch {
	case e.Linked:
		why = "not a version file (it is a link to another file, whose text is not shown); a version file holds specs like 12.4"
	case why == "":
		why = "invalid version " + strconv.Quote(e.Text)
	}
	return where + ": " + why
}

// Parse reads the .cuda-version grammar and returns its specs; the
// settings beside them (see ParseOptions) are checked, then dropped.
func Parse(name string, data []byte) ([]version.Spec, error) {
	specs, _, err := ParseOptions(name, data)
	return specs, err
}

// ParseOptions reads the .cuda-version grammar: specs separated by
// whitespace or newlines, # comments, CRLF line ends and a UTF-8 byte
// order mark accepted. At most one spec per tool, and at most one of each
// setting (libraries=on|off), which needs a CUDA spec beside it.
func ParseOptions(name string, data []byte) ([]version.Spec, Options, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	var specs []version.Spec
	var opts Options
	var optWord string
	optLine := 0
	for i, line := range strings.Split(string(data), "\n") {
		if c := strings.IndexByte(line, '#'); c >= 0 {
			line = line[:c]
		}
		for _, word := range strings.Fields(line) {
			if IsOption(word) {
				if optWord != "" {
					return nil, Options{}, &SyntaxError{File: name, Line: lineOf(name, i+1), Text: word,
						Why: fmt.Sprintf("%q and %q both set libraries; keep one", optWord, word)}
				}
				o, err := parseOption(word)
				if err != nil {
					return nil, Options{}, &SyntaxError{File: name, Line: lineOf(name, i+1), Text: word, Why: err.Error()}
				}
				opts, optWord, optLine = o, word, i+1
				continue
			}
			sp, err := parseWord(name, i+1, word)
			if err != nil {
				return nil, Options{}, err
			}
			specs, err = add(specs, sp, name, i+1, word)
			if err != nil {
				return nil, Options{}, err
			}
		}
	}
	if optWord != "" {
		if err := optionNeedsCUDA(specs); err != "" {
			return nil, Options{}, &SyntaxError{File: name, Line: lineOf(name, optLine), Text: optWord, Why: optWord + " " + err}
		}
	}
	return specs, opts, nil
}

// ParseToolVersions reads the cuda and cudnn lines of a .tool-versions file
// (`cuda 12.4`, `cudnn 9.5`); other tools' lines are ignored. As in asdf, the
// first version on a line is the one used.
func ParseToolVersions(name string, data []byte) ([]version.Spec, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	var specs []version.Spec
	for i, line := range strings.Split(string(data), "\n") {
		if c := strings.IndexByte(line, '#'); c >= 0 {
			line = line[:c]
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		tool, ok := version.ToolNamed(f[0])
		if !ok {
			continue
		}
		word := f[1]
		if tool.Library() {
			word = string(tool) + "@" + f[1]
		}
		sp, err := parseWord(name, i+1, word)
		if err != nil {
			return nil, &SyntaxError{File: name, Line: i + 1, Text: f[1]}
		}
		if specs, err = add(specs, sp, name, i+1, f[1]); err != nil {
			return nil, err
		}
	}
	return specs, nil
}

func parseWord(name string, line int, word string) (version.Spec, error) {
	if !utf8.ValidString(word) {
		return version.Spec{}, &SyntaxError{File: name, Line: lineOf(name, line), Text: word}
	}
	sp, err := version.ParseSpec(word)
	if err != nil {
		return version.Spec{}, &SyntaxError{File: name, Line: lineOf(name, line), Text: word}
	}
	return sp, nil
}

// lineOf drops line numbers for CUDAENV_VERSION, which is not a file.
func lineOf(name string, line int) int {
	if name == EnvVar {
		return 0
	}
	return line
}

func add(specs []version.Spec, sp version.Spec, name string, line int, word string) ([]version.Spec, error) {
	for _, have := range specs {
		if have.Kind == version.System || sp.Kind == version.System {
			return nil, &SyntaxError{File: name, Line: lineOf(name, line), Text: word,
				Why: "system cannot be combined with other versions"}
		}
		if have.Tool == sp.Tool {
			return nil, &SyntaxError{File: name, Line: lineOf(name, line), Text: word,
				Why: fmt.Sprintf("%q and %q both select %s; keep one", have.String(), word, sp.Tool)}
		}
	}
	return append(specs, sp), nil
}

// hideLinked marks a syntax error in a file reached through a symbolic
// link, so its text is not printed.
func hideLinked(path string, err error) error {
	var se *SyntaxError
	if errors.As(err, &se) {
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			se.Linked = true
		}
	}
	return err
}

// lockedSpecs narrows a .cuda-version's specs to the releases its lock
// (.cuda-version.lock beside it) pins, so the project activates what
// `cudaenv install` installed from the lock, not a newer patch that
// happens to be installed too. A lock that is missing, unreadable or
// written for other specs (stale: install says so) changes nothing. The
// lock is watched, so writing or editing it is seen at the next prompt.
func lockedSpecs(w *Watch, dir string, specs []version.Spec) []version.Spec {
	p := filepath.Join(dir, lockfile.FileName)
	data, st, skip, err := readCapped(p, lockfile.MaxFileSize, false)
	w.Files = append(w.Files, st)
	if !st.Exists || skip != "" || err != nil {
		return specs
	}
	lk, err := lockfile.Decode(p, data)
	if err != nil || !sameSpecs(lk.Specs(), specs) {
		return specs
	}
	out := slices.Clone(specs)
	for i, sp := range out {
		for _, prod := range lk.Products() {
			if prod.Tool() != sp.Tool {
				continue
			}
			if v, err := version.Parse(prod.Release); err == nil && sp.Match(v) {
				out[i] = version.Spec{Tool: sp.Tool, Kind: version.Prefix, Prefix: v}
			}
		}
	}
	return out
}

func sameSpecs(a, b []version.Spec) bool {
	words := func(specs []version.Spec) []string {
		var w []string
		for _, s := range specs {
			w = append(w, s.String())
		}
		slices.Sort(w)
		return w
	}
	return slices.Equal(words(a), words(b))
}
