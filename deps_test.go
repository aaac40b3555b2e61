package cudaenv_test

import (
	"os/exec"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/cudaenv/cudaenv"

// allowed is the import policy: which cudaenv packages each package may
// import (test files included). It is a statement of intent: change it
// when the design changes, never to make a build pass. Leaves import no
// cudaenv package; store and fetch never import each other; nothing
// imports cmd.
var allowed = map[string][]string{
	"cmd/cudaenv":      {"*"},
	"cmd/cudaenv-shim": {"internal/hookenv", "shims"}, // what the shims and the prompt hook run: small and quick to start

	// Leaves: pure logic and data, no cudaenv imports (compat's test
	// reads its own generator).
	"internal/version": {},
	"internal/dirs":    {},
	"internal/envdiff": {},
	"internal/config":  {},
	"internal/xz":      {},
	"shell":            {},
	"completions":      {},
	"compat":           {"compat/internal/gen"}, // its test checks the generated tables

	"internal/resolve":  {"internal/version"},
	"store":             {"internal/dirs", "internal/version"},
	"internal/hookenv":  {"internal/activate", "internal/detect", "internal/dirs", "internal/doctor", "internal/envdiff", "internal/resolve", "shell"},
	"internal/activate": {"internal/dirs", "internal/envdiff", "internal/resolve", "internal/version", "store"},
	"shims":             {"internal/activate", "internal/dirs", "internal/envdiff", "internal/resolve", "internal/version", "store"},

	"fetch":                                  {"fetch/fetchtest", "internal/version", "internal/xz"}, // its tests use the mirror
	"fetch/fetchtest":                        {"fetch"},
	"fetch/pypi":                             {"fetch", "fetch/pypi/internal/catalog", "fetch/pypi/pypitest", "internal/version"},
	"fetch/pypi/pypitest":                    {"fetch/pypi", "fetch/pypi/internal/catalog"},
	"fetch/pypi/internal/catalog":            {},
	"fetch/pypi/internal/catalog/gencatalog": {"fetch/pypi/internal/catalog"},

	"internal/detect": {"compat", "internal/version"},
	"internal/doctor": {"compat", "internal/detect", "internal/version"},

	"compat/internal/gen":           {},
	"compat/internal/gen/gencompat": {"compat/internal/gen"},
}

func TestImportsFollowThePolicy(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}} {{join .TestImports " "}} {{join .XTestImports " "}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(strings.TrimPrefix(fields[0], module), "/")
		if pkg == "" || strings.HasPrefix(pkg, "internal/tools") || strings.HasPrefix(pkg, "bench/") {
			continue
		}
		ok, known := allowed[pkg]
		if !known {
			t.Errorf("package %s is not in the import policy in deps_test.go; add it with the cudaenv packages it may import", pkg)
			continue
		}
		var bad []string
		for _, imp := range fields[1:] {
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			dep := strings.TrimPrefix(imp, module+"/")
			if dep == pkg || contains(ok, "*") || contains(ok, dep) {
				continue
			}
			if strings.HasPrefix(dep, "cmd/") {
				t.Errorf("%s imports %s: nothing may import cmd", pkg, dep)
				continue
			}
			bad = append(bad, dep)
		}
		sort.Strings(bad)
		for _, dep := range bad {
			t.Errorf("%s imports %s, which the policy does not allow", pkg, dep)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
