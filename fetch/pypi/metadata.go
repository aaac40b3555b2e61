package pypi

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/cudaenv/cudaenv/fetch"
)

// Bounds on what reading a wheel's metadata may cost, whatever the index
// sends: torch's METADATA is about 50 KB and its zip directory under 2 MB.
const (
	maxMetadata   = 4 << 20  // a METADATA file, decompressed
	maxSmallWheel = 4 << 20  // a wheel read whole (cuda-toolkit is a few KB)
	maxRangeBytes = 64 << 20 // all range answers for one wheel together
	rangeBlock    = 256 << 10
	maxHeaders    = 4096 // header lines of a METADATA file
)

// Metadata is the part of a wheel's core metadata (PEP 566) cudaenv reads.
type Metadata struct {
	Name          string   // as the file says; checked against the wheel's name
	Version       string   // likewise
	RequiresDist  []string // Requires-Dist lines, in order
	ProvidesExtra []string
	// Via is how it was read: "metadata" (PEP 658), "range" (HTTP range
	// requests on the zip directory), "wheel" (the whole small wheel) or
	// "cache".
	Via string
}

// WheelMetadata reads f's METADATA at the least cost the index allows:
// the PEP 658 file where offered, else the zip directory and METADATA
// entry through HTTP range requests, else the whole wheel if small. What
// was checked against the index's sha256 (the .metadata file, the small
// wheel) is cached under cacheDir (empty: no cache), keyed by the index,
// the file and those sums (metadataKey); a cached file another user
// wrote, or one others may write, is not believed. The metadata must
// name the wheel's own project and version. Errors carry no credentials.
func (ix *Index) WheelMetadata(ctx context.Context, f File, cacheDir string) (*Metadata, error) {
	m, err := ix.wheelMetadata(ctx, f, cacheDir)
	if err != nil {
		return nil, fetch.RedactError(fmt.Errorf("read metadata of %s: %w", f.Filename, err))
	}
	return m, nil
}

