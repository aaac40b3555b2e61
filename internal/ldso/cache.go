package ldso

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// Cache is /etc/ld.so.cache as glibc's loader reads it: sonames to the
// paths ldconfig found them at, each for one kind of object.
type Cache struct {
	entries []cacheEntry
}

type cacheEntry struct {
	flags      int32
	key, value string
}

// Entry flags (glibc's elf/cache.h): the low byte is the format (3: a
// libc6 ELF), the next the architecture.
const (
	flagELFLibc6   = 0x0003
	flagTypeMask   = 0x00ff
	flagArchMask   = 0xff00
	FlagX8664Lib64 = 0x0300
	FlagAArch64    = 0x0a00
)

const (
	oldMagic = "ld.so-1.7.0"
	newMagic = "glibc-ld.so.cache1.1"
	// Bounds on a cache file: real ones hold a few thousand entries.
	MaxCacheBytes   = 64 << 20
	maxCacheEntries = 1 << 20
	maxCachePath    = 4096
)

var errCache = errors.New("not an ld.so.cache of a known format")

// ParseCache reads an ld.so.cache: glibc's format "glibc-ld.so.cache1.1",
// alone (ldconfig's default since glibc 2.32) or after the old
// "ld.so-1.7.0" table (the compat format). String offsets in the new
// format count from the start of its header.
func ParseCache(b []byte) (*Cache, error) {
	if len(b) > MaxCacheBytes {
		return nil, fmt.Errorf("ld.so.cache of %d bytes: %w", len(b), errCache)
	}
	start := 0
	if bytes.HasPrefix(b, []byte(oldMagic)) {
		if len(b) < 16 {
			return nil, errCache
		}
		n := uint64(binary.LittleEndian.Uint32(b[12:]))
		end := 16 + n*12
		if end > uint64(len(b)) {
			return nil, fmt.Errorf("old table of %d entries past the end: %w", n, errCache)
		}
		start = int((end + 7) &^ 7)
		if !bytes.HasPrefix(b[start:], []byte(newMagic)) {
			// Only the old format: glibc 2.32+ does not read it either.
			return nil, fmt.Errorf("old format only: %w", errCache)
		}
	}
	nb := b[start:]
	if !bytes.HasPrefix(nb, []byte(newMagic)) || len(nb) < 48 {
		return nil, errCache
	}
	n := uint64(binary.LittleEndian.Uint32(nb[20:]))
	if n > maxCacheEntries || 48+n*24 > uint64(len(nb)) {
		return nil, fmt.Errorf("%d entries past the end: %w", n, errCache)
	}
	str := func(off uint32) (string, bool) {
		if uint64(off) >= uint64(len(nb)) {
			return "", false
		}
		s := nb[off:]
		i := bytes.IndexByte(s[:min(len(s), maxCachePath)], 0)
		if i <= 0 {
			return "", false
		}
		return string(s[:i]), true
	}
	c := &Cache{entries: make([]cacheEntry, 0, n)}
	for i := range n {
		e := nb[48+i*24:]
		key, ok1 := str(binary.LittleEndian.Uint32(e[4:]))
		value, ok2 := str(binary.LittleEndian.Uint32(e[8:]))
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("entry %d: a name outside the file: %w", i, errCache)
		}
		c.entries = append(c.entries, cacheEntry{flags: int32(binary.LittleEndian.Uint32(e[0:])), key: key, value: value})
	}
	return c, nil
}

// Lookup is the path the cache gives for soname for objects of arch
// (FlagX8664Lib64, FlagAArch64): the first matching entry, as ldconfig
// sorts them.
func (c *Cache) Lookup(soname string, arch int32) (string, bool) {
	if c == nil {
		return "", false
	}
	for _, e := range c.entries {
		if e.key == soname && e.flags&flagTypeMask == flagELFLibc6 && e.flags&flagArchMask == arch {
			return e.value, true
		}
	}
	return "", false
}

// Len is the number of entries.
func (c *Cache) Len() int {
	if c == nil {
		return 0
	}
	return len(c.entries)
}
