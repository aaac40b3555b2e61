// Package rootfs is how an install writes its tree: every write goes
// through an os.Root opened on the staging folder, so no name in the tree
// (a symlink an archive shipped, a chain of them) can send a write outside
// it; new files are created exclusively, so nothing is written through an
// existing name. Check walks a finished tree and refuses any symlink that
// dangles or leads out of it, and anything that is not a file, folder or
// symlink. Owned names the files cudaenv itself writes into a tree, which
// no archive may ship; MaxUnpacked bounds what an archive may unpack to.
package rootfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"unicode"
)

// ReceiptName is the file the store writes last into every entry.
const ReceiptName = "receipt.json"

// markerPrefix starts every other name cudaenv writes in a tree: temporary
// files of the extraction, markers.
const markerPrefix = ".cudaenv"

// Owned reports whether rel, a clean slash path relative to a tree, is a
// name cudaenv writes itself: receipt.json at the top, and anything named
// .cudaenv* at any depth. Case is ignored, for case-insensitive disks.
func Owned(rel string) bool {
	if strings.EqualFold(rel, ReceiptName) {
		return true
	}
	for _, seg := range strings.Split(rel, "/") {
		if len(seg) >= len(markerPrefix) && strings.EqualFold(seg[:len(markerPrefix)], markerPrefix) {
			return true
		}
	}
	return false
}

// MaxExpansion is how many times its own size an archive may unpack to.
// NVIDIA's most compressible archives (CCCL's headers under xz) unpack to
// about 20 times their size, wheels to less than 10.
const MaxExpansion = 100

// MaxUnpacked is the most an archive of size bytes may unpack to: a
// generous multiple of its size, plus a little for tiny archives whose tar
// padding alone is many times their compressed size.
func MaxUnpacked(size int64) int64 {
	const floor = 1 << 20
	if size > (1<<62)/MaxExpansion {
		return 1 << 62
	}
	return size*MaxExpansion + floor
}

// CheckLinkTarget refuses a symlink target that is empty, absolute, holds
// a backslash or NUL, or, read as a path from rel's folder, leaves the
// tree. It is the check made when a link is created; Check resolves links
// for real once the tree is complete.
func CheckLinkTarget(rel, target string) error {
	switch {
	case target == "":
		return fmt.Errorf("symlink %s has an empty target", Show(rel))
	case strings.ContainsAny(target, "\\\x00"):
		return fmt.Errorf("symlink %s → %q: target has a backslash or NUL", Show(rel), target)
	case strings.HasPrefix(target, "/") || (len(target) >= 2 && target[1] == ':'):
		return fmt.Errorf("symlink %s → %s: target must be a relative path", Show(rel), Show(target))
	}
	if r := path.Join(path.Dir(rel), target); r == ".." || strings.HasPrefix(r, "../") {
		return fmt.Errorf("symlink %s → %s: points outside the tree", Show(rel), Show(target))
	}
	return nil
}

// Tree writes into one folder through an os.Root.
type Tree struct {
	root     *os.Root
	dirs     sync.Map    // rel → struct{}: known to be a real folder
	fds      dirFDs      // open folders, for CreateFile
	readOnly bool        // OpenRead's: folders are never made
	noClone  atomic.Bool // CloneFile failed once: the file system cannot
}

// Open opens the folder dir (which must exist) for writing.
func Open(dir string) (*Tree, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &Tree{root: r}, nil
}

// OpenRead opens the folder dir for reading files with OpenFile: through
// the same descriptors of its folders as CreateFile, so reading many
// files costs one open each, and never through a symlink.
func OpenRead(dir string) (*Tree, error) {
	t, err := Open(dir)
	if err != nil {
		return nil, err
	}
	t.readOnly = true
	return t, nil
}

// Root is the os.Root every write goes through.
func (t *Tree) Root() *os.Root { return t.root }

// Close releases the tree's folder.
func (t *Tree) Close() error {
	t.fds.close()
	return t.root.Close()
}

// ErrThroughLink is what MkdirAll's *ThroughLinkError is.
var ErrThroughLink = errors.New("refusing to write through a symlink")

// ThroughLinkError says that a path MkdirAll needed as a folder is a
// symlink.
type ThroughLinkError struct{ Rel string }

func (e *ThroughLinkError) Error() string { return ErrThroughLink.Error() + " " + e.Rel }
func (e *ThroughLinkError) Unwrap() error { return ErrThroughLink }

// NotDirError says that a path MkdirAll needed as a folder is something else.
type NotDirError struct{ Rel string }

func (e *NotDirError) Error() string { return e.Rel + " is not a folder" }

