// Command shimbench times a shim call against calling the same tiny binary
// directly, in pairs: each pair runs both, in random order, back to back,
// so that drift in machine load hits both sides alike. It prints medians
// of each side, of the per-pair difference (what a shim adds) and of the
// per-pair ratio.
//
//	shimbench -dir PROJECT -n 2000 [-direct-env FILE] DIRECT SHIM
//
// The direct call should get the environment the shim gives its command
// (-direct-env), as it has in a shell where the version is active: the
// same LD_LIBRARY_PATH, whose search the dynamic loader pays either way.
package main

import (
	"flag"
	"fmt"
	"math/rand"
	"os"
	"sort"
	"strings"
	"time"
)

func main() {
	n := flag.Int("n", 2000, "pairs to run")
	warm := flag.Int("warmup", 100, "pairs to run first and throw away")
	dir := flag.String("dir", ".", "working directory of both calls (a project that selects a version)")
	directEnv := flag.String("direct-env", "", "file of NUL-separated KEY=VALUE pairs: the direct call's environment (default: this one's)")
	shimEnv := flag.String("shim-env", "", "the same for the shim call")
	flag.Parse()
	if flag.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: shimbench [-n N] [-dir DIR] DIRECT SHIM")
		os.Exit(2)
	}
	direct, shim := flag.Arg(0), flag.Arg(1)
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		fail(err)
	}
	attr := &os.ProcAttr{Dir: *dir, Env: os.Environ(), Files: []*os.File{devnull, devnull, devnull}}
	dattr := withEnv(attr, *directEnv)
	attr = withEnv(attr, *shimEnv)
	// Both must work before anything is timed.
	if _, err := once(direct, dattr); err != nil {
		fail(err)
	}
	if _, err := once(shim, attr); err != nil {
		fail(err)
	}
	var d, s, diff, ratio []float64
	for i := 0; i < *warm+*n; i++ {
		var td, ts time.Duration
		if rand.Intn(2) == 0 {
			td, _ = once(direct, dattr)
			ts, _ = once(shim, attr)
		} else {
			ts, _ = once(shim, attr)
			td, _ = once(direct, dattr)
		}
		if i < *warm {
			continue
		}
		d = append(d, ms(td))
		s = append(s, ms(ts))
		diff = append(diff, ms(ts-td))
		ratio = append(ratio, float64(ts)/float64(td))
	}
	fmt.Printf("pairs: %d (after %d warm-up pairs), working directory %s\n", *n, *warm, *dir)
	fmt.Printf("%-22s %8s %8s %8s\n", "", "p10", "median", "p90")
	row := func(name, unit string, v []float64) {
		sort.Float64s(v)
		fmt.Printf("%-22s %8.3f %8.3f %8.3f %s\n", name, q(v, 0.1), q(v, 0.5), q(v, 0.9), unit)
	}
	row("direct call", "ms", d)
	row("shim call", "ms", s)
	row("added by the shim", "ms", diff)
	row("shim / direct (paired)", "x", ratio)
}

// once starts p, waits for it, and returns the wall time from start to
// reaped exit.
func once(p string, attr *os.ProcAttr) (time.Duration, error) {
	t0 := time.Now()
	proc, err := os.StartProcess(p, []string{p}, attr)
	if err != nil {
		return 0, err
	}
	st, err := proc.Wait()
	el := time.Since(t0)
	if err != nil {
		return 0, err
	}
	if !st.Success() {
		return 0, fmt.Errorf("%s: %s", p, st)
	}
	return el, nil
}

// withEnv returns attr with the environment read from file, if one is named.
func withEnv(attr *os.ProcAttr, file string) *os.ProcAttr {
	if file == "" {
		return attr
	}
	data, err := os.ReadFile(file)
	if err != nil {
		fail(err)
	}
	a := *attr
	a.Env = strings.Split(strings.TrimSuffix(string(data), "\x00"), "\x00")
	return &a
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func q(sorted []float64, f float64) float64 {
	return sorted[int(f*float64(len(sorted)-1)+0.5)]
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "shimbench:", err)
	os.Exit(1)
}
