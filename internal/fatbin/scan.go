package fatbin

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
)

// Scan lists the entries of every fat binary container in a stream (an
// ELF file being inflated from a wheel, whose section headers come last),
// finding containers by their magic and header and skipping payloads
// without keeping them. A magic that is not followed by a well-formed
// container and entry header is passed over.
func Scan(r io.Reader, lim Limits) ([]Entry, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	magic := binary.LittleEndian.AppendUint32(nil, Magic)
	var out []Entry
	containers := 0
	for {
		buf, err := br.Peek(1 << 20)
		if len(buf) < containerHeader+entryBase {
			if err == io.EOF || err == io.ErrUnexpectedEOF || err == nil {
				return out, nil
			}
			return out, err
		}
		i := bytes.Index(buf, magic)
		if i < 0 {
			// Keep the last bytes: a magic may straddle the boundary.
			if _, err := br.Discard(len(buf) - 3); err != nil {
				return out, err
			}
			continue
		}
		if _, err := br.Discard(i); err != nil {
			return out, err
		}
		h, err := br.Peek(containerHeader + entryBase)
		if err != nil {
			return out, nil
		}
		body, cerr := containerSize(h)
		if cerr != nil || !plausibleEntry(h[containerHeader:], body) {
			br.Discard(1)
			continue
		}
		if containers++; containers > lim.Containers {
			return out, fmt.Errorf("more than %d fatbin containers: %w", lim.Containers, ErrFormat)
		}
		br.Discard(containerHeader)
		if out, err = scanEntries(br, int64(body), out, lim); err != nil {
			return out, err
		}
	}
}

// plausibleEntry says whether h starts an entry that fits in body bytes.
func plausibleEntry(h []byte, body uint64) bool {
	kind := binary.LittleEndian.Uint16(h[0:])
	hsz := uint64(binary.LittleEndian.Uint32(h[4:]))
	payload := binary.LittleEndian.Uint64(h[8:])
	return (kind == kindPTX || kind == kindELF || kind == kindConcat) &&
		hsz >= entryBase && hsz <= maxEntryHeader && hsz <= body && payload <= body-hsz
}

// scanEntries reads body bytes of entries from br.
func scanEntries(br *bufio.Reader, body int64, out []Entry, lim Limits) ([]Entry, error) {
	buf := make([]byte, entryBase)
	for body > 0 {
		if body < entryBase {
			_, err := br.Discard(int(body))
			return out, err
		}
		if _, err := io.ReadFull(br, buf[:entryBase]); err != nil {
			return out, fmt.Errorf("fatbin entry: %w", err)
		}
		hsz := int64(binary.LittleEndian.Uint32(buf[4:]))
		payload := binary.LittleEndian.Uint64(buf[8:])
		if hsz < entryBase || hsz > maxEntryHeader || payload > uint64(body-hsz) {
			return out, fmt.Errorf("fatbin entry: header %d bytes, payload %d bytes, %d left: %w", hsz, payload, body, ErrFormat)
		}
		if int64(len(buf)) < hsz {
			nb := make([]byte, hsz)
			copy(nb, buf[:entryBase])
			buf = nb
		}
		if _, err := io.ReadFull(br, buf[entryBase:hsz]); err != nil {
			return out, fmt.Errorf("fatbin entry: %w", err)
		}
		var err error
		if out, err = appendEntry(out, buf[:hsz], lim); err != nil {
			return out, err
		}
		if err := discard(br, int64(payload)); err != nil {
			return out, fmt.Errorf("fatbin entry: %w", err)
		}
		body -= hsz + int64(payload)
	}
	return out, nil
}

func discard(br *bufio.Reader, n int64) error {
	for n > 0 {
		step := min(n, 1<<30)
		d, err := br.Discard(int(step))
		n -= int64(d)
		if err != nil {
			return err
		}
	}
	return nil
}
