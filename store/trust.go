package store

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/cudaenv/cudaenv/internal/termsafe"
)

// The system store is run by every user, so what it holds must be
// changeable only by root and the store's owner (its admin): a tree an
// ordinary user owns or anyone may write would let that user change what
// everyone runs. The admin's link --system refuses such a target; users
// reading the store skip such entries and folders, with a warning.

// owners are the uids whose files the system store may hold.
type owners struct{ store, me uint32 }

func (o owners) trusted(uid uint32) bool { return uid == 0 || uid == o.store || uid == o.me }

// systemOwners are root, the owner of the system store's folder (this
// user where it does not exist yet: link and install make it), and this
// user, who can change only what is theirs anyway.
func systemOwners(root string) owners {
	o := owners{store: myUID(), me: myUID()}
	if fi, err := os.Stat(root); err == nil {
		if uid, ok := fileOwner(fi); ok {
			o.store = uid
		}
	}
	return o
}

// untrusted says why a file or folder of the system store cannot be
// believed ("" when it can): owned by another ordinary user, or writable
// by others (the store is meant to be 0755, see readableByAll). groupToo
// counts group write as well, for what link --system adopts; a folder
// with the sticky bit (/tmp) may be writable by others when sticky is
// set, as others cannot rename what is in it. Nothing is checked where
// ownership is unknown (Windows).
func (o owners) untrusted(fi fs.FileInfo, groupToo, sticky bool) string {
	uid, ok := fileOwner(fi)
	if !ok {
		return ""
	}
	if !o.trusted(uid) {
		return fmt.Sprintf("is owned by %s, not by root or the system store's owner", userName(uid))
	}
	w := fs.FileMode(0o002)
	if groupToo {
		w |= 0o020
	}
	if fi.Mode().Perm()&w != 0 && !(sticky && fi.IsDir() && fi.Mode()&fs.ModeSticky != 0) {
		who := "others"
		if fi.Mode().Perm()&0o002 == 0 {
			who = "its group"
		}
		return fmt.Sprintf("is writable by %s (mode %v)", who, fi.Mode())
	}
	return ""
}

// checkAdoptable is link --system's check of the tree it would adopt:
// the folders above it (as given and once links are resolved) and
// everything in it, and what links in it point at outside it.
func (s *Store) checkAdoptable(target string) error {
	o := systemOwners(s.Dirs.Root)
	o.me = o.store // root and the store's owner only, whoever runs it
	real, err := filepath.EvalSymlinks(target)
	if err != nil {
		return fmt.Errorf("link --system %s: %w", termsafe.Arg(target), err)
	}
	fix := func(p, why string) error {
		return fmt.Errorf("link --system %s: %s %s, so someone other than root could change what every user runs; "+
			"make root own it and only root write it (chown -R root: %s && chmod -R go-w %s), then link it again", termsafe.Arg(target), p, why, termsafe.Arg(real), termsafe.Arg(real))
	}
	above := func(p, why string) error {
		return fmt.Errorf("link --system %s: %s, a folder above it, %s, so someone other than root could swap in another tree; "+
			"move the toolkit under a folder only root can change, such as /opt, or fix that folder (chown root: %s && chmod go-w %s)", termsafe.Arg(target), p, why, termsafe.Arg(p), termsafe.Arg(p))
	}
	outside := func(to, link, why string) error {
		return fmt.Errorf("link --system %s: %s, where its link %s leads, %s, so someone other than root could change what every user runs; "+
			"fix it (chown root: %s && chmod go-w %s) or copy what it holds into the tree", termsafe.Arg(target), to, link, why, termsafe.Arg(to), termsafe.Arg(to))
	}
	seen := map[string]bool{}
	chain := func(p string) (string, string) { // the folders above p
		for d := filepath.Dir(p); ; d = filepath.Dir(d) {
			if !seen[d] {
				seen[d] = true
				if fi, err := os.Stat(d); err == nil {
					if why := o.untrusted(fi, true, true); why != "" {
						return d, why
					}
				}
			}
			if filepath.Dir(d) == d {
				return "", ""
			}
		}
	}
	for _, p := range []string{target, real} {
		if d, why := chain(p); d != "" {
			return above(d, why)
		}
	}
	return filepath.WalkDir(real, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("link --system %s: %w", termsafe.Arg(target), err)
		}
		if d.Type()&fs.ModeSymlink != 0 {
			// A link's own mode means nothing; where it leads outside
			// the tree is checked as the tree is.
			to, err := filepath.EvalSymlinks(p)
			if err != nil || within(to, real) {
				return nil
			}
			if fi, err := os.Stat(to); err == nil {
				if why := o.untrusted(fi, true, false); why != "" {
					return outside(to, p, why)
				}
			}
			if d, why := chain(to); d != "" {
				return outside(d, p, why)
			}
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return fmt.Errorf("link --system %s: %w", termsafe.Arg(target), err)
		}
		if why := o.untrusted(fi, true, false); why != "" {
			return fix(p, why)
		}
		return nil
	})
}

func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

// trustCheck remembers, for one user store, what it found of its system
// store's paths, so each is checked once.
type trustCheck struct {
	mu      sync.Mutex
	owners  *owners
	verdict map[string]string
}

// warned holds what was warned of in this process: a command opens the
// store more than once.
var warned sync.Map

func alreadyWarned(key string) bool {
	_, dup := warned.LoadOrStore(key, true)
	return dup
}

// systemUntrusted says why the system store's entry e cannot be used
// ("" when it can): the store's folder, its kind folder, the entry's
// folder, its receipt or, for a link, the linked tree's folder or its
// bin is owned by another ordinary user or writable by others. The
// first time in a process a path is found so, Warn hears it.
func (s *Store) systemUntrusted(e Entry) string {
	if s.System == nil || s.trust == nil {
		return ""
	}
	t := s.trust
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.owners == nil {
		o := systemOwners(s.System.Dirs.Root)
		t.owners = &o
	}
	kind := s.System.kindDir(e.Kind)
	paths := []struct{ p, what string }{
		{s.System.Dirs.Root, "the system store's folder"},
		{kind, "the system store's " + string(e.Kind) + " folder"},
		{e.Dir, "the system store's " + e.Label()},
		{filepath.Join(e.Dir, ReceiptName), "the system store's " + e.Label()},
	}
	if e.Linked() && e.Path != e.Dir {
		paths = append(paths, struct{ p, what string }{e.Path, "the system store's " + e.Label()},
			struct{ p, what string }{filepath.Join(e.Path, "bin"), "the system store's " + e.Label()})
	}
	for _, c := range paths {
		why, ok := t.verdict[c.p]
		if !ok {
			if fi, err := os.Stat(c.p); err == nil {
				why = t.owners.untrusted(fi, false, false)
			}
			if t.verdict == nil {
				t.verdict = map[string]string{}
			}
			t.verdict[c.p] = why
			if why != "" && s.Warn != nil && !alreadyWarned(c.p+"\x00"+why) {
				s.Warn(fmt.Sprintf("skipping %s: %s %s, so it may hold what another user put there; ask the store's admin to fix its permissions (chown root, chmod go-w)", c.what, c.p, why))
			}
		}
		if why != "" {
			return why
		}
	}
	return ""
}

// TrustSystem reports whether e, an entry of this store's system store,
// may be used (see systemUntrusted); an entry of this store's own is.
func (s *Store) TrustSystem(e Entry) bool {
	return !e.System || s.systemUntrusted(e) == ""
}
