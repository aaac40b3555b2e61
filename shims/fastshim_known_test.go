package shims

import (
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var updateKnown = flag.Bool("update", false, "rewrite fastshim/known.h from commands.txt")

// knownHeader is fastshim/known.h as commands.txt makes it: the C fast
// shim's copy of Known, exact names and prefixes (the entries ending in *).
func knownHeader() string {
	var exact, prefix []string
	for _, line := range strings.Split(knownCommands, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		entry := strings.Fields(line)[0]
		if p, ok := strings.CutSuffix(entry, "*"); ok {
			prefix = append(prefix, p)
		} else {
			exact = append(exact, entry)
		}
	}
	list := func(name string, names []string) string {
		var b strings.Builder
		b.WriteString("static const char *const " + name + "[] = {\n")
		for _, n := range names {
			b.WriteString("\t" + strconv.Quote(n) + ",\n")
		}
		b.WriteString("\tNULL,\n};\n")
		return b.String()
	}
	return "/* Generated from ../commands.txt by go test ./shims -run TestFastShimKnownList -update; do not edit. */\n" +
		list("known_exact", exact) + list("known_prefix", prefix)
}

// The C fast shim knows the same commands as Known.
func TestFastShimKnownList(t *testing.T) {
	path := filepath.Join("fastshim", "known.h")
	want := knownHeader()
	if *updateKnown {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("%s is not what commands.txt makes; run: go test ./shims -run TestFastShimKnownList -update", path)
	}
	if !strings.Contains(want, `"nvcc",`) || !strings.Contains(want, `"nsight",`) {
		t.Errorf("the header lacks nvcc or the nsight prefix:\n%s", want)
	}
}
