//go:build unix

// Command xz compares decoders on one .xz file, interleaved so that noise
// from other jobs hits each alike: internal/xz (cudaenv's fork), the
// upstream github.com/mikelolasagasti/xz it was forked from, and `xz -dc`
// (liblzma) when installed. It prints each run's wall and CPU seconds and
// the median of the per-run ratios.
//
//	go run ./bench/xz -file F.xz [-runs 5] [-cpuprofile P]
package main

import (
	"bytes"
	"crypto/sha256"
	"flag"
	"fmt"
	"hash"
	"io"
	"os"
	"os/exec"
	"runtime/pprof"
	"sort"
	"syscall"
	"time"

	"github.com/cudaenv/cudaenv/internal/xz"
	upstream "github.com/mikelolasagasti/xz"
)

type result struct{ wall, cpu float64 }

func main() {
	file := flag.String("file", "", ".xz file to decode")
	runs := flag.Int("runs", 5, "rounds (each decodes the file once per decoder)")
	only := flag.Bool("only", false, "decode with internal/xz only (for profiling)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of internal/xz's runs")
	flag.Parse()
	data, err := os.ReadFile(*file)
	if err != nil {
		fmt.Fprintln(os.Stderr, "xz:", err)
		os.Exit(1)
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "xz:", err)
			os.Exit(1)
		}
		defer f.Close()
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	xzPath, _ := exec.LookPath("xz")
	if *only {
		xzPath = ""
	}
	ours, _ := xz.NewReader(nil, 0)
	var sums = map[string][]byte{}
	decoders := []struct {
		name string
		run  func(h hash.Hash) (result, error)
	}{
		{"internal/xz", func(h hash.Hash) (result, error) {
			return inProcess(func() error {
				if err := ours.Reset(bytes.NewReader(data)); err != nil {
					return err
				}
				_, err := io.Copy(h, ours)
				return err
			})
		}},
	}
	if !*only {
		decoders = append(decoders, struct {
			name string
			run  func(h hash.Hash) (result, error)
		}{"upstream", func(h hash.Hash) (result, error) {
			return inProcess(func() error {
				r, err := upstream.NewReader(bytes.NewReader(data), 0)
				if err != nil {
					return err
				}
				_, err = io.Copy(h, r)
				return err
			})
		}})
	}
	if xzPath != "" {
		decoders = append(decoders, struct {
			name string
			run  func(h hash.Hash) (result, error)
		}{"xz -dc", func(h hash.Hash) (result, error) {
			cmd := exec.Command(xzPath, "-dc", *file)
			cmd.Stdout = h
			start := time.Now()
			err := cmd.Run()
			wall := time.Since(start).Seconds()
			if err != nil {
				return result{}, err
			}
			ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
			return result{wall, tv(ru.Utime) + tv(ru.Stime)}, nil
		}})
	}
	res := make([][]result, len(decoders))
	fmt.Printf("%-4s %-12s %8s %8s\n", "run", "decoder", "wall_s", "cpu_s")
	for r := 0; r < *runs; r++ {
		for i, d := range decoders {
			h := sha256.New()
			x, err := d.run(h)
			if err != nil {
				fmt.Fprintf(os.Stderr, "xz: %s: %v\n", d.name, err)
				os.Exit(1)
			}
			sum := h.Sum(nil)
			if prev, ok := sums[d.name]; ok && !bytes.Equal(prev, sum) {
				fmt.Fprintf(os.Stderr, "xz: %s: output changed between runs\n", d.name)
				os.Exit(1)
			}
			sums[d.name] = sum
			if !bytes.Equal(sum, sums[decoders[0].name]) {
				fmt.Fprintf(os.Stderr, "xz: %s and %s differ\n", d.name, decoders[0].name)
				os.Exit(1)
			}
			res[i] = append(res[i], x)
			fmt.Printf("%-4d %-12s %8.3f %8.3f\n", r+1, d.name, x.wall, x.cpu)
		}
	}
	for i := range decoders {
		for j := i + 1; j < len(decoders); j++ {
			fmt.Printf("%s / %s: median ratio wall %.3f, cpu %.3f\n", decoders[i].name, decoders[j].name,
				median(res[i], res[j], func(x result) float64 { return x.wall }),
				median(res[i], res[j], func(x result) float64 { return x.cpu }))
		}
	}
}

func inProcess(f func() error) (result, error) {
	var a, b syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &a)
	start := time.Now()
	err := f()
	wall := time.Since(start).Seconds()
	syscall.Getrusage(syscall.RUSAGE_SELF, &b)
	cpu := tv(b.Utime) + tv(b.Stime) - tv(a.Utime) - tv(a.Stime)
	return result{wall, cpu}, err
}

func tv(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }

func median(a, b []result, f func(result) float64) float64 {
	var r []float64
	for i := range a {
		r = append(r, f(a[i])/f(b[i]))
	}
	sort.Float64s(r)
	if len(r)%2 == 1 {
		return r[len(r)/2]
	}
	return (r[len(r)/2-1] + r[len(r)/2]) / 2
}
