package fetch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// label names an artifact in messages: "cuda_nvcc 12.4.131", "cudnn 9.5.1.17 (cuda12)".
func (a *Artifact) label() string {
	s := a.Component + " " + a.Version
	if a.Variant != "" {
		s += " (" + a.Variant + ")"
	}
	return s
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12] + "…"
	}
	return h
}

// cachedArchive returns the path of a's verified archive in dir, or "" when
// it is not there (or no longer matches, in which case it is removed).
// A cached archive is re-hashed before use: the cache directory is not
// trusted more than the network. Only a regular file counts: a link at
// the name is removed, not followed.
func cachedArchive(dir string, a *Artifact, v *verifiedFiles) (string, error) {
	p := filepath.Join(dir, a.SHA256)
	st, err := os.Lstat(p)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if st.Size() == a.Size && st.Mode().IsRegular() {
		if sum, fi, err := hashFile(p); err == nil && sum == a.SHA256 {
			if v != nil {
				v.remember(a.SHA256, fi)
			}
			return p, nil
		}
	}
	// Corrupt or foreign: drop it so it is downloaded again.
	if err := os.RemoveAll(p); err != nil {
		return "", err
	}
	return "", nil
}

// HashFile is the sha256 of the regular file p, in hex, read as the
// download cache is read: a link, a named pipe or a file with other
// names (hard links) there is refused, never followed or waited on.
func HashFile(p string) (string, error) {
	sum, _, err := hashFile(p)
	return sum, err
}

// hashFile is HashFile that also returns what the file was before it was
// read (its change time then, should it change while hashed).
func hashFile(p string) (string, fs.FileInfo, error) {
	f, err := openNoFollow(p, os.O_RDONLY)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", nil, err
	}
	h := sha256.New()
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	if _, err := io.CopyBuffer(h, f, *bp); err != nil {
		return "", nil, err
	}
	return hex.EncodeToString(h.Sum(nil)), fi, nil
}

// download puts a verified copy of a at dir/<sha256>, resuming from
// dir/<sha256>.part, and returns its path. The caller holds the archive's
// lock, so no other process writes the part file meanwhile.
func (c *Client) download(ctx context.Context, a *Artifact, dir string, prog Progress, verified *verifiedFiles) (string, error) {
	final := filepath.Join(dir, a.SHA256)
	part := final + ".part"
	f, err := openCacheFile(part, os.O_RDWR)
	if errors.Is(err, fs.ErrPermission) && os.Remove(part) == nil {
		// Another user's part file in a cache a group shares (their
		// download was killed): this process holds the archive's lock,
		// so no one writes it; start a part of its own.
		f, err = openCacheFile(part, os.O_RDWR)
	}
	if err != nil {
		return "", fmt.Errorf("download %s: %w", a.label(), localize(err, inCache))
	}
	defer func() {
		if f != nil {
			f.Close()
		}
	}()
	d := &dl{c: c, a: a, f: f, prog: prog}
	if err := d.resumeState(); err != nil {
		return "", fmt.Errorf("download %s: %w", a.label(), localize(err, inCache))
	}
	restarted := false
	for attempt := 0; ; attempt++ {
		err := d.transfer(ctx)
		if err == nil && d.off == a.Size {
			if got := hex.EncodeToString(d.h.Sum(nil)); got != a.SHA256 {
				resumed := d.resumed
				if terr := d.reset(); terr != nil {
					return "", terr
				}
				if resumed && !restarted {
					// The kept part may have come from elsewhere: one clean try.
					restarted = true
					continue
				}
				os.Remove(part)
				return "", fmt.Errorf("verify %s: sha256 mismatch (want %s, got %s): %s", a.Component, short(a.SHA256), short(got), Redact(a.URL))
			}
			break
		}
		if err == nil {
			err = fmt.Errorf("transfer ended at %d of %d bytes", d.off, a.Size)
		}
		if ctx.Err() != nil {
			if isNoSpace(context.Cause(ctx)) {
				// Another download of this run filled the disk: a part
				// kept for a resume would keep it full for the rerun.
				f.Close()
				f = nil
				os.Remove(part)
			}
			return "", ctx.Err()
		}
		var se *statusError
		if errors.As(err, &se) && se.code == http.StatusNotFound {
			return "", fmt.Errorf("download %s: %s: %s", a.label(), se.status, Redact(a.URL))
		}
		var le *LocalError
		if errors.As(err, &le) {
			if isNoSpace(err) {
				// Give the space back: a resume would need it again anyway.
				f.Close()
				f = nil
				if os.Remove(part) == nil {
					le.Hint = "the partial download was removed; " + le.Hint
				}
			}
			return "", fmt.Errorf("download %s: %w", a.label(), err)
		}
		if !retryable(err) || attempt >= c.retries() {
			return "", fmt.Errorf("download %s: %w: %s", a.label(), err, Redact(a.URL))
		}
		c.noticeRetry("download "+a.label(), err, attempt, c.retryDelay(attempt))
		if err := sleep(ctx, c.retryDelay(attempt)); err != nil {
			return "", err
		}
	}
	if err := f.Close(); err != nil {
		f = nil
		return "", fmt.Errorf("download %s: %w", a.label(), localize(err, inCache))
	}
	f = nil
	if err := os.Rename(part, final); err != nil {
		return "", fmt.Errorf("download %s: %w", a.label(), localize(err, inCache))
	}
	if fi, err := os.Lstat(final); err == nil && verified != nil {
		verified.remember(a.SHA256, fi)
	}
	return final, nil
}

