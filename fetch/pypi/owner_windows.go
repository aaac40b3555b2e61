package pypi

import "io/fs"

// mine is false here: the cache of unpacked wheels is for Linux.
func mine(fs.FileInfo) bool { return false }

func device(fs.FileInfo) uint64 { return 0 }

const noFollow = 0
