// Package ledger records the last state cudaenv checked of the files that
// installs share by hard link (a file of the cache of unpacked trees and
// its names in one or more stores), so that a change cudaenv made itself
// is told from one made by someone else.
//
// A hard link, and the removal of one, changes the file's ctime, which is
// also what a chmod and a write change: a store's fingerprint of a shared
// file goes stale whenever another store links or drops the same file.
// Every such operation cudaenv makes ends with the file's new state
// written here (Record, or Remove for a tree being deleted), keyed by
// device and inode, with the sha256 its content was checked to have; a
// fingerprint that differs only in its ctime is vouched for when the
// ledger holds the file's state exactly as it is now. A state is carried
// forward only from one the ledger already held: a change made by anyone
// else breaks the chain, and the file is hashed again before it is
// believed.
//
// The ledger is one append-only file of fixed-size records in the
// download cache (<cache>/ledger/records), written under a lock; the last
// record of an inode wins. It is this user's: one that another user owns,
// or that others may write, is never read or written.
package ledger

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Folder is the ledger's folder in the download cache.
const Folder = "ledger"

const (
	recordsName = "records"
	lockName    = "lock"
	storesName  = "stores"
	magic       = "cudaenv-ledger1\n"
	recordSize  = 80
	// maxRecords bounds what is read: 8 MiB of records is every file of
	// about a hundred toolkits; past twice that the file is compacted.
	maxRecords = 1 << 20
)

// State is a file's state as a fingerprint sees it, with the sha256 of
// the content it was checked to have.
type State struct {
	Dev, Ino uint64
	Size     int64
	Mtime    int64 // nanoseconds
	Ctime    int64
	Mode     uint32 // st_mode: type and permissions
	SHA256   [sha256.Size]byte
}

type key struct{ dev, ino uint64 }

func (s State) key() key { return key{s.Dev, s.Ino} }

// Ledger is the ledger of one download cache. Its methods are safe for
// concurrent use, and a nil *Ledger holds nothing and records nothing.
type Ledger struct {
	dir string

	mu     sync.Mutex
	loaded bool
	usable bool
	ino    uint64 // the records file read, and how far
	off    int64
	recs   map[key]State
	read   time.Time // when the file was last read for Vouches
}

// clock is time.Now (tests move it).
var clock = time.Now

// Open is the ledger of the download cache cacheDir; nothing is read
// until it is asked. An empty cacheDir gives nil.
func Open(cacheDir string) *Ledger {
	if cacheDir == "" {
		return nil
	}
	return &Ledger{dir: filepath.Join(cacheDir, Folder)}
}

// Vouches reports whether the ledger holds s exactly: the file has not
// changed since cudaenv last checked it, and its content then had
// s.SHA256.
func (l *Ledger) Vouches(s State) bool {
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	// Read again at most once a second: an install asks for thousands of
	// files, and what other processes append meanwhile only costs a hash.
	if now := clock(); !l.loaded || now.Sub(l.read) > time.Second {
		l.refresh()
		l.read = now
	}
	r, ok := l.recs[s.key()]
	return ok && r == s
}

// Record writes states (files whose content cudaenv has just checked, or
// just linked from a checked file) into the ledger.
func (l *Ledger) Record(states []State) error {
	if l == nil || len(states) == 0 {
		return nil
	}
	unlock, err := l.lock()
	if err != nil {
		return err
	}
	defer unlock()
	return l.append(states)
}

// append writes states under the lock.
func (l *Ledger) append(states []State) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refresh()
	if !l.usable {
		return nil
	}
	p := filepath.Join(l.dir, recordsName)
	// Compacted once it is twice what it holds: every reinstall appends
	// its files' states again, and a reader reads the whole file.
	if len(l.recs)+len(states) > maxRecords || l.off > 2*int64(len(l.recs)+len(states))*recordSize+(64<<10) {
		return l.compact(states)
	}
	f, err := openOwn(p, os.O_WRONLY|os.O_APPEND)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, 0, len(states)*recordSize)
	for _, s := range states {
		buf = appendRecord(buf, s)
	}
	if _, err := f.Write(buf); err != nil {
		return err
	}
	for _, s := range states {
		l.recs[s.key()] = s
	}
	l.off += int64(len(buf))
	return nil
}

