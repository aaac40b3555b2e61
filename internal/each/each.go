// Package each runs one command once per CUDA version, each run in its
// own prepared environment: one after another with the output passed
// through, or several at a time with each run's output kept in a log and
// shown, whole and prefixed, when the run ends. It stops starting runs
// when its context is cancelled (Ctrl-C) and interrupts the running ones.
package each

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Run is one prepared run.
type Run struct {
	Label string   // the version, e.g. "12.4.1"
	Path  string   // the program; empty: not found (NotFound says why)
	Args  []string // argv, argv[0] included
	Env   []string
	Dir   string
	// NotFound is the error for a program missing from this version.
	NotFound error
}

// Result is how one run ended.
type Result struct {
	Label    string
	Code     int // exit status; 127 not found, 126 could not start
	Err      error
	Started  bool // false: not started, because of an interrupt
	Duration time.Duration
	Log      string // with Jobs > 1: the file holding the run's output
}

// Failed reports whether the run did not succeed.
func (r Result) Failed() bool { return !r.Started || r.Code != 0 }

// Options say how to run.
type Options struct {
	Jobs   int       // runs at a time; ≤ 1: one after another
	LogDir string    // with Jobs > 1: where each run's log goes
	Stdout io.Writer // sequential output, and finished runs' logs
	Stderr io.Writer // headers and sequential error output
	// Grace is how long an interrupted run has to exit before it is
	// killed.
	Grace time.Duration
}

// All runs each of runs and returns their results in the same order.
func All(ctx context.Context, runs []Run, opt Options) []Result {
	results := make([]Result, len(runs))
	for i, r := range runs {
		results[i] = Result{Label: r.Label}
	}
	if opt.Jobs <= 1 {
		for i, r := range runs {
			if ctx.Err() != nil {
				break
			}
			fmt.Fprintf(opt.Stderr, "==> %s: %s\n", r.Label, strings.Join(r.Args, " "))
			results[i] = runOne(ctx, r, opt.Stdout, opt.Stderr, opt.Grace)
		}
		return results
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex // one finished log printed at a time
		sema = make(chan struct{}, opt.Jobs)
	)
	for i, r := range runs {
		select {
		case sema <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func(i int, r Run) {
			defer wg.Done()
			defer func() { <-sema }()
			log := filepath.Join(opt.LogDir, safeName(r.Label)+".log")
			f, err := os.Create(log)
			if err != nil {
				results[i] = Result{Label: r.Label, Started: true, Code: 126, Err: err}
				return
			}
			res := runOne(ctx, r, f, f, opt.Grace)
			f.Close()
			res.Log = log
			results[i] = res
			mu.Lock()
			defer mu.Unlock()
			showLog(opt.Stdout, r.Label, log)
		}(i, r)
	}
	wg.Wait()
	return results
}

func runOne(ctx context.Context, r Run, stdout, stderr io.Writer, grace time.Duration) Result {
	res := Result{Label: r.Label, Started: true}
	if r.Path == "" {
		res.Code, res.Err = 127, r.NotFound
		if res.Err == nil {
			res.Err = errors.New(r.Args[0] + ": command not found")
		}
		fmt.Fprintf(stderr, "cudaenv: exec %s: %v\n", r.Label, res.Err)
		return res
	}
	cmd := exec.CommandContext(ctx, r.Path, r.Args[1:]...)
	cmd.Args = r.Args
	cmd.Env, cmd.Dir = r.Env, r.Dir
	cmd.Stdin = nil
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// Interrupted: ask the run's whole process group, as Ctrl-C does, then
	// kill after the grace.
	interruptible(cmd)
	cmd.WaitDelay = grace
	if cmd.WaitDelay <= 0 {
		cmd.WaitDelay = 5 * time.Second
	}
	start := time.Now()
	err := cmd.Run()
	res.Duration = time.Since(start)
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		res.Code = exit.ExitCode()
		if res.Code < 0 { // killed by a signal
			res.Code = 128 + 2
		}
	default:
		res.Code, res.Err = 126, err
	}
	return res
}

// showLog copies a finished run's log to w, each line prefixed with
// "[label] ".
func showLog(w io.Writer, label, log string) {
	data, err := os.ReadFile(log)
	if err != nil || len(data) == 0 {
		return
	}
	var b bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		fmt.Fprintf(&b, "[%s] %s\n", label, sc.Text())
	}
	w.Write(b.Bytes())
}

func safeName(label string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r < 0x20 {
			return '_'
		}
		return r
	}, label)
}
