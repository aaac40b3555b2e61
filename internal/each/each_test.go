package each

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

func sh(t *testing.T, label, script string) Run {
	t.Helper()
	p, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	return Run{Label: label, Path: p, Args: []string{"sh", "-c", script}, Env: []string{"V=" + label}}
}

func TestEachRunEndsWithItsOwnStatusInOrder(t *testing.T) {
	for _, jobs := range []int{1, 3} {
		var out, errOut bytes.Buffer
		runs := []Run{sh(t, "a", `echo "hi $V"`), sh(t, "b", "exit 3"), {Label: "c", Args: []string{"nope"}, NotFound: errors.New("nope: not in CUDA c")}}
		res := All(context.Background(), runs, Options{Jobs: jobs, LogDir: t.TempDir(), Stdout: &out, Stderr: &errOut})
		codes := []int{res[0].Code, res[1].Code, res[2].Code}
		if codes[0] != 0 || codes[1] != 3 || codes[2] != 127 {
			t.Errorf("jobs %d: codes %v, want [0 3 127]", jobs, codes)
		}
		if res[0].Failed() || !res[1].Failed() || !res[2].Failed() {
			t.Errorf("jobs %d: failed flags wrong: %+v", jobs, res)
		}
		want := "hi a\n"
		if jobs > 1 {
			want = "[a] hi a\n"
			if res[0].Log == "" {
				t.Errorf("jobs %d: no log kept", jobs)
			}
		}
		if !strings.Contains(out.String(), want) {
			t.Errorf("jobs %d: output %q lacks %q", jobs, out.String(), want)
		}
	}
}

func TestAParallelRunsOutputIsNotInterleaved(t *testing.T) {
	var out bytes.Buffer
	runs := []Run{sh(t, "x", "for i in 1 2 3; do echo x$i; sleep 0.05; done"), sh(t, "y", "for i in 1 2 3; do echo y$i; sleep 0.05; done")}
	All(context.Background(), runs, Options{Jobs: 2, LogDir: t.TempDir(), Stdout: &out, Stderr: &bytes.Buffer{}})
	text := out.String()
	for _, label := range []string{"x", "y"} {
		block := "[" + label + "] " + label + "1\n[" + label + "] " + label + "2\n[" + label + "] " + label + "3\n"
		if !strings.Contains(text, block) {
			t.Errorf("output of %s not shown whole:\n%s", label, text)
		}
	}
}

// The interrupt comes once the first run has said it started; that run,
// left alone, would end well (exit 0).
func TestCancellingStopsTheRunningOneAndStartsNoMore(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := &watchWriter{seen: "started", fire: cancel}
	res := All(ctx, []Run{sh(t, "a", "echo started; sleep 120"), sh(t, "b", "true")}, Options{Jobs: 1, Stdout: started, Stderr: &bytes.Buffer{}})
	if !res[0].Started || res[0].Code == 0 {
		t.Errorf("interrupted run: %+v", res[0])
	}
	if res[1].Started {
		t.Errorf("a run started after the interrupt: %+v", res[1])
	}
}

// watchWriter runs fire once what it was written holds seen.
type watchWriter struct {
	mu   sync.Mutex
	b    bytes.Buffer
	seen string
	fire func()
}

func (w *watchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, _ := w.b.Write(p)
	if w.fire != nil && strings.Contains(w.b.String(), w.seen) {
		w.fire()
		w.fire = nil
	}
	return n, nil
}
