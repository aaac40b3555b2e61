package fetch

import (
	"archive/zip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Bounds on a zip archive's directory (wheels, NVIDIA's Windows
// archives), checked before archive/zip reads it: archive/zip sizes its
// list of entries from the count the end record claims, so a hostile
// index serving a zip64 end record of 2^56 entries crashes it
// (makeslice) and one of 2^26 makes it allocate half a gigabyte. Real
// archives are far below: torch's wheel has about 15,000 entries and a
// zip directory under 2 MB.
const (
	MaxZipEntries   = 1 << 18
	MaxZipDirectory = 48 << 20 // bytes of central directory
	// MaxWheelSize is more than any wheel on any index (PyPI's largest,
	// torch's CUDA builds, are under 3 GB); a size above it, from an
	// index page or a server, is a lie.
	MaxWheelSize = 16 << 30
)

// ErrZipDirectory is what CheckZipEnd's errors wrap.
var ErrZipDirectory = errors.New("the zip directory")

const (
	eocdLen      = 22 // end of central directory record, without its comment
	eocd64LocLen = 20
	eocd64Len    = 56
	minEntryLen  = 46 // a central directory header with an empty name
)

// CheckZipEnd reads the end of central directory record of the zip
// archive r of size bytes, as archive/zip will (and its zip64 record when
// it points to one), and refuses an entry count or a directory size no
// real archive has, or a directory or zip64 record the record places
// outside the size bytes r holds. It reads at most the last 65 KiB.
func CheckZipEnd(r io.ReaderAt, size int64) error {
	if size < eocdLen {
		return fmt.Errorf("%w is missing: the file is %d bytes, too short to be a zip archive", ErrZipDirectory, size)
	}
	n := min(size, 65*1024) // archive/zip's window
	buf := make([]byte, n)
	if err := readAtFull(r, buf, size-n); err != nil {
		return err
	}
	i := findEnd(buf)
	if i < 0 {
		return fmt.Errorf("%w has no end record: not a zip archive", ErrZipDirectory)
	}
	endOff := size - n + int64(i) // where the directory ends, as archive/zip reckons it
	b := buf[i:]
	le := binary.LittleEndian
	records := uint64(le.Uint16(b[10:]))
	dirSize := uint64(le.Uint32(b[12:]))
	// The values archive/zip takes for a zip64 archive (its own test).
	if records == 0xffff || dirSize == 0xffff || le.Uint32(b[16:]) == 0xffffffff {
		if endOff >= eocd64LocLen {
			loc := make([]byte, eocd64LocLen)
			if err := readAtFull(r, loc, endOff-eocd64LocLen); err != nil {
				return err
			}
			if le.Uint32(loc) == 0x07064b50 && le.Uint32(loc[4:]) == 0 && le.Uint32(loc[16:]) == 1 {
				p := le.Uint64(loc[8:])
				if p > uint64(endOff-eocd64LocLen) || uint64(endOff-eocd64LocLen)-p < eocd64Len {
					return fmt.Errorf("%w's zip64 end record is claimed at byte %d, outside the %d bytes before its end record; refusing it", ErrZipDirectory, p, endOff-eocd64LocLen)
				}
				rec := make([]byte, eocd64Len)
				if err := readAtFull(r, rec, int64(p)); err != nil {
					return err
				}
				if le.Uint32(rec) != 0x06064b50 {
					return fmt.Errorf("%w has no zip64 end record where its locator says; refusing it", ErrZipDirectory)
				}
				endOff = int64(p)
				records, dirSize = le.Uint64(rec[32:]), le.Uint64(rec[40:])
			}
		}
	}
	switch {
	case records > MaxZipEntries:
		return fmt.Errorf("%w claims %d entries; no real archive has more than %d: refusing it", ErrZipDirectory, records, MaxZipEntries)
	case dirSize > MaxZipDirectory:
		return fmt.Errorf("%w claims %d bytes; no real archive's is more than %d: refusing it", ErrZipDirectory, dirSize, MaxZipDirectory)
	case dirSize > uint64(endOff):
		// archive/zip reads the directory from endOff-dirSize (dirOff
		// only says how much was put before the archive).
		return fmt.Errorf("%w claims %d bytes, more than the %d the archive has before its end record: refusing it", ErrZipDirectory, dirSize, endOff)
	case records*minEntryLen > dirSize:
		return fmt.Errorf("%w claims %d entries in %d bytes, fewer than they take: refusing it", ErrZipDirectory, records, dirSize)
	}
	return nil
}

// readAtFull fills b from off, through readers that answer in pieces.
func readAtFull(r io.ReaderAt, b []byte, off int64) error {
	_, err := io.ReadFull(io.NewSectionReader(r, off, int64(len(b))), b)
	return err
}

// findEnd is archive/zip's search for the end record: the last signature
// whose comment fits in b; -1 when there is none.
func findEnd(b []byte) int {
	for i := len(b) - eocdLen; i >= 0; i-- {
		if b[i] == 'P' && b[i+1] == 'K' && b[i+2] == 0x05 && b[i+3] == 0x06 {
			if n := int(b[i+eocdLen-2]) | int(b[i+eocdLen-1])<<8; n+eocdLen+i > len(b) {
				return -1
			}
			return i
		}
	}
	return -1
}

// OpenZip is zip.NewReader for an archive from outside: CheckZipEnd
// first, then the entries archive/zip found are counted again (it checks
// only the low 16 bits of the count against the end record).
func OpenZip(r io.ReaderAt, size int64) (*zip.Reader, error) {
	if err := CheckZipEnd(r, size); err != nil {
		return nil, err
	}
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return nil, err
	}
	if len(zr.File) > MaxZipEntries {
		return nil, fmt.Errorf("%w holds %d entries; no real archive has more than %d: refusing it", ErrZipDirectory, len(zr.File), MaxZipEntries)
	}
	return zr, nil
}
