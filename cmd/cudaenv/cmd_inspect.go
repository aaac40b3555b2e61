package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cudaenv/cudaenv/compat"
	"github.com/cudaenv/cudaenv/internal/activate"
	"github.com/cudaenv/cudaenv/internal/cudabin"
	"github.com/cudaenv/cudaenv/internal/detect"
	"github.com/cudaenv/cudaenv/internal/hookenv"
	"github.com/cudaenv/cudaenv/internal/ldso"
	"github.com/cudaenv/cudaenv/internal/query"
	"github.com/cudaenv/cudaenv/internal/termsafe"
)

// ldCacheFile is glibc's loader cache.
const ldCacheFile = "/etc/ld.so.cache"

// inspectDeadline bounds one inspect run (a hostile folder or a slow
// file system must not hang it).
const inspectDeadline = 2 * time.Minute

func inspectCommands(e *env) []*cli.Command {
	return []*cli.Command{{
		Name:      "inspect",
		Usage:     "what a CUDA program, library, wheel or folder carries and needs: GPU architectures, PTX, CUDA libraries, undefined symbols",
		ArgsUsage: "PATH...",
		Description: `For each ELF file (and each one in a wheel or folder): sass, the GPU
architectures it has machine code for; ptx, the virtual architectures it
has PTX for, with the PTX ISA version and the oldest CUDA that emits it
(built_with); needs, each CUDA library it loads and the file the
dynamic loader picks under the current selection (RPATH, LD_LIBRARY_PATH,
RUNPATH, /etc/ld.so.cache, default folders); undefined, each versioned
symbol the picked library lacks (the "undefined symbol" error); and a
verdict for this machine's GPU and driver, or --gpu and --driver (the
"no kernel image is available" error). Exit status 1 when a file has
an undefined symbol, a missing library or no way to run on the GPU.
Nothing is run: no CUDA tools are needed.`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print the reports as JSON"},
			&cli.StringFlag{Name: "gpu", Usage: "judge for a GPU of this architecture (sm_86, 8.6) instead of this machine's"},
			&cli.StringFlag{Name: "driver", Usage: "judge for this driver version (550.54.15) instead of this machine's"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return errors.New("inspect takes the files, wheels or folders to read, e.g. cudaenv inspect .venv")
			}
			return runInspect(e, c.Args().Slice(), c.Bool("json"), c.String("gpu"), c.String("driver"))
		},
	}}
}

