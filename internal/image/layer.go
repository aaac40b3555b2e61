package image

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/klauspost/pgzip"

	"github.com/cudaenv/cudaenv/internal/rootfs"
)

// What makes a layer's bytes besides its files. The same files give the
// same layer on any machine only while these stay as they are; a change
// here changes every layer's digest, so it is a change of cudaenv's
// image format (LayerFormat).
const (
	// LayerFormat names this layout of layers; it goes into the image's
	// labels, so two images' layers are comparable only at equal formats.
	LayerFormat = "1"
	// gzipLevel is klauspost/compress's level 6, what gzip(1) uses by
	// default.
	gzipLevel = 6
	// gzipBlock is the size of the pieces compressed at once (pgzip):
	// a piece is compressed with the last 32 KiB of the one before as its
	// dictionary, so the output depends on this size, never on how many
	// cores compress.
	gzipBlock = 1 << 20
)

// epoch is every entry's time, and the gzip header's.
var epoch = time.Unix(0, 0).UTC()

// node is one entry of a layer.
type node struct {
	name string // slash path in the layer, no leading slash
	typ  byte   // tar.TypeDir, tar.TypeReg or tar.TypeSymlink
	mode int64  // 0o755 or 0o644 (files), 0o755 (folders), 0o777 (links)
	link string // a symlink's target
	size int64  // a file's size
	src  string // a file's path on this machine
}

// walkTree lists a component's tree depth first, each folder's names in
// byte order: regular files (0o755 if any execute bit is set, else
// 0o644), folders and symlinks whose target stays inside the tree; any
// other kind of file fails. Names are relative to root, slash separated.
func walkTree(root string) ([]node, error) {
	var out []node
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch t := d.Type(); {
		case t.IsDir():
			out = append(out, node{name: rel, typ: tar.TypeDir, mode: 0o755})
		case t&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			if err := rootfs.CheckLinkTarget(rel, target); err != nil {
				return fmt.Errorf("refusing %w", err)
			}
			out = append(out, node{name: rel, typ: tar.TypeSymlink, mode: 0o777, link: target})
		case t.IsRegular():
			fi, err := d.Info()
			if err != nil {
				return err
			}
			mode := int64(0o644)
			if fi.Mode().Perm()&0o111 != 0 {
				mode = 0o755
			}
			out = append(out, node{name: rel, typ: tar.TypeReg, mode: mode, size: fi.Size(), src: p})
		default:
			return fmt.Errorf("%s is a %s, which no layer holds", rootfs.Show(rel), t.Type())
		}
		return nil
	})
	return out, err
}

// under puts nodes below dir (a slash path such as opt/cudaenv/cuda/12.4),
// after entries for dir and each folder above it.
func under(dir string, nodes []node) []node {
	var out []node
	parts := strings.Split(dir, "/")
	for i := range parts {
		out = append(out, node{name: strings.Join(parts[:i+1], "/"), typ: tar.TypeDir, mode: 0o755})
	}
	for _, n := range nodes {
		n.name = dir + "/" + n.name
		out = append(out, n)
	}
	return out
}

// built is a layer written to a file.
type built struct {
	path   string  // the compressed layer
	digest v1.Hash // of the compressed bytes
	diffID v1.Hash // of the tar
	size   int64   // compressed
	raw    int64   // the tar's size
}

// writeLayer writes nodes, in their order, as a gzip-compressed tar to
// dst: every entry owned by root (uid and gid 0, no names), dated epoch,
// with the nodes' modes; files are read whole, never as hard links, so a
// tree gives the same bytes whatever links the file system has.
func writeLayer(ctx context.Context, nodes []node, dst string) (b *built, err error) {
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(dst)
		}
	}()
	compressed := &hashWriter{w: bufio.NewWriterSize(f, 1<<20), h: sha256.New()}
	zw, err := pgzip.NewWriterLevel(compressed, gzipLevel)
	if err != nil {
		return nil, err
	}
	if err := zw.SetConcurrency(gzipBlock, max(2, runtime.GOMAXPROCS(0))); err != nil {
		return nil, err
	}
	zw.ModTime, zw.OS = epoch, 255
	raw := &hashWriter{w: zw, h: sha256.New()}
	tw := tar.NewWriter(raw)
	buf := make([]byte, 256<<10)
	for _, n := range nodes {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		h := &tar.Header{Typeflag: n.typ, Name: n.name, Linkname: n.link, Mode: n.mode, ModTime: epoch}
		if n.typ == tar.TypeDir {
			h.Name += "/"
		}
		if n.typ == tar.TypeReg {
			h.Size = n.size
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("layer: %s: %w", n.name, err)
		}
		if n.typ == tar.TypeReg {
			if err := copyFile(tw, n, buf); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	if err := compressed.w.(*bufio.Writer).Flush(); err != nil {
		return nil, err
	}
	return &built{
		path:   dst,
		digest: v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(compressed.h.Sum(nil))},
		diffID: v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(raw.h.Sum(nil))},
		size:   compressed.n,
		raw:    raw.n,
	}, nil
}

// copyFile copies a node's file into the tar, which holds exactly the
// size the walk saw: a file that changed since fails.
func copyFile(w io.Writer, n node, buf []byte) error {
	f, err := os.Open(n.src)
	if err != nil {
		return err
	}
	defer f.Close()
	got, err := io.CopyBuffer(w, io.LimitReader(f, n.size), buf)
	if err != nil {
		return fmt.Errorf("layer: %s: %w", n.name, err)
	}
	var one [1]byte
	if k, _ := f.Read(one[:]); got != n.size || k > 0 {
		return fmt.Errorf("layer: %s changed while it was read", n.name)
	}
	return nil
}

type hashWriter struct {
	w io.Writer
	h hash.Hash
	n int64
}

func (w *hashWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	w.h.Write(p[:n])
	w.n += int64(n)
	return n, err
}

// fileLayer is a built layer as go-containerregistry takes layers.
type fileLayer struct {
	b  *built
	mt types.MediaType
}

func (l *fileLayer) Digest() (v1.Hash, error)            { return l.b.digest, nil }
func (l *fileLayer) DiffID() (v1.Hash, error)            { return l.b.diffID, nil }
func (l *fileLayer) Size() (int64, error)                { return l.b.size, nil }
func (l *fileLayer) MediaType() (types.MediaType, error) { return l.mt, nil }
func (l *fileLayer) Compressed() (io.ReadCloser, error)  { return os.Open(l.b.path) }

func (l *fileLayer) Uncompressed() (io.ReadCloser, error) {
	f, err := os.Open(l.b.path)
	if err != nil {
		return nil, err
	}
	zr, err := gzip.NewReader(bufio.NewReader(f))
	if err != nil {
		f.Close()
		return nil, err
	}
	return &readCloser{Reader: zr, close: func() error { return errors.Join(zr.Close(), f.Close()) }}, nil
}

type readCloser struct {
	io.Reader
	close func() error
}

func (r *readCloser) Close() error { return r.close() }

// layerPath is where a layer of the image's files goes: its slash path
// below the prefix (cuda/12.4, cudnn/9.5.1.17-cuda12).
func layerPath(prefix, dir string) string {
	return strings.TrimPrefix(path.Join(prefix, dir), "/")
}
