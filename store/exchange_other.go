//go:build !linux

package store

// exchange: no atomic swap here; Install sets the old tree aside, then
// renames the new one in.
func exchange(a, b string) error { return errNoExchange }
