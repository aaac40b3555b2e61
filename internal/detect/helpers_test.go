package detect

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// result is what a fake command prints and whether it fails.
type result struct {
	out string
	err bool
}

// fakeRunner answers commands from a table keyed by "name arg1 arg2 ...",
// and records what was run. Unknown commands fail as "not found". It may
// be called from several goroutines at once, as a Runner is.
type fakeRunner struct {
	answers map[string]result
	mu      sync.Mutex
	ran     []string
}

func (f *fakeRunner) run(_ context.Context, name string, args ...string) ([]byte, error) {
	key := strings.Join(append([]string{name}, args...), " ")
	f.mu.Lock()
	f.ran = append(f.ran, key)
	f.mu.Unlock()
	r, ok := f.answers[key]
	if !ok {
		return nil, errors.New("exec: " + name + ": not found")
	}
	if r.err {
		return []byte(r.out), errors.New("exit status 2")
	}
	return []byte(r.out), nil
}

// fakeRoot writes files under a temp dir and returns it. Keys ending in "*"
// are made executable (the "*" is dropped); keys ending in "/" are dirs.
func fakeRoot(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, body := range files {
		mode := os.FileMode(0o644)
		if strings.HasSuffix(name, "*") {
			name, mode = strings.TrimSuffix(name, "*"), 0o755
		}
		p := filepath.Join(root, name)
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	return root
}
