package atomicfile

import "io/fs"

// On Windows a folder's files are the user's unless an admin shares it;
// age alone decides.
func ownedByMe(fs.FileInfo) bool { return true }
