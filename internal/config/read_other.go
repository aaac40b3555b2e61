//go:build !unix

package config

const openNoWait = 0