// MkdirAll makes rel (a clean slash path) and its parents real folders
// (0755), refusing to pass through a symlink even one that stays inside.
// Folders it has made or checked once are remembered.
func (t *Tree) MkdirAll(rel string) error {
	if rel == "" || rel == "." {
		return nil
	}
	if _, ok := t.dirs.Load(rel); ok {
		return nil
	}
	if parent := path.Dir(rel); parent != "." {
		if err := t.MkdirAll(parent); err != nil {
			return err
		}
	}
	st, err := t.root.Lstat(rel)
	if errors.Is(err, fs.ErrNotExist) {
		if err := t.root.Mkdir(rel, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		st, err = t.root.Lstat(rel)
	}
	if err != nil {
		return err
	}
	switch {
	case st.Mode()&fs.ModeSymlink != 0:
		return &ThroughLinkError{rel}
	case !st.IsDir():
		return &NotDirError{rel}
	}
	t.dirs.Store(rel, struct{}{})
	return nil
}

// RealDir reports whether rel and each folder above it are real folders
// (no symlinks), without making any.
func (t *Tree) RealDir(rel string) bool {
	if rel == "" || rel == "." {
		return true
	}
	if _, ok := t.dirs.Load(rel); ok {
		return true
	}
	if !t.RealDir(path.Dir(rel)) {
		return false
	}
	st, err := t.root.Lstat(rel)
	return err == nil && st.IsDir()
}

// WriteNew writes a new file rel holding data, synced to disk. It fails if
// anything, a dangling symlink included, is already at rel.
func (t *Tree) WriteNew(rel string, data []byte, perm fs.FileMode) error {
	if err := t.MkdirAll(path.Dir(rel)); err != nil {
		return err
	}
	f, err := t.root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.root.Remove(rel)
	}
	return err
}

// LinkError is a symlink that Check refuses.
type LinkError struct {
	Rel    string // slash path of the link in the tree
	Target string // as written in the link
	Why    string // "resolves outside the tree", "dangles", ...
}

func (e *LinkError) Error() string {
	return fmt.Sprintf("refusing symlink %s → %s: it %s", Show(e.Rel), Show(e.Target), e.Why)
}

// Show returns a name from an archive as it can be shown in a one-line
// message: as it is, or quoted when it holds a control character or
// anything else that is not printable.
func Show(name string) string {
	for _, r := range name {
		if !unicode.IsPrint(r) && r != ' ' {
			return strconv.Quote(name)
		}
	}
	return name
}

// Check walks the tree at dir once and resolves every symlink in it
// within the tree. A link that leads outside, dangles or loops, and an
// entry that is neither a file, a folder nor a symlink, is an error naming
// it; the first one found is returned.
func Check(dir string) error {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer r.Close()
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch t := d.Type(); {
		case t.IsDir(), t.IsRegular():
			return nil
		case t&fs.ModeSymlink != 0:
			return Resolve(r, rel)
		default:
			return fmt.Errorf("refusing %s: %s entries are not allowed in a toolkit", Show(rel), t.String())
		}
	})
}

// SizeText is a size as cudaenv prints one: 512 B, 1.5 GiB (one
// decimal, powers of 1024).
func SizeText(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// Size is the bytes of the regular files under dir, as du counts
// apparent sizes; links are not followed, and what cannot be read counts
// nothing.
func Size(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// OwnSize is Size counting only files with no other name (hard link)
// than the one under dir: the space that removing dir frees.
func OwnSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil && links(fi) <= 1 {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// Links is how many names (hard links) the file fi describes has; 1
// where the system does not say.
func Links(fi fs.FileInfo) uint64 { return links(fi) }

// maxHops bounds the symlinks followed while resolving one path, as the
// kernel does.
const maxHops = 40

// Resolve follows the symlink at rel (a slash path) and every link it
// leads through, never leaving the tree r, the way the kernel would: a
// *LinkError says the link leads outside, dangles or loops.
func Resolve(r *os.Root, rel string) error {
	target, err := r.Readlink(filepath.FromSlash(rel))
	if err != nil {
		return err
	}
	target = filepath.ToSlash(target)
	fail := func(why string) error { return &LinkError{Rel: rel, Target: target, Why: why} }
	if absolute(target) {
		return fail("resolves outside the tree (absolute target)")
	}
	// The link's folder is resolved too, so rel may pass through links.
	todo := append(strings.Split(path.Dir(rel), "/"), strings.Split(target, "/")...)
	var done []string // resolved path: real folders below the top
	hops := 1
	for len(todo) > 0 {
		seg := todo[0]
		todo = todo[1:]
		switch seg {
		case "", ".":
			continue
		case "..":
			if len(done) == 0 {
				return fail("resolves outside the tree")
			}
			done = done[:len(done)-1]
			continue
		}
		cur := path.Join(path.Join(done...), seg)
		st, err := r.Lstat(filepath.FromSlash(cur))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				return fail("dangles (" + Show(cur) + " does not exist)")
			}
			return fmt.Errorf("check symlink %s: %w", Show(rel), err)
		}
		if st.Mode()&fs.ModeSymlink == 0 {
			if !st.IsDir() && slices.ContainsFunc(todo, func(s string) bool { return s != "" && s != "." }) {
				return fail("dangles (" + Show(cur) + " is not a folder)")
			}
			done = append(done, seg)
			continue
		}
		if hops++; hops > maxHops {
			return fail("loops")
		}
		next, err := r.Readlink(filepath.FromSlash(cur))
		if err != nil {
			return fmt.Errorf("check symlink %s: %w", Show(rel), err)
		}
		next = filepath.ToSlash(next)
		if absolute(next) {
			return fail("resolves outside the tree (through " + Show(cur) + ")")
		}
		todo = append(strings.Split(next, "/"), todo...)
	}
	return nil
}

func absolute(slashPath string) bool {
	p := filepath.FromSlash(slashPath)
	return path.IsAbs(slashPath) || filepath.IsAbs(p) || filepath.VolumeName(p) != ""
}