var reDriverFlag = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]{2,4}(\.[0-9]{1,4}){0,2}$`) })

func runInspect(e *env, paths []string, asJSON bool, gpu, driver string) error {
	ctx, cancel := context.WithTimeout(context.Background(), inspectDeadline)
	defer cancel()
	opt := cudabin.Options{GOOS: e.goos, GPU: gpu, Driver: driver}
	if gpu != "" {
		cc, ok := compat.ParseCapability(gpu)
		if !ok {
			return fmt.Errorf("--gpu %q: not a GPU architecture; give one like sm_86 or 8.6", termsafe.Escape(gpu))
		}
		opt.GPU = cc
	}
	if driver != "" && !reDriverFlag().MatchString(driver) {
		return fmt.Errorf("--driver %q: not a driver version; give one like 550.54.15", termsafe.Escape(driver))
	}
	h := e.host(gpu == "" || driver == "")
	if gpu == "" {
		if gpus, err := h.GPUs(ctx); err == nil && len(gpus) > 0 {
			opt.GPU = gpus[0].ComputeCap
		}
	}
	if driver == "" {
		opt.Driver = h.Driver(ctx).Version
	}
	opt.LibraryPath = selectionLibraryPath(e)
	opt.Cache = readLoaderCache(ldCacheFile)
	reps, err := cudabin.Inspect(ctx, paths, opt)
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("inspect: not done within %s (a file system that does not answer?); name fewer or smaller folders", inspectDeadline)
	}
	if err != nil {
		return fmt.Errorf("inspect: %w", err)
	}
	if asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(struct {
			Files []cudabin.Report `json:"files"`
		}{append([]cudabin.Report{}, reps...)}); err != nil {
			return err
		}
	} else {
		writeInspect(e.stdout, reps)
	}
	for _, r := range reps {
		if r.Verdict.Problem() || len(r.Undefined) > 0 || missingLibrary(r) {
			return &query.ExitError{Code: 1}
		}
	}
	return nil
}

func missingLibrary(r cudabin.Report) bool {
	for _, n := range r.Needs {
		if n.Path == "" && !strings.HasPrefix(n.Via, "not looked up") && !driverLibrary(n.Name) {
			return true
		}
	}
	return false
}

// driverLibrary: the NVIDIA driver installs it, not a toolkit; a machine
// without a driver (a build machine) lacks it, and the verdict says so.
func driverLibrary(soname string) bool {
	return strings.HasPrefix(soname, "libcuda.so") || strings.HasPrefix(soname, "libnvidia-ml.so")
}

// selectionLibraryPath is LD_LIBRARY_PATH as the current selection makes
// it: the selection's folders first (as the hook and shims put them),
// then the environment's other entries.
func selectionLibraryPath(e *env) []string {
	var dirs []string
	if r, err := resolveHere(e); err == nil {
		r = query.WithReceipts(e.query(), r)
		for _, d := range hookenv.LibDirs(r, e.goos) {
			dirs = append(dirs, d.Dir)
		}
	} else if !errors.Is(err, errNothingSelected) {
		var ni *activate.NotInstalledError
		if !errors.As(err, &ni) {
			fmt.Fprintf(e.stderr, "cudaenv: %v (judging the environment's LD_LIBRARY_PATH alone)\n", err)
		}
	}
	for _, d := range detect.SplitList(e.vars["LD_LIBRARY_PATH"], e.goos) {
		if !containsString(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// readLoaderCache reads ld.so.cache, bounded; nil when there is none or
// it does not parse (the loader then searches the default folders).
func readLoaderCache(p string) *ldso.Cache {
	f, err := os.Open(p)
	if err != nil {
		return nil
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, ldso.MaxCacheBytes+1))
	if err != nil {
		return nil
	}
	c, err := ldso.ParseCache(b)
	if err != nil {
		return nil
	}
	return c
}

// writeInspect prints the reports: one block a file.
func writeInspect(w io.Writer, reps []cudabin.Report) {
	q := termsafe.Escape
	for i, r := range reps {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s (%s)\n", q(r.Path), r.Kind)
		if r.Fatbins > 0 || len(r.SASS) > 0 {
			fmt.Fprintf(w, "  sass: %s\n", orNone(strings.Join(r.SASS, " ")))
		}
		if r.Fatbins > 0 || len(r.PTX) > 0 {
			var ps []string
			for _, p := range r.PTX {
				built := "CUDA " + p.BuiltWith + "+"
				if p.BuiltWith == "" {
					built = "newer than cudaenv's tables"
				}
				ps = append(ps, fmt.Sprintf("%s (ISA %s, built with %s)", p.Arch, p.ISA, built))
			}
			fmt.Fprintf(w, "  ptx: %s\n", orNone(strings.Join(ps, ", ")))
		}
		for _, n := range r.Needs {
			by := ""
			if n.By != "" {
				by = " (for " + q(n.By) + ")"
			}
			switch {
			case strings.HasPrefix(n.Via, "not looked up"):
				fmt.Fprintf(w, "  needs: %s%s\n", q(n.Name), by)
			case n.Path == "" && driverLibrary(n.Name):
				fmt.Fprintf(w, "  needs: %s%s -> not found (the NVIDIA driver's library: no driver is installed)\n", q(n.Name), by)
			case n.Path == "":
				fmt.Fprintf(w, "  needs: %s%s -> NOT FOUND\n", q(n.Name), by)
			default:
				fmt.Fprintf(w, "  needs: %s%s -> %s (%s)\n", q(n.Name), by, q(n.Path), q(n.Via))
			}
		}
		for _, u := range r.Undefined {
			fmt.Fprintf(w, "  undefined: %s, needed by %s: %s is expected to define it, and the loader picks %s\n", q(u.Symbol), q(u.By), q(u.Library), q(u.Picked))
		}
		if v := r.Verdict; v != nil {
			fmt.Fprintf(w, "  verdict: %s: %s\n", v.Status, q(v.Message))
		}
		for _, n := range r.Notes {
			fmt.Fprintf(w, "  note: %s\n", q(n))
		}
	}
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
