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
	"cmd/cudaenv-shim": {"internal/hookenv", "internal/query", "internal/termsafe", "internal/testwait", "shims"}, // what the shims, the prompt hook and the shell function's read-only commands run: small and quick to start (testwait: its tests only)

	// Leaves: pure logic and data, no cudaenv imports (compat's test
	// reads its own generator).
	"internal/version":    {},
	"internal/envdiff":    {},
	"internal/config":     {},
	"internal/export":     {},
	"internal/each":       {},
	"internal/modulefile": {"internal/activate", "internal/atomicfile", "internal/envdiff", "internal/version", "store"},
	"internal/atomicfile": {},
	"internal/bundle":     {},
	"shell":               {},
	"completions":         {},
	"compat":              {"compat/internal/gen"}, // its test checks the generated tables
	"internal/termsafe":   {},
	"internal/rootfs":     {},                  // the rooted writer fetch and store share
	"internal/ledger":     {},                  // the last checked state of files installs share by hard link
	"internal/filelist":   {"internal/ledger"}, // every file of an installed tree, and the checks against it
	"internal/linkstub":   {"internal/rootfs"}, // link stubs written into a tree through its rooted writer
	"internal/cmakepkg":   {"internal/rootfs"}, // version.json and CMake packages written the same way
	"internal/xz":         {},
	"internal/testwait":   {}, // tests' waits for an event, bounded by go test -timeout
	"internal/testfs":     {}, // tests' file systems out of inodes
	"internal/inflate":    {}, // wheels' DEFLATE, compress/flate's output faster
	"internal/fatbin":     {}, // what .nv_fatbin sections carry, from entry headers
	"internal/ldso":       {}, // where the dynamic loader finds a library

	"internal/dirs":     {"internal/config"}, // system_root from the settings file
	"internal/resolve":  {"internal/lockfile", "internal/testwait", "internal/version"},
	"internal/lockfile": {"internal/version"}, // .cuda-version.lock: decoded strictly, encoded byte-stable
	"store":             {"internal/dirs", "internal/filelist", "internal/ledger", "internal/rootfs", "internal/termsafe", "internal/testfs", "internal/testwait", "internal/version"},
	"internal/hookenv":  {"internal/activate", "internal/detect", "internal/dirs", "internal/doctor", "internal/envdiff", "internal/resolve", "internal/termsafe", "shell"},
	"internal/query":    {"internal/activate", "internal/dirs", "internal/envdiff", "internal/export", "internal/hookenv", "internal/resolve", "internal/rootfs", "internal/termsafe", "shell", "shims", "store"}, // the read-only commands both binaries answer
	"internal/activate": {"internal/dirs", "internal/envdiff", "internal/resolve", "internal/version", "store"},
	"shims":             {"internal/activate", "internal/dirs", "internal/envdiff", "internal/resolve", "internal/termsafe", "internal/version", "store"},

	"fetch":                                  {"fetch/fetchtest", "internal/atomicfile", "internal/filelist", "internal/ledger", "internal/rootfs", "internal/testwait", "internal/version", "internal/xz"}, // its tests use the mirror
	"fetch/fetchtest":                        {"fetch"},
	"fetch/pypi":                             {"fetch", "fetch/pypi/internal/catalog", "fetch/pypi/pypitest", "internal/filelist", "internal/inflate", "internal/ledger", "internal/rootfs", "internal/termsafe", "internal/testwait", "internal/version"},
	"fetch/pypi/pypitest":                    {"fetch/fetchtest", "fetch/pypi", "fetch/pypi/internal/catalog"}, // fetchtest: hostile zip64 end records
	"fetch/pypi/internal/catalog":            {},
	"fetch/pypi/internal/catalog/gencatalog": {"fetch/pypi/internal/catalog"},

	// The one place fetch and store meet: planning and carrying out installs.
	"internal/install": {"compat", "fetch", "fetch/fetchtest", "fetch/pypi", "fetch/pypi/pypitest", "internal/activate", "internal/atomicfile", "internal/bundle", "internal/cmakepkg", "internal/dirs", "internal/envpins", "internal/filelist", "internal/linkstub", "internal/lockfile", "internal/resolve", "internal/rootfs", "internal/testwait", "internal/version", "store"},

	// Container images: what install plans and unpacks, one layer per component, the activation's Env.
	"internal/image": {"fetch", "fetch/fetchtest", "fetch/pypi/pypitest", "internal/activate", "internal/atomicfile", "internal/dirs", "internal/envdiff", "internal/filelist", "internal/install", "internal/resolve", "internal/rootfs", "internal/testwait", "internal/version", "store"},

	"internal/venv":          {"internal/venv/venvtest"},                           // the one bounded reader of Python environments' files (venvtest: its tests' torch trees)
	"internal/venv/venvtest": {},                                                   // torch's files as its wheels lay them out, for tests
	"internal/envpins":       {"fetch/pypi", "internal/termsafe", "internal/venv"}, // --for PATH: a venv's or a lock's NVIDIA wheels as exact requirements
	"internal/detect":        {"compat", "internal/linkstub", "internal/venv", "internal/version"},
	"internal/cudabin":       {"compat", "internal/fatbin", "internal/inflate", "internal/ldso", "internal/venv", "internal/venv/venvtest"}, // venv: a framework's Python files
	"internal/doctor":        {"compat", "internal/detect", "internal/termsafe", "internal/version"},

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
		if pkg == "" || strings.HasPrefix(pkg, "bench/") {
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

// cmdReachesOnlyThrough are packages whose work cmd/cudaenv's code (its
// tests aside: they start the local mirrors) asks of another package: cmd
// parses flags, calls one package function per command and renders.
var cmdReachesOnlyThrough = map[string]string{
	"fetch":      "internal/install",
	"fetch/pypi": "internal/install",
}

func TestCmdIsWiring(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Imports " "}}`, "./cmd/cudaenv").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, imp := range strings.Fields(string(out)) {
		dep := strings.TrimPrefix(imp, module+"/")
		if via, ok := cmdReachesOnlyThrough[dep]; ok {
			t.Errorf("cmd/cudaenv imports %s; go through %s instead", dep, via)
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