func (ix *Index) wheelMetadata(ctx context.Context, f File, cacheDir string) (*Metadata, error) {
	w, err := ParseWheelName(f.Filename)
	if err != nil || !wheelFilename().MatchString(f.Filename) {
		return nil, fmt.Errorf("not a wheel name")
	}
	key := ix.metadataKey(f)
	cacheName := path.Join("metadata", key+".METADATA")
	if cacheDir != "" {
		if data, err := fetch.ReadTrustedCache(cacheDir, cacheName, maxMetadata+int64(len(key))+64); err == nil {
			if data, ok := unsealMetadata(data, key, f); ok {
				if m, err := checkedMetadata(data, w); err == nil {
					m.Via = "cache"
					return m, nil
				}
			}
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var data []byte
	via := ""
	if f.Metadata {
		data, err = ix.pep658(ctx, f)
		via = "metadata"
		if errors.Is(err, errNoMetadataFile) {
			data, err = nil, nil // the page promised one it does not have: read the wheel
		}
	}
	if data == nil && err == nil {
		data, via, err = ix.metadataFromWheel(ctx, f)
	}
	if err != nil {
		return nil, err
	}
	m, err := checkedMetadata(data, w)
	if err != nil {
		return nil, err
	}
	m.Via = via
	// Cached only what was checked against a sha256 the index gave: the
	// .metadata file against its own, the small wheel read whole against
	// the wheel's. Metadata read by ranges (part of a wheel whose hash
	// nothing checked) is read again next time.
	verified := via == "metadata" && f.MetadataSHA256 != "" || via == "wheel" && f.SHA256 != ""
	if cacheDir != "" && verified {
		_ = fetch.WriteCache(cacheDir, cacheName, sealMetadata(data, key)) // a cache that cannot be written only costs time
	}
	return m, nil
}

// metadataKey names the cached METADATA of f: a hash of the index, the
// file's URL and name, and the sha256s the index gave for the wheel and
// its .metadata file. A hostile index's claim of an honest wheel's
// sha256 plants nothing another index, or another file, reads.
func (ix *Index) metadataKey(f File) string {
	h := sha256.New()
	for _, part := range []string{"cudaenv-metadata-v2", ix.base.String(), f.URL, f.Filename, f.SHA256, f.MetadataSHA256} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// sealMetadata is what the cache holds for a METADATA: a first line with
// its key, so that a file renamed to another key (by whoever owns a
// shared cache's folder) vouches for nothing.
func sealMetadata(data []byte, key string) []byte {
	return append([]byte("cudaenv-metadata "+key+"\n"), data...)
}

// unsealMetadata returns the METADATA of a cached file sealed with key;
// one from a .metadata file is checked against the index's sha256 again.
func unsealMetadata(sealed []byte, key string, f File) ([]byte, bool) {
	data, ok := bytes.CutPrefix(sealed, []byte("cudaenv-metadata "+key+"\n"))
	if !ok {
		return nil, false
	}
	if f.Metadata && f.MetadataSHA256 != "" {
		sum := sha256.Sum256(data)
		if hex.EncodeToString(sum[:]) != f.MetadataSHA256 {
			return nil, false
		}
	}
	return data, true
}

var errNoMetadataFile = errors.New("no .metadata file")

// checkWheelSize refuses, before any request for the wheel, a size no
// wheel has; from says who claimed it.
func checkWheelSize(size int64, from string) error {
	if size > fetch.MaxWheelSize {
		return fmt.Errorf("%s says the wheel is %d bytes; no wheel is over %d GiB: refusing it", from, size, fetch.MaxWheelSize>>30)
	}
	return nil
}

// pep658 reads the wheel's .metadata file and checks its hash.
func (ix *Index) pep658(ctx context.Context, f File) ([]byte, error) {
	resp, err := ix.get(ctx, f.URL+".metadata", "")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return nil, errNoMetadataFile
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("get %s.metadata: %s", f.Filename, resp.Status)
	}
	data, err := readBounded(resp.Body, maxMetadata, "metadata file")
	if err != nil {
		return nil, err
	}
	ix.bytesRead.Add(int64(len(data)))
	if f.MetadataSHA256 != "" {
		sum := sha256.Sum256(data)
		if hex.EncodeToString(sum[:]) != f.MetadataSHA256 {
			return nil, fmt.Errorf("%s.metadata: sha256 mismatch with the index page", f.Filename)
		}
	}
	return data, nil
}

// metadataFromWheel reads METADATA out of the wheel itself: whole when it is
// known to be no bigger than one range request's block, else through range
// requests; a server without ranges still serves a small wheel whole.
func (ix *Index) metadataFromWheel(ctx context.Context, f File) ([]byte, string, error) {
	if err := checkWheelSize(f.Size, "the index page"); err != nil {
		return nil, "", err
	}
	// Read whole only what costs no more than the range requests would:
	// NVIDIA's wheels carry no .metadata file on PyPI, and reading a 4 MB
	// cuda-cccl whole to learn its requirements tripled what a resolution
	// downloads (#30).
	if f.Size > 0 && f.Size <= rangeBlock {
		data, err := ix.wholeWheel(ctx, f)
		return data, "wheel", err
	}
	size := f.Size
	if size <= 0 {
		size = ix.fileSize(ctx, f.URL)
		if err := checkWheelSize(size, "the server"); err != nil {
			return nil, "", err
		}
	}
	if size <= 0 {
		return nil, "", errors.New("the index says neither the wheel's size nor answers range requests; cannot read its metadata without downloading it")
	}
	ra := &httpRangeReader{ix: ix, ctx: ctx, url: f.URL, size: size}
	zr, err := fetch.OpenZip(ra, size)
	if errors.Is(err, errNoRanges) && size <= maxSmallWheel {
		data, err := ix.wholeWheel(ctx, f)
		return data, "wheel", err
	}
	if errors.Is(err, fetch.ErrZipDirectory) {
		return nil, "", err
	}
	if err != nil {
		return nil, "", fmt.Errorf("read zip directory: %w", err)
	}
	ra.dataRead = true
	data, err := metadataEntry(zr, f.Filename)
	return data, "range", err
}

// wholeWheel downloads a small wheel, checks its sha256 and reads METADATA.
func (ix *Index) wholeWheel(ctx context.Context, f File) ([]byte, error) {
	resp, err := ix.get(ctx, f.URL, "")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("get %s: %s", f.Filename, resp.Status)
	}
	data, err := readBounded(resp.Body, maxSmallWheel, "wheel read whole")
	if err != nil {
		return nil, err
	}
	ix.bytesRead.Add(int64(len(data)))
	if f.SHA256 != "" {
		sum := sha256.Sum256(data)
		if hex.EncodeToString(sum[:]) != f.SHA256 {
			return nil, errors.New("sha256 mismatch with the index page")
		}
	}
	zr, err := fetch.OpenZip(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("read wheel: %w", err)
	}
	return metadataEntry(zr, f.Filename)
}

// metadataEntry reads the one {name}-{version}.dist-info/METADATA at the
// top of the wheel, bounded.
func metadataEntry(zr *zip.Reader, filename string) ([]byte, error) {
	var found *zip.File
	for _, zf := range zr.File {
		dir, base := path.Split(zf.Name)
		if base != "METADATA" || strings.Count(dir, "/") != 1 || !strings.HasSuffix(dir, ".dist-info/") {
			continue
		}
		if found != nil {
			return nil, errors.New("the wheel has more than one .dist-info/METADATA")
		}
		found = zf
	}
	if found == nil {
		return nil, errors.New("the wheel has no .dist-info/METADATA")
	}
	if found.UncompressedSize64 > maxMetadata {
		return nil, fmt.Errorf("METADATA is %d bytes, more than the %d cudaenv reads", found.UncompressedSize64, maxMetadata)
	}
	r, err := found.Open()
	if err != nil {
		return nil, fmt.Errorf("open METADATA: %w", err)
	}
	defer r.Close()
	return readBounded(r, maxMetadata, "METADATA")
}

func readBounded(r io.Reader, limit int64, what string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes; refusing it", what, limit)
	}
	return data, nil
}

