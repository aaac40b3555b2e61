package fetchtest

import "encoding/binary"

// Zip64End is a zip archive's data (its 22-byte end record, with no
// comment, last) with that end record replaced by a zip64 end record
// claiming entries entries in a directory of dirSize bytes (0: the real
// size), its locator, pointing at recordAt (0: where the record is), and
// an end record that sends readers to them: what a hostile index serves
// to make a reader size its list of entries from a lie.
func Zip64End(data []byte, entries, dirSize, recordAt uint64) []byte {
	le := binary.LittleEndian
	end := data[len(data)-22:]
	if dirSize == 0 {
		dirSize = uint64(le.Uint32(end[12:]))
	}
	dirOff := uint64(le.Uint32(end[16:]))
	out := append([]byte(nil), data[:len(data)-22]...)
	if recordAt == 0 {
		recordAt = uint64(len(out))
	}
	out = le.AppendUint32(out, 0x06064b50) // zip64 end of central directory
	out = le.AppendUint64(out, 44)
	out = le.AppendUint16(out, 45)
	out = le.AppendUint16(out, 45)
	out = le.AppendUint32(out, 0)
	out = le.AppendUint32(out, 0)
	out = le.AppendUint64(out, entries)
	out = le.AppendUint64(out, entries)
	out = le.AppendUint64(out, dirSize)
	out = le.AppendUint64(out, dirOff)
	out = le.AppendUint32(out, 0x07064b50) // its locator
	out = le.AppendUint32(out, 0)
	out = le.AppendUint64(out, recordAt)
	out = le.AppendUint32(out, 1)
	out = le.AppendUint32(out, 0x06054b50) // the end record, all markers
	out = le.AppendUint16(out, 0)
	out = le.AppendUint16(out, 0)
	out = le.AppendUint16(out, 0xffff)
	out = le.AppendUint16(out, 0xffff)
	out = le.AppendUint32(out, 0xffffffff)
	out = le.AppendUint32(out, 0xffffffff)
	return le.AppendUint16(out, 0)
}
