package cudaenv_test

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// scripts/e2e-pypi.sh is not run by the test suite (it needs the real
// index), so nothing else notices when its steps are renumbered or a
// step's ONLY_/SKIP_ switch is renamed: its steps were written on several
// branches and renumbered at the merge. This holds its parts to each other:
// it parses, the steps at its top are numbered 1..N with each run under a
// step "(N…)" heading, and every ONLY_/SKIP_ switch it reads is in its
// usage lines, named there with the step the top gives it.
func TestE2EScriptStepsAgreeWithItsHeader(t *testing.T) {
	const path = "scripts/e2e-pypi.sh"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	src := string(data)
	if bash, err := exec.LookPath("bash"); err == nil {
		if out, err := exec.Command(bash, "-n", path).CombinedOutput(); err != nil {
			t.Errorf("bash -n %s: %v\n%s", path, err, out)
		}
	}

	// The header: "#   N. what it does", continued by "#      …" lines.
	header := map[int]string{}
	var order []int
	cur := 0
	for _, line := range strings.Split(src, "\n") {
		if !strings.HasPrefix(line, "#") {
			break
		}
		if m := regexp.MustCompile(`^#\s{1,3}(\d+)\.\s`).FindStringSubmatch(line); m != nil {
			cur, _ = strconv.Atoi(m[1])
			order = append(order, cur)
			header[cur] = line
			continue
		}
		if cur != 0 && regexp.MustCompile(`^#\s{4,}\S`).MatchString(line) {
			header[cur] += " " + strings.TrimSpace(strings.TrimPrefix(line, "#"))
		} else {
			cur = 0
		}
	}
	if len(order) == 0 {
		t.Fatalf("%s: no numbered steps at its top", path)
	}
	for i, n := range order {
		if n != i+1 {
			t.Errorf("%s: the steps at its top are numbered %v, want 1..%d in order", path, order, len(order))
			break
		}
	}

	// Each step is run under a heading step "(N)" or "(Na)" …
	ran := map[int]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s*step "\((\d+)[a-z]?\)`).FindAllStringSubmatch(src, -1) {
		n, _ := strconv.Atoi(m[1])
		if _, ok := header[n]; !ok {
			t.Errorf("%s: a step is headed (%s…), which the top does not describe", path, m[1])
		}
		ran[n] = true
	}
	for _, n := range order {
		if !ran[n] {
			t.Errorf("%s: step %d at the top has no step \"(%d…)\" heading", path, n, n)
		}
	}

	// … and every switch it reads is in the usage lines, where an ONLY_
	// switch names the step the top gives it.
	read := map[string]bool{}
	for _, m := range regexp.MustCompile(`\$\{((?:ONLY|SKIP)_[A-Z_]+):-\}`).FindAllStringSubmatch(src, -1) {
		read[m[1]] = true
	}
	usage := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^#\s+((?:ONLY|SKIP)_[A-Z_]+)=1 scripts/e2e-pypi\.sh\s+#\s*(.*)$`).FindAllStringSubmatch(src, -1) {
		usage[m[1]] = m[2]
	}
	for _, sw := range slices.Sorted(func(yield func(string) bool) {
		for k := range read {
			if !yield(k) {
				return
			}
		}
	}) {
		says, ok := usage[sw]
		if !ok {
			t.Errorf("%s reads %s, which its usage lines do not list", path, sw)
			continue
		}
		m := regexp.MustCompile(`^step (\d+) only`).FindStringSubmatch(says)
		if !strings.HasPrefix(sw, "ONLY_") || m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		if !strings.Contains(header[n], sw+"=1") {
			t.Errorf("%s: the usage line says %s=1 runs step %d, whose description at the top does not name it: %q", path, sw, n, header[n])
		}
	}
	for sw := range usage {
		if !read[sw] {
			t.Errorf("%s: its usage lines list %s, which it never reads", path, sw)
		}
	}
}
