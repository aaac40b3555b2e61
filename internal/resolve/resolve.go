// Package resolve decides which versions apply to a directory: the
// CUDAENV_VERSION variable, then the nearest .cuda-version (or a .tool-versions
// naming cuda or cudnn) walking up to the root, then the global default.
//
// Version files come from untrusted repositories: they are parsed as data,
// capped in size, and every word must be a version spec, never a path.
package resolve

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cudaenv/cudaenv/internal/version"
)

// EnvVar is the variable that outranks every file.
const EnvVar = "CUDAENV_VERSION"

// FileName is the per-project version file.
const FileName = ".cuda-version"

// ToolVersionsName is asdf's and mise's file; its cuda and cudnn lines count.
const ToolVersionsName = ".tool-versions"

// MaxFileSize caps a version file; anything larger is refused unread.
const MaxFileSize = 1024

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
	if v, ok := env(EnvVar); ok {
		w.EnvSet, w.EnvValue = true, v
		if strings.TrimSpace(v) != "" {
			specs, err := Parse(EnvVar, []byte(v))
			return Selection{Specs: specs, Source: Source{Kind: FromEnv}}, w, err
		}
	}
	for d := dir; ; {
		for _, name := range []string{FileName, ToolVersionsName} {
			path := filepath.Join(d, name)
			data, st, err := readCapped(path)
			w.Files = append(w.Files, st)
			if !st.Exists {
				continue
			}
			if err != nil {
				return Selection{}, w, err
			}
			var specs []version.Spec
			if name == FileName {
				specs, err = Parse(path, data)
			} else {
				specs, err = ParseToolVersions(path, data)
			}
			if err != nil || len(specs) > 0 {
				return Selection{Specs: specs, Source: Source{Kind: FromFile, Path: path}}, w, err
			}
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	if globalFile != "" {
		data, st, err := readCapped(globalFile)
		w.Files = append(w.Files, st)
		if st.Exists {
			if err != nil {
				return Selection{}, w, err
			}
			specs, err := Parse(globalFile, data)
			if err != nil || len(specs) > 0 {
				return Selection{Specs: specs, Source: Source{Kind: FromGlobal, Path: globalFile}}, w, err
			}
		}
	}
	return Selection{}, w, nil
}

// readCapped reads a version file of at most MaxFileSize bytes. Only regular
// files are read: a FIFO named .cuda-version must not hang the prompt.
func readCapped(path string) ([]byte, FileState, error) {
	st := FileState{Path: path}
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscallENOTDIR) {
			return nil, st, nil
		}
		st.Exists = true
		return nil, st, fmt.Errorf("%s: %w", path, err)
	}
	st.Exists, st.ModTime = true, fi.ModTime()
	if !fi.Mode().IsRegular() {
		return nil, st, fmt.Errorf("%s: not a regular file", path)
	}
	if fi.Size() > MaxFileSize {
		return nil, st, fmt.Errorf("%s: larger than %d bytes; a version file holds a few version specs like 12.4", path, MaxFileSize)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, st, fmt.Errorf("%s: %w", path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, st, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > MaxFileSize {
		return nil, st, fmt.Errorf("%s: larger than %d bytes; a version file holds a few version specs like 12.4", path, MaxFileSize)
	}
	return data, st, nil
}

// SyntaxError is a word in a version file that is not a version spec.
type SyntaxError struct {
	File string
	Line int // 0 when the text has no lines (CUDAENV_VERSION)
	Text string
	Why  string
}

func (e *SyntaxError) Error() string {
	where := e.File
	if e.Line > 0 {
		where += ":" + strconv.Itoa(e.Line)
	}
	why := e.Why
	if why == "" {
		why = "invalid version " + strconv.Quote(e.Text)
	}
	return where + ": " + why
}

// Parse reads the .cuda-version grammar: specs separated by whitespace or
// newlines, # comments, CRLF line ends and a UTF-8 byte order mark accepted.
// At most one spec per tool.
func Parse(name string, data []byte) ([]version.Spec, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	var specs []version.Spec
	for i, line := range strings.Split(string(data), "\n") {
		if c := strings.IndexByte(line, '#'); c >= 0 {
			line = line[:c]
		}
		for _, word := range strings.Fields(line) {
			sp, err := parseWord(name, i+1, word)
			if err != nil {
				return nil, err
			}
			specs, err = add(specs, sp, name, i+1, word)
			if err != nil {
				return nil, err
			}
		}
	}
	return specs, nil
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
		if len(f) < 2 || (f[0] != "cuda" && f[0] != "cudnn") {
			continue
		}
		word := f[1]
		if f[0] == "cudnn" {
			word = "cudnn@" + f[1]
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