// compact rewrites the records file with the last record of each inode
// and states, dropping the oldest when there are too many.
func (l *Ledger) compact(states []State) error {
	for _, s := range states {
		l.recs[s.key()] = s
	}
	all := make([]State, 0, len(l.recs))
	for _, s := range l.recs {
		all = append(all, s)
	}
	if len(all) > maxRecords/2 {
		// Forgetting a state only costs a hash the next time it is asked.
		all = all[len(all)-maxRecords/2:]
	}
	buf := append(make([]byte, 0, len(magic)+len(all)*recordSize), magic...)
	for _, s := range all {
		buf = appendRecord(buf, s)
	}
	tmp, err := os.CreateTemp(l.dir, ".records-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(buf)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr, os.Chmod(tmp.Name(), 0o644)); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), filepath.Join(l.dir, recordsName)); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	l.recs = map[key]State{}
	for _, s := range all {
		l.recs[s.key()] = s
	}
	if fi, err := os.Lstat(filepath.Join(l.dir, recordsName)); err == nil {
		l.ino, l.off = inode(fi), fi.Size()
	}
	return nil
}

// refresh reads what was appended since the last read (all of it when
// the file was replaced). Called with l.mu held.
func (l *Ledger) refresh() {
	if !l.loaded {
		l.loaded = true
		l.usable = trusted(l.dir, true)
		l.recs = map[key]State{}
	}
	if !l.usable {
		return
	}
	f, err := openOwn(filepath.Join(l.dir, recordsName), os.O_RDONLY)
	if err != nil {
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return
	}
	if inode(fi) != l.ino || fi.Size() < l.off {
		l.ino, l.off, l.recs = inode(fi), 0, map[key]State{}
	}
	if fi.Size() == l.off {
		return
	}
	start := l.off
	if start == 0 {
		head := make([]byte, len(magic))
		if _, err := io.ReadFull(f, head); err != nil || string(head) != magic {
			return
		}
		start = int64(len(magic))
	}
	n := (fi.Size() - start) / recordSize
	if n > maxRecords*2 {
		n = maxRecords * 2
	}
	buf := make([]byte, n*recordSize)
	if _, err := f.ReadAt(buf, start); err != nil && !errors.Is(err, io.EOF) {
		return
	}
	for i := int64(0); i < n; i++ {
		s := readRecord(buf[i*recordSize : (i+1)*recordSize])
		l.recs[s.key()] = s
	}
	l.off = start + n*recordSize
}

func appendRecord(b []byte, s State) []byte {
	b = binary.LittleEndian.AppendUint64(b, s.Dev)
	b = binary.LittleEndian.AppendUint64(b, s.Ino)
	b = binary.LittleEndian.AppendUint64(b, uint64(s.Size))
	b = binary.LittleEndian.AppendUint64(b, uint64(s.Mtime))
	b = binary.LittleEndian.AppendUint64(b, uint64(s.Ctime))
	b = binary.LittleEndian.AppendUint32(b, s.Mode)
	b = binary.LittleEndian.AppendUint32(b, 0)
	return append(b, s.SHA256[:]...)
}

func readRecord(b []byte) State {
	var s State
	s.Dev = binary.LittleEndian.Uint64(b[0:])
	s.Ino = binary.LittleEndian.Uint64(b[8:])
	s.Size = int64(binary.LittleEndian.Uint64(b[16:]))
	s.Mtime = int64(binary.LittleEndian.Uint64(b[24:]))
	s.Ctime = int64(binary.LittleEndian.Uint64(b[32:]))
	s.Mode = binary.LittleEndian.Uint32(b[40:])
	copy(s.SHA256[:], b[48:80])
	return s
}

// lock takes the ledger's lock, making its folder and files first; a
// ledger that is not this user's is not locked (and then not written:
// refresh finds it unusable).
func (l *Ledger) lock() (func(), error) {
	if err := os.MkdirAll(l.dir, 0o755); err != nil {
		return nil, err
	}
	if !trusted(l.dir, false) {
		return func() {}, nil
	}
	f, err := openOwn(filepath.Join(l.dir, lockName), os.O_RDWR|os.O_CREATE)
	if err != nil {
		return nil, err
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, err
	}
	p := filepath.Join(l.dir, recordsName)
	if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
		if err := os.WriteFile(p, []byte(magic), 0o644); err != nil {
			unlockFile(f)
			f.Close()
			return nil, err
		}
	}
	l.mu.Lock()
	if !l.usable {
		l.loaded = false // made just now: read it again
	}
	l.mu.Unlock()
	return func() { unlockFile(f); f.Close() }, nil
}

// AddStore remembers a store folder whose entries hold files shared with
// this cache, so that a change to one of them can name the installs of
// other stores it also changed.
func (l *Ledger) AddStore(root string) error {
	if l == nil || root == "" {
		return nil
	}
	sum := sha256.Sum256([]byte(root))
	dir := filepath.Join(l.dir, storesName)
	p := filepath.Join(dir, hex.EncodeToString(sum[:8]))
	if b, err := readOwn(p); err == nil && string(b) == root {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if !trusted(l.dir, false) || !trusted(dir, false) {
		return nil
	}
	tmp, err := os.CreateTemp(dir, ".store-*")
	if err != nil {
		return err
	}
	_, werr := tmp.WriteString(root)
	if err := errors.Join(werr, tmp.Close(), os.Chmod(tmp.Name(), 0o644)); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}

// Stores are the store folders AddStore remembered (this user's records
// only), each once.
func (l *Ledger) Stores() []string {
	if l == nil || !trusted(l.dir, true) {
		return nil
	}
	dir := filepath.Join(l.dir, storesName)
	if !trusted(dir, true) {
		return nil
	}
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, de := range des {
		if de.Name()[0] == '.' {
			continue
		}
		b, err := readOwn(filepath.Join(dir, de.Name()))
		if err != nil || len(b) == 0 || len(b) > 4096 || bytes.ContainsAny(b, "\x00\n") || !filepath.IsAbs(string(b)) {
			continue
		}
		out = append(out, string(b))
	}
	return out
}

// readOwn reads a small file of this user's that only this user can
// write.
func readOwn(p string) ([]byte, error) {
	f, err := openOwn(p, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, 8192))
}
