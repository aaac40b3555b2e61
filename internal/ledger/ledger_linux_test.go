package ledger

import (
	"crypto/sha256"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

func stateOf(t *testing.T, p string, sum [32]byte) State {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	s, ok := StateOf(fi, sum)
	if !ok {
		t.Fatal("no state")
	}
	return s
}

func TestARecordedStateIsVouchedForByEveryReader(t *testing.T) {
	cache := t.TempDir()
	f := filepath.Join(t.TempDir(), "lib.so")
	if err := os.WriteFile(f, []byte("elf"), 0o444); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("elf"))
	s := stateOf(t, f, sum)
	l := Open(cache)
	if l.Vouches(s) {
		t.Fatal("an empty ledger vouches")
	}
	if err := l.Record([]State{s}); err != nil {
		t.Fatal(err)
	}
	if !l.Vouches(s) || !Open(cache).Vouches(s) {
		t.Fatal("a recorded state is not vouched for")
	}
	other := s
	other.SHA256[0] ^= 1
	if Open(cache).Vouches(other) {
		t.Error("vouched for the state with another sum")
	}
	later := s
	later.Ctime++
	if Open(cache).Vouches(later) {
		t.Error("vouched for another ctime")
	}
	// A reader that read the ledger before sees what is appended after,
	// once a second has passed (it reads the file at most that often).
	r := Open(cache)
	r.Vouches(s)
	if err := l.Record([]State{later}); err != nil {
		t.Fatal(err)
	}
	clock = func() time.Time { return time.Now().Add(2 * time.Second) }
	defer func() { clock = time.Now }()
	if !r.Vouches(later) || r.Vouches(s) {
		t.Error("an earlier reader missed the newer record")
	}
	var nilLedger *Ledger
	if nilLedger.Vouches(s) || nilLedger.Record([]State{s}) != nil {
		t.Error("a nil ledger holds something")
	}
}

// Removing one name of a shared file changes its ctime; the ledger carries
// the state it held forward, and only that one.
func TestRemovingATreeCarriesTheStatesOfSharedFiles(t *testing.T) {
	cache := t.TempDir()
	dir := t.TempDir()
	kept := filepath.Join(dir, "cache-file")
	untracked := filepath.Join(dir, "other-file")
	for _, p := range []string{kept, untracked} {
		if err := os.WriteFile(p, []byte("elf"), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	tree := filepath.Join(dir, "store", "12.4.1")
	if err := os.MkdirAll(filepath.Join(tree, "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{kept, untracked} {
		if err := os.Link(p, filepath.Join(tree, "lib", filepath.Base(p))); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(tree, "own"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("elf"))
	l := Open(cache)
	if err := l.Record([]State{stateOf(t, kept, sum)}); err != nil {
		t.Fatal(err)
	}
	before := stateOf(t, kept, sum)
	waitForTick(t, before.Ctime)
	if err := l.Remove(tree); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(tree); !os.IsNotExist(err) {
		t.Fatalf("the tree is still there: %v", err)
	}
	after := stateOf(t, kept, sum)
	if after.Ctime == before.Ctime {
		t.Fatal("the ctime did not change: the test proves nothing")
	}
	if !Open(cache).Vouches(after) {
		t.Error("the shared file's new state is not vouched for")
	}
	if Open(cache).Vouches(stateOf(t, untracked, sum)) {
		t.Error("a file the ledger never held is vouched for")
	}
}

func TestAnotherUsersLedgerIsNeitherReadNorWritten(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to give the ledger to another user")
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Skip("no user nobody")
	}
	uid, _ := strconv.Atoi(nobody.Uid)
	cache := t.TempDir()
	f := filepath.Join(t.TempDir(), "x")
	os.WriteFile(f, []byte("x"), 0o444)
	s := stateOf(t, f, sha256.Sum256([]byte("x")))
	if err := Open(cache).Record([]State{s}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(cache, Folder), filepath.Join(cache, Folder, recordsName)} {
		if err := os.Chown(p, uid, -1); err != nil {
			t.Fatal(err)
		}
	}
	if Open(cache).Vouches(s) {
		t.Error("another user's ledger vouches")
	}
	for _, p := range []string{filepath.Join(cache, Folder), filepath.Join(cache, Folder, recordsName)} {
		os.Chown(p, 0, -1)
	}
	os.Chmod(filepath.Join(cache, Folder, recordsName), 0o666)
	if Open(cache).Vouches(s) {
		t.Error("a ledger others may write vouches")
	}
}

func TestTheLedgerIsCompactedAsItGrows(t *testing.T) {
	cache := t.TempDir()
	l := Open(cache)
	s := State{Dev: 1, Ino: 2, Size: 3}
	for i := range 20000 {
		s.Ctime = int64(i)
		if err := l.Record([]State{s}); err != nil {
			t.Fatal(err)
		}
	}
	fi, err := os.Stat(filepath.Join(cache, Folder, recordsName))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > 2<<20 {
		t.Errorf("20000 records of one file take %d bytes", fi.Size())
	}
	if !Open(cache).Vouches(s) {
		t.Error("the last record was lost")
	}
}

func TestStoresAreRememberedOnce(t *testing.T) {
	l := Open(t.TempDir())
	for _, r := range []string{"/a/store", "/b/store with space", "/a/store"} {
		if err := l.AddStore(r); err != nil {
			t.Fatal(err)
		}
	}
	if got := l.Stores(); len(got) != 2 {
		t.Errorf("stores = %q", got)
	}
}

// waitForTick waits until a file made now gets a later ctime than ctime.
func waitForTick(t *testing.T, ctime int64) {
	t.Helper()
	probe := filepath.Join(t.TempDir(), "probe")
	for i := 0; i < 5000; i++ {
		os.WriteFile(probe, nil, 0o644)
		fi, _ := os.Lstat(probe)
		if fi.Sys().(*syscall.Stat_t).Ctim.Nano() > ctime {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("the clock did not move")
}