// dl is one artifact's transfer state: f holds off bytes whose hash is h.
type dl struct {
	c       *Client
	a       *Artifact
	f       *os.File
	prog    Progress
	h       hash.Hash
	off     int64
	resumed bool // the bytes in f did not all come from one response
}

// resumeState hashes what an earlier run left in the part file.
func (d *dl) resumeState() error {
	d.h = sha256.New()
	st, err := d.f.Stat()
	if err != nil {
		return err
	}
	if st.Size() > d.a.Size {
		return d.reset()
	}
	if st.Size() > 0 {
		if _, err := d.f.Seek(0, io.SeekStart); err != nil {
			return err
		}
		bp := copyBufs.Get().(*[]byte)
		n, err := io.CopyBuffer(d.h, io.LimitReader(d.f, st.Size()), *bp)
		copyBufs.Put(bp)
		if err != nil {
			return err
		}
		d.off = n
		d.resumed = true
		cached(d.prog, n)
	}
	return nil
}

func (d *dl) add(n int64) {
	if d.prog != nil && n != 0 {
		d.prog.Add(n)
	}
}

// reset empties the part file.
func (d *dl) reset() error {
	if err := d.f.Truncate(0); err != nil {
		return err
	}
	if _, err := d.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	d.add(-d.off)
	d.off = 0
	d.h = sha256.New()
	d.resumed = false
	return nil
}

// transfer appends the rest of the archive to f. It returns nil when the
// source ended cleanly; d.off then says how far it got.
func (d *dl) transfer(ctx context.Context) error {
	if _, err := d.f.Seek(d.off, io.SeekStart); err != nil {
		return err
	}
	if isFileURL(d.a.URL) {
		return d.fromFile()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.a.URL, nil)
	if err != nil {
		return &fatalError{err}
	}
	d.c.setHeaders(req)
	if d.off > 0 {
		req.Header.Set("Range", "bytes="+strconv.FormatInt(d.off, 10)+"-")
	}
	resp, err := d.c.limits(false).Do(d.c.httpClient(), req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusPartialContent && d.off > 0:
		start, total, ok := parseContentRange(resp.Header.Get("Content-Range"))
		if !ok || start != d.off {
			// Not the range asked for: start over.
			if err := d.reset(); err != nil {
				return err
			}
			return fmt.Errorf("server answered a different range (%q): %w", resp.Header.Get("Content-Range"), io.ErrUnexpectedEOF)
		}
		if total >= 0 && total != d.a.Size {
			return &fatalError{fmt.Errorf("size mismatch (want %d, server has %d)", d.a.Size, total)}
		}
		d.resumed = true
	case resp.StatusCode == http.StatusOK:
		if d.off > 0 { // Range ignored: start over.
			if err := d.reset(); err != nil {
				return err
			}
		}
		if resp.ContentLength >= 0 && resp.ContentLength != d.a.Size {
			return &fatalError{fmt.Errorf("size mismatch (want %d, server has %d)", d.a.Size, resp.ContentLength)}
		}
	case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable:
		if err := d.reset(); err != nil {
			return err
		}
		return fmt.Errorf("server refused range: %w", io.ErrUnexpectedEOF)
	default:
		return &statusError{resp.StatusCode, resp.Status}
	}
	return d.copyFrom(resp.Body)
}

func (d *dl) fromFile() error {
	p, err := filePath(d.a.URL)
	if err != nil {
		return &fatalError{err}
	}
	src, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return &statusError{http.StatusNotFound, "404 Not Found"}
	}
	if err != nil {
		return err
	}
	defer src.Close()
	st, err := src.Stat()
	if err != nil {
		return err
	}
	if st.Size() != d.a.Size {
		return &fatalError{fmt.Errorf("size mismatch (want %d, file has %d)", d.a.Size, st.Size())}
	}
	if _, err := src.Seek(d.off, io.SeekStart); err != nil {
		return err
	}
	return d.copyFrom(src)
}

// copyFrom appends r to f and the hash, never past the expected size.
func (d *dl) copyFrom(r io.Reader) error {
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	buf := *bp
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if d.off+int64(n) > d.a.Size {
				return &fatalError{fmt.Errorf("size mismatch (want %d, server sent more)", d.a.Size)}
			}
			if _, werr := cacheWrite(d.f, buf[:n]); werr != nil {
				return &fatalError{localize(werr, inCache)}
			}
			d.h.Write(buf[:n])
			d.off += int64(n)
			d.add(int64(n))
		}
		if err == io.EOF {
			if d.off < d.a.Size {
				// The response was complete but the archive is not: the
				// server's file differs from the manifest.
				return &fatalError{fmt.Errorf("size mismatch (want %d, got %d)", d.a.Size, d.off)}
			}
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// cacheWrite writes to a cache file; tests replace it to fake a full disk.
var cacheWrite = (*os.File).Write

// parseContentRange parses "bytes start-end/total" (total may be "*": -1).
func parseContentRange(s string) (start, total int64, ok bool) {
	rest, found := strings.CutPrefix(s, "bytes ")
	if !found {
		return 0, 0, false
	}
	rng, tot, found := strings.Cut(rest, "/")
	if !found {
		return 0, 0, false
	}
	first, _, found := strings.Cut(rng, "-")
	if !found {
		return 0, 0, false
	}
	start, err := strconv.ParseInt(first, 10, 64)
	if err != nil {
		return 0, 0, false
	}
	if tot == "*" {
		return start, -1, true
	}
	total, err = strconv.ParseInt(tot, 10, 64)
	if err != nil {
		return 0, 0, false
	}
	return start, total, true
}
