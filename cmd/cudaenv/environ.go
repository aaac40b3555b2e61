package main

import (
	"sort"
	"strings"

	"github.com/cudaenv/cudaenv/internal/envdiff"
)

// environ renders an environment map as KEY=VALUE pairs, sorted.
func environ(vars envdiff.Env) []string {
	out := make([]string, 0, len(vars))
	for k, v := range vars {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

func containsSlash(s string) bool { return strings.ContainsAny(s, `/\`) }
