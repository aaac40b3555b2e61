package image

import (
	"archive/tar"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cudaenv/cudaenv/internal/activate"
	"github.com/cudaenv/cudaenv/internal/envdiff"
	"github.com/cudaenv/cudaenv/internal/install"
	"github.com/cudaenv/cudaenv/internal/resolve"
	"github.com/cudaenv/cudaenv/internal/version"
	"github.com/cudaenv/cudaenv/store"
)

// entryDirs are where an entry's files go below the prefix, laid out as
// in the store (cuda/<version>, cudnn/<name>, …). A CUDA toolkit's files
// are in cuda/<major>.<minor>, and cuda/<version> is a link to it (in the
// entry's own layer): NVIDIA's patch releases share most archives, and
// only a path that does not name the patch lets the layer of an unchanged
// archive be the same in both releases' images.
func entryDirs(e *install.ImageEntry) (files, link string) {
	if e.Kind != store.CUDA {
		return string(e.Kind) + "/" + e.Name, ""
	}
	v := e.Version
	mm := strconv.Itoa(v.Major())
	if len(v) > 1 {
		mm += "." + strconv.Itoa(v[1])
	}
	if mm == e.Name {
		return "cuda/" + mm, ""
	}
	return "cuda/" + mm, "cuda/" + e.Name
}

// entryPath is the path the activation names for an entry: the store's.
func entryPath(e *install.ImageEntry) string {
	files, link := entryDirs(e)
	if link != "" {
		return link
	}
	return files
}

// skeleton is a tree with an image's folders and links, and empty files
// where its files are: what activation and install's layout links look
// at, without the bytes.
type skeleton struct {
	root string
}

// add puts a component's nodes into the skeleton below dir; a later
// component's file or link replaces an earlier one's, as in the store.
func (s *skeleton) add(dir string, nodes []node) error {
	base := filepath.Join(s.root, filepath.FromSlash(dir))
	if err := os.MkdirAll(base, 0o755); err != nil {
		return err
	}
	for _, n := range nodes {
		p := filepath.Join(base, filepath.FromSlash(n.name))
		fi, err := os.Lstat(p)
		switch {
		case err == nil && fi.IsDir() && n.typ == tar.TypeDir:
			continue
		case err == nil && (fi.IsDir() || n.typ == tar.TypeDir):
			return fmt.Errorf("%s is a folder in one component and not in another", n.name)
		case err == nil:
			if err := os.Remove(p); err != nil {
				return err
			}
		case !errors.Is(err, fs.ErrNotExist):
			return err
		}
		switch n.typ {
		case tar.TypeDir:
			err = os.Mkdir(p, 0o755)
		case tar.TypeSymlink:
			err = os.Symlink(n.link, p)
		default:
			err = os.WriteFile(p, nil, fs.FileMode(n.mode))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// layout adds install's layout links to an entry's files in the skeleton
// and returns what they added, as nodes below the entry's folder, with the
// entry's version link (if any) first.
func (s *skeleton) layout(e *install.ImageEntry) ([]node, error) {
	files, link := entryDirs(e)
	dir := filepath.Join(s.root, filepath.FromSlash(files))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	before, err := walkTree(dir)
	if err != nil {
		return nil, err
	}
	had := map[string]bool{}
	for _, n := range before {
		had[n.name] = true
	}
	if err := install.LinkLayout(dir, e.Platform); err != nil {
		return nil, err
	}
	after, err := walkTree(dir)
	if err != nil {
		return nil, err
	}
	var added []node
	for _, n := range after {
		if !had[n.name] {
			n.name = files + "/" + n.name
			added = append(added, n)
		}
	}
	if link != "" {
		target := strings.TrimPrefix(files, "cuda/")
		if err := os.Symlink(target, filepath.Join(s.root, filepath.FromSlash(link))); err != nil {
			return nil, err
		}
		added = append([]node{{name: link, typ: tar.TypeSymlink, mode: 0o777, link: target}}, added...)
	}
	return added, nil
}

// activation is the environment cudaenv's activation of the entries sets
// (what cudaenv env --format json prints), applied to base (the base image's Env): the entries resolved at their
// paths in the skeleton, activate.Want computed there (so what it finds on
// disk is the image's), and every path mapped to the prefix.
func (s *skeleton) activation(entries []*install.ImageEntry, opts resolve.Options, prefix string, base envdiff.Env) (envdiff.Env, activate.Resolved) {
	r := activate.Resolved{Selection: resolve.Selection{Options: opts}}
	for _, e := range entries {
		p := filepath.Join(s.root, filepath.FromSlash(entryPath(e)))
		se := &store.Entry{Kind: e.Kind, Name: e.Name, Version: e.Version, CUDAMajor: e.CUDAMajor, Dir: p, Path: p}
		t := version.Tool(e.Kind)
		r.Selection.Specs = append(r.Selection.Specs, version.Spec{Tool: t, Kind: version.Prefix, Prefix: e.Version})
		switch {
		case e.Kind == store.CUDA:
			r.CUDA = se
		case t == version.Cudnn:
			r.Cudnn = se
		default:
			if r.Libs == nil {
				r.Libs = map[version.Tool]*store.Entry{}
			}
			r.Libs[t] = se
		}
	}
	want := activate.Want(r, "linux")
	mapped := envdiff.Want{Prepend: map[string][]string{}, Set: map[string]string{}, Active: want.Active}
	for k, list := range want.Prepend {
		for _, v := range list {
			mapped.Prepend[k] = append(mapped.Prepend[k], s.imagePath(v, prefix))
		}
	}
	for k, v := range want.Set {
		mapped.Set[k] = s.imagePath(v, prefix)
	}
	changes := activate.Changes(base, mapped, "linux")
	env := envdiff.Result(base, changes)
	// As cudaenv env --format json: values for a program, without the
	// state a shell's hook keeps (a base's from an older image included).
	delete(env, envdiff.StateVar)
	return env, r
}

// imagePath maps a path in the skeleton to the image's; others stay.
func (s *skeleton) imagePath(p, prefix string) string {
	if p == s.root {
		return prefix
	}
	if rest, ok := strings.CutPrefix(p, s.root+string(filepath.Separator)); ok {
		return strings.TrimSuffix(prefix, "/") + "/" + filepath.ToSlash(rest)
	}
	return p
}
