package fetch

import (
	"github.com/cudaenv/cudaenv/internal/rootfs"

	"os"
	"strings"
	"sync"
	"sync/atomic"
)

// FailCacheWrites makes writes to cache files fail with err once n bytes
// have gone through (a full disk, a read-only remount); the returned
// function restores them. Tests using it must not run in parallel.
func FailCacheWrites(n int64, err error) (restore func()) {
	var written atomic.Int64
	cacheWrite = func(f *os.File, b []byte) (int, error) {
		if written.Add(int64(len(b))) > n {
			return 0, &os.PathError{Op: "write", Path: f.Name(), Err: err}
		}
		return f.Write(b)
	}
	return func() { cacheWrite = (*os.File).Write }
}

// FailCacheWritesOf makes writes to the cache file whose name holds sha
// fail with err, once wait has returned (the test's moment: other
// downloads under way); the returned function restores them.
func FailCacheWritesOf(sha string, wait func(), err error) (restore func()) {
	cacheWrite = func(f *os.File, b []byte) (int, error) {
		if strings.Contains(f.Name(), sha) {
			wait()
			return 0, &os.PathError{Op: "write", Path: f.Name(), Err: err}
		}
		return f.Write(b)
	}
	return func() { cacheWrite = (*os.File).Write }
}

// OnFirstCacheWriteOf runs f once, at the first write to the cache file
// whose name holds sha (a download under way: its part file made, its
// lock held), then lets every write through; the returned function
// restores them.
func OnFirstCacheWriteOf(sha string, f func()) (restore func()) {
	var once sync.Once
	cacheWrite = func(file *os.File, b []byte) (int, error) {
		if strings.Contains(file.Name(), sha) {
			once.Do(f)
		}
		return file.Write(b)
	}
	return func() { cacheWrite = (*os.File).Write }
}

// BeforeExtract runs f with each archive's path just before it is
// extracted; the returned function restores the hook.
func BeforeExtract(f func(path string)) (restore func()) {
	beforeExtract = f
	return func() { beforeExtract = func(string) {} }
}

// SizeText is rootfs.SizeText, for tests that check a message.
var SizeText = rootfs.SizeText

// CountUnpacks counts the archives Fetch opens to unpack until restore is
// called. Tests using it must not run in parallel.
func CountUnpacks() (count func() int, restore func()) {
	var n atomic.Int64
	unpackHook = func(*Artifact) { n.Add(1) }
	return func() int { return int(n.Load()) }, func() { unpackHook = nil }
}