func (ix *Index) get(ctx context.Context, rawURL, byteRange string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, err
	}
	ix.setHeaders(req)
	if byteRange != "" {
		req.Header.Set("Range", byteRange)
		// A compressed answer would not be the bytes asked for.
		req.Header.Set("Accept-Encoding", "identity")
	}
	return ix.limits.Do(ix.client, req)
}

var errNoRanges = errors.New("the server does not answer range requests")

// httpRangeReader is an io.ReaderAt over HTTP range requests that asks
// for little more than the zip reader needs, as uv's lazy wheel does: the
// first read fetches the wheel's last 64 KiB (the end record, and all of a
// small directory); while the directory is read (dirPhase), a miss fetches
// up to what is already held, the rest of the directory in one request;
// after it, a miss fetches 64 KiB (a METADATA entry). What is fetched is
// kept, and it stops after maxRangeBytes.
type httpRangeReader struct {
	ix       *Index
	ctx      context.Context
	url      string
	size     int64
	fetched  int64
	segs     []rangeSeg // sorted by start, not overlapping
	dataRead bool       // the directory is read: misses fetch readAhead
}

type rangeSeg struct {
	start int64
	data  []byte
}

// readAhead is what a miss fetches beyond the directory, and the tail the
// first read takes.
const readAhead = 64 << 10

func (r *httpRangeReader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off >= r.size {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) && off+int64(n) < r.size {
		pos := off + int64(n)
		seg, err := r.segment(pos)
		if err != nil {
			return n, err
		}
		n += copy(p[n:], seg.data[pos-seg.start:])
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// segment is the held bytes that start at or before pos and reach past
// it, fetched when none do.
func (r *httpRangeReader) segment(pos int64) (rangeSeg, error) {
	next := r.size // where the next held segment starts
	for _, s := range r.segs {
		if s.start <= pos && pos < s.start+int64(len(s.data)) {
			return s, nil
		}
		if s.start > pos && s.start < next {
			next = s.start
		}
	}
	start, end := pos, next
	switch {
	case len(r.segs) == 0:
		// The end record is read first: take the tail.
		start = max(0, min(pos, r.size-readAhead))
	case r.dataRead:
		end = min(next, pos+readAhead)
	}
	if end-start > rangeBlock*256 {
		end = start + rangeBlock*256
	}
	b, err := r.fetch(start, end-1)
	if err != nil {
		return rangeSeg{}, err
	}
	seg := rangeSeg{start: start, data: b}
	i := 0
	for i < len(r.segs) && r.segs[i].start < start {
		i++
	}
	r.segs = append(r.segs[:i], append([]rangeSeg{seg}, r.segs[i:]...)...)
	return seg, nil
}

// fetch asks for bytes start..end (inclusive) and checks the answer is
// exactly those.
func (r *httpRangeReader) fetch(start, end int64) ([]byte, error) {
	if r.fetched+end-start+1 > maxRangeBytes {
		return nil, fmt.Errorf("reading the zip directory took more than %d bytes of range answers; refusing the wheel", maxRangeBytes)
	}
	resp, err := r.ix.get(r.ctx, r.url, fmt.Sprintf("bytes=%d-%d", start, end))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusPartialContent:
	case http.StatusOK:
		return nil, errNoRanges
	default:
		return nil, fmt.Errorf("range request: %s", resp.Status)
	}
	want := fmt.Sprintf("bytes %d-%d/%d", start, end, r.size)
	if got := strings.TrimSpace(resp.Header.Get("Content-Range")); got != want {
		return nil, fmt.Errorf("range answer does not match the request (asked %s, got Content-Range %s)", want, strconv.Quote(got))
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, end-start+2))
	if err != nil {
		return nil, fmt.Errorf("range request: %w", err)
	}
	if int64(len(b)) != end-start+1 {
		return nil, fmt.Errorf("range answer does not match the request (asked %d bytes, got %d)", end-start+1, len(b))
	}
	r.fetched += int64(len(b))
	r.ix.bytesRead.Add(int64(len(b)))
	return b, nil
}

