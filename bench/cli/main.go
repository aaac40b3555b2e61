// Command clibench times whole process runs of several commands against a
// baseline, interleaved: each round runs every case once, in a fresh
// random order, so that drift in machine load hits all cases alike. It
// prints each case's median time and the median of its per-round ratio to
// the first case (the baseline).
//
//	clibench [-n 400] [-dir DIR] [-env FILE] LABEL[@ENVFILE]=ARGV... ...
//
// A case is one argument: its label, optionally "@" and a file of
// NUL-separated KEY=VALUE pairs that is its environment (instead of
// -env's), "=", then the command line split on spaces (so paths must have
// none). Every case must exit 0.
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

type bcase struct {
	label string
	argv  []string
	attr  *os.ProcAttr
	times []float64
	ratio []float64
	cpu   []float64
	cpuR  []float64
}

func main() {
	n := flag.Int("n", 400, "rounds to run")
	warm := flag.Int("warmup", 20, "rounds to run first and throw away")
	dir := flag.String("dir", ".", "working directory of every case")
	envFile := flag.String("env", "", "file of NUL-separated KEY=VALUE pairs: the environment of every case (default: this one's)")
	flag.Parse()
	if flag.NArg() < 2 {
		fmt.Fprintln(os.Stderr, "usage: clibench [-n N] [-dir DIR] [-env FILE] BASELINE=ARGV... CASE=ARGV...")
		os.Exit(2)
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		fail(err)
	}
	attr := &os.ProcAttr{Dir: *dir, Env: readEnv(*envFile), Files: []*os.File{devnull, devnull, devnull}}
	var cases []*bcase
	for _, a := range flag.Args() {
		label, cmd, ok := strings.Cut(a, "=")
		if !ok || strings.TrimSpace(cmd) == "" {
			fail(fmt.Errorf("case %q is not LABEL[@ENVFILE]=ARGV", a))
		}
		c := &bcase{label: label, argv: strings.Fields(cmd), attr: attr}
		if l, file, ok := strings.Cut(label, "@"); ok {
			a := *attr
			a.Env = readEnv(file)
			c.label, c.attr = l, &a
		}
		cases = append(cases, c)
	}
	for _, c := range cases { // each must work before anything is timed
		if _, _, err := once(c.argv, c.attr); err != nil {
			fail(fmt.Errorf("%s: %w", c.label, err))
		}
	}
	order := make([]int, len(cases))
	round := make([]float64, len(cases))
	roundCPU := make([]float64, len(cases))
	for i := range order {
		order[i] = i
	}
	for r := 0; r < *warm+*n; r++ {
		rand.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, i := range order {
			d, cpu, err := once(cases[i].argv, cases[i].attr)
			if err != nil {
				fail(fmt.Errorf("%s: %w", cases[i].label, err))
			}
			round[i] = float64(d) / float64(time.Millisecond)
			roundCPU[i] = float64(cpu) / float64(time.Millisecond)
		}
		if r < *warm {
			continue
		}
		for i, c := range cases {
			c.times = append(c.times, round[i])
			c.ratio = append(c.ratio, round[i]/round[0])
			c.cpu = append(c.cpu, roundCPU[i])
			c.cpuR = append(c.cpuR, roundCPU[i]/roundCPU[0])
		}
	}
	fmt.Printf("rounds: %d (after %d warm-up rounds), cases in random order each round\n", *n, *warm)
	fmt.Printf("%-28s %8s %8s %8s %8s %8s %8s\n", "case", "p10 ms", "median", "p90 ms", "ratio", "cpu ms", "cpu ratio")
	for _, c := range cases {
		for _, v := range [][]float64{c.times, c.ratio, c.cpu, c.cpuR} {
			sort.Float64s(v)
		}
		fmt.Printf("%-28s %8.3f %8.3f %8.3f %7.2fx %8.3f %7.2fx\n", c.label, q(c.times, 0.1), q(c.times, 0.5), q(c.times, 0.9), q(c.ratio, 0.5), q(c.cpu, 0.5), q(c.cpuR, 0.5))
	}
	fmt.Printf("(medians; ratio: of the case's wall time to %s's in the same round; cpu: user+system time)\n", cases[0].label)
}

// once starts argv, waits for it, and returns the wall time from start to
// reaped exit and the CPU time it used (user and system), which waiting
// for a busy machine's cores does not inflate.
func once(argv []string, attr *os.ProcAttr) (wall, cpu time.Duration, err error) {
	t0 := time.Now()
	proc, err := os.StartProcess(argv[0], argv, attr)
	if err != nil {
		return 0, 0, err
	}
	st, err := proc.Wait()
	wall = time.Since(t0)
	if err != nil {
		return 0, 0, err
	}
	if !st.Success() {
		return 0, 0, fmt.Errorf("%s: %s", strings.Join(argv, " "), st)
	}
	return wall, st.UserTime() + st.SystemTime(), nil
}

// readEnv reads a file of NUL-separated KEY=VALUE pairs; "" is this
// process's environment.
func readEnv(file string) []string {
	if file == "" {
		return os.Environ()
	}
	data, err := os.ReadFile(file)
	if err != nil {
		fail(err)
	}
	return strings.Split(strings.TrimSuffix(string(data), "\x00"), "\x00")
}

func q(sorted []float64, f float64) float64 {
	return sorted[int(f*float64(len(sorted)-1)+0.5)]
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "clibench:", err)
	os.Exit(1)
}
