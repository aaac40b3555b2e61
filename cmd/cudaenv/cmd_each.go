package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/cudaenv/cudaenv/internal/each"
	"github.com/cudaenv/cudaenv/internal/envdiff"
	"github.com/cudaenv/cudaenv/internal/query"
	"github.com/cudaenv/cudaenv/internal/resolve"
	"github.com/cudaenv/cudaenv/internal/version"
	"github.com/cudaenv/cudaenv/store"
)

// execEach is "cudaenv exec --each LIST [--jobs N] [SPECS] [--] CMD".
func execEach(e *env, args []string) error {
	var list string
	jobs := 1
	for len(args) > 0 {
		a := args[0]
		switch {
		case a == "--each" || a == "--jobs" || a == "-j":
			if len(args) < 2 || strings.HasPrefix(args[1], "-") {
				return fmt.Errorf("exec: %s needs a value, e.g. cudaenv exec --each 11.8,12.4 --jobs 2 -- nvcc --version", a)
			}
			if a == "--each" {
				list = args[1]
			} else if n, err := strconv.Atoi(args[1]); err != nil || n < 1 {
				return fmt.Errorf("exec: --jobs %q: want a number of runs at a time, 1 or more", args[1])
			} else {
				jobs = n
			}
			args = args[2:]
			continue
		case strings.HasPrefix(a, "--each="):
			list = strings.TrimPrefix(a, "--each=")
		case strings.HasPrefix(a, "--jobs="):
			n, err := strconv.Atoi(strings.TrimPrefix(a, "--jobs="))
			if err != nil || n < 1 {
				return fmt.Errorf("exec: %s: want a number of runs at a time, 1 or more", a)
			}
			jobs = n
		default:
			goto rest
		}
		args = args[1:]
	}
rest:
	specs, cmd := splitExecArgs(args)
	if len(cmd) == 0 {
		return errors.New("exec --each needs a command, e.g. cudaenv exec --each 11.8,12.4 -- nvcc --version")
	}
	versions, err := eachVersions(e, list)
	if err != nil {
		return err
	}
	for _, s := range specs {
		if sp, err := version.ParseSpec(s); err == nil && sp.Tool == version.CUDA {
			return fmt.Errorf("exec --each: %q: the CUDA versions come from --each; other specs may only name cuDNN", s)
		}
	}
	var runs []each.Run
	for _, v := range versions {
		changes, r, err := changesFor(e, append([]string{v}, specs...))
		if err != nil {
			return fmt.Errorf("exec --each %s: %w", v, err)
		}
		vars := envdiff.Result(e.vars, changes)
		vars[resolve.EnvVar] = r.Selector()
		label := r.CUDA.Version.String()
		argv := make([]string, len(cmd))
		for i, a := range cmd {
			argv[i] = strings.ReplaceAll(a, "{version}", label)
		}
		run := each.Run{Label: label, Args: argv, Env: vars.Pairs(), Dir: e.cwd}
		if err := execTarget(e, vars, r, argv[0]); err != nil {
			run.NotFound = errors.New(strings.TrimPrefix(errors.Unwrap(err).Error(), "exec: "))
		} else if strings.ContainsAny(argv[0], `/\`) {
			run.Path = argv[0]
		} else {
			run.Path, _ = lookPath(argv[0], vars["PATH"], e.goos)
		}
		runs = append(runs, run)
	}
	opt := each.Options{Jobs: jobs, Stdout: e.stdout, Stderr: e.stderr}
	if jobs > 1 {
		dir, err := os.MkdirTemp("", "cudaenv-each-")
		if err != nil {
			return fmt.Errorf("exec --each: logs: %w", err)
		}
		opt.LogDir = dir
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	results := each.All(ctx, runs, opt)
	interrupted := ctx.Err() != nil
	failed := 0
	for _, r := range results {
		if r.Failed() {
			failed++
		}
	}
	if opt.LogDir != "" && failed == 0 && !interrupted {
		// Every run's output was shown whole: the logs hold nothing more,
		// and a folder in /tmp per run would pile up.
		os.RemoveAll(opt.LogDir)
		opt.LogDir = ""
	}
	printEachTable(e, results, opt.LogDir)
	switch {
	case interrupted:
		return &query.ExitError{Code: 130, Err: errors.New("exec --each: interrupted")}
	case failed > 0:
		return &query.ExitError{Code: 1, Err: fmt.Errorf("exec --each: %d of %d runs failed", failed, len(results))}
	}
	return nil
}

// eachVersions is the CUDA specs --each names: a comma list, or every
// installed toolkit for "all".
func eachVersions(e *env, list string) ([]string, error) {
	if list == "" {
		return nil, errors.New("exec --each needs versions, e.g. --each 11.8,12.4,13.0 or --each all")
	}
	if list == "all" {
		entries, err := e.store().List(store.CUDA)
		if err != nil {
			return nil, err
		}
		var out []string
		for _, ent := range entries {
			if ent.Err == nil {
				out = append(out, ent.Version.String())
			}
		}
		if len(out) == 0 {
			return nil, errors.New("exec --each all: no CUDA toolkit is installed; run: cudaenv install 12.4")
		}
		return out, nil
	}
	var out []string
	for _, v := range strings.Split(list, ",") {
		v = strings.TrimSpace(v)
		sp, err := version.ParseSpec(v)
		if err != nil || sp.Tool != version.CUDA || sp.Kind != version.Prefix {
			return nil, fmt.Errorf("exec --each: %q is not a CUDA version; use e.g. --each 11.8,12.4 or --each all", v)
		}
		out = append(out, v)
	}
	return out, nil
}

func printEachTable(e *env, results []each.Result, logDir string) {
	tw := tabwriter.NewWriter(e.stderr, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "VERSION\tRESULT\tTIME")
	for _, r := range results {
		result, took := "ok", r.Duration.Round(10*time.Millisecond).String()
		switch {
		case !r.Started:
			result, took = "not run", "-"
		case r.Code != 0:
			result = "exit " + strconv.Itoa(r.Code)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Label, result, took)
	}
	tw.Flush()
	if logDir != "" {
		fmt.Fprintf(e.stderr, "logs: %s\n", logDir)
	}
}