// ParseMetadata reads the headers of a METADATA file (RFC 822 style; the
// description after the blank line is ignored).
func ParseMetadata(data []byte) (*Metadata, error) {
	if len(data) > maxMetadata {
		return nil, fmt.Errorf("metadata is larger than %d bytes", maxMetadata)
	}
	tr := textproto.NewReader(bufio.NewReader(bytes.NewReader(data)))
	m := &Metadata{}
	for lines := 0; ; lines++ {
		if lines > maxHeaders {
			return nil, fmt.Errorf("metadata has more than %d header lines", maxHeaders)
		}
		line, err := tr.ReadContinuedLine()
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("parse metadata: %w", err)
		}
		if line == "" {
			break
		}
		key, value, ok := strings.Cut(line, ":")
		if !ok || key == "" || strings.ContainsAny(key, " \t") {
			return nil, fmt.Errorf("parse metadata: line %d is not a header: %s", lines+1, strconv.Quote(truncate(line, 80)))
		}
		value = strings.TrimSpace(value)
		switch strings.ToLower(key) {
		case "name":
			if m.Name != "" {
				return nil, errors.New("parse metadata: two Name fields")
			}
			m.Name = value
		case "version":
			if m.Version != "" {
				return nil, errors.New("parse metadata: two Version fields")
			}
			m.Version = value
		case "requires-dist":
			m.RequiresDist = append(m.RequiresDist, value)
		case "provides-extra":
			m.ProvidesExtra = append(m.ProvidesExtra, value)
		}
		if errors.Is(err, io.EOF) {
			break
		}
	}
	if m.Name == "" || m.Version == "" {
		return nil, errors.New("parse metadata: no Name or no Version header")
	}
	return m, nil
}

// checkedMetadata parses data and checks that it describes the wheel w.
func checkedMetadata(data []byte, w WheelName) (*Metadata, error) {
	m, err := ParseMetadata(data)
	if err != nil {
		return nil, err
	}
	if NormalizeProject(m.Name) != w.Project || !SameVersion(m.Version, w.Version) {
		return nil, fmt.Errorf("the metadata names %s %s, not the wheel's %s %s; refusing it",
			strconv.Quote(truncate(m.Name, 60)), strconv.Quote(truncate(m.Version, 40)), w.Project, w.Version)
	}
	return m, nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// jsonCoreMetadata reads PEP 714's core-metadata value: true, false, or a
// map of hashes.
func jsonCoreMetadata(raw json.RawMessage) (bool, string) {
	s := strings.TrimSpace(string(raw))
	switch s {
	case "", "null", "false":
		return false, ""
	case "true":
		return true, ""
	}
	var hashes map[string]string
	if json.Unmarshal(raw, &hashes) != nil {
		return false, ""
	}
	return true, normalizeSHA256(hashes["sha256"])
}

// htmlCoreMetadata reads the data-core-metadata attribute: "true" or
// "sha256=<hex>"; absent (empty) means none.
func htmlCoreMetadata(v string) (bool, string) {
	v = strings.TrimSpace(v)
	if v == "" || v == "false" {
		return false, ""
	}
	if name, value, ok := strings.Cut(v, "="); ok {
		if name == "sha256" {
			return true, normalizeSHA256(value)
		}
		return true, ""
	}
	return true, ""
}
