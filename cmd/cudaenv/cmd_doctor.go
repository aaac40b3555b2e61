package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/cudaenv/cudaenv/compat"
	"github.com/cudaenv/cudaenv/internal/activate"
	"github.com/cudaenv/cudaenv/internal/detect"
	"github.com/cudaenv/cudaenv/internal/doctor"
	"github.com/cudaenv/cudaenv/internal/envdiff"
	"github.com/cudaenv/cudaenv/internal/install"
	"github.com/cudaenv/cudaenv/internal/query"
	"github.com/cudaenv/cudaenv/internal/termsafe"
	"github.com/cudaenv/cudaenv/store"
)

func doctorCommands(e *env) []*cli.Command {
	return []*cli.Command{
		{
			Name:  "doctor",
			Usage: "check that driver, GPU, toolkit, cuDNN, host compiler, CMake, PATH and PyTorch agree",
			Description: `One line per check: ok, warn or FAIL. Exit status 0 when all is well,
1 with warnings, 2 with failures. --json prints
{"status": "ok|warn|fail", "checks": [{"id", "status", "message", "hint"}]}
with the ids toolkit, driver, gpu-arch, cudnn, host-compiler, cmake, path,
torch, env, kernels (whether the Python environment's torch, JAX or CuPy
carries kernels for the GPUs, read from its installed libraries as
cudaenv inspect reads them), libraries (whether importing the framework
would load a copy of a library of its nvidia-* wheels from
LD_LIBRARY_PATH that lacks a symbol it needs: "undefined symbol"),
products (the libraries selected beside cuDNN: whole, built for the
CUDA major), product-pins (those libraries against the exact builds the
installed torch pins), leftovers (space interrupted commands left), and
gpu: --gpu also compiles and runs a small CUDA program with the selected
nvcc.`,
			Flags: []cli.Flag{
				&cli.BoolFlag{Name: "json", Usage: "print the report as JSON"},
				&cli.BoolFlag{Name: "gpu", Usage: "also compile and run a device query and bandwidth test with the selected toolkit"},
			},
			Action: func(c *cli.Context) error {
				if c.NArg() > 0 {
					return errors.New("doctor takes no arguments; it checks what the current directory selects (see: cudaenv doctor --help)")
				}
				return runDoctor(e, c.Bool("json"), c.Bool("gpu"))
			},
		},
		{
			Name:      "compat",
			Usage:     "what a framework release's wheel pins and a PyTorch release was built with, its pip line, and whether this machine runs it",
			ArgsUsage: "[NAME==VERSION | torch]   (none: the matrix for this machine)",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "python", Usage: "the CPython version whose wheel is read (default " + install.DefaultPython + ")"},
				&cli.BoolFlag{Name: "offline", Usage: "do not read the package index; cudaenv's tables only"},
			},
			Action: func(c *cli.Context) error {
				switch c.NArg() {
				case 0:
					return compatMatrix(e)
				case 1:
					return compatFramework(e, c, c.Args().First())
				}
				return errors.New("compat takes one argument, e.g. cudaenv compat torch==2.5.1")
			},
		},
	}
}

// host is this machine as the detect package sees it, commands included.
func (e *env) host(withCommands bool) detect.Host {
	h := detect.Host{Env: e.vars, GOOS: e.goos}
	if withCommands {
		env := e.vars.Pairs()
		h.Run = func(ctx context.Context, name string, args ...string) ([]byte, error) {
			ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, name, args...)
			cmd.Env = env
			return cmd.CombinedOutput()
		}
	}
	return h
}

func (e *env) fancy(w any) bool {
	if _, off := e.vars["NO_COLOR"]; off {
		return false
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func runDoctor(e *env, asJSON, gpu bool) error {
	ctx := context.Background()
	sel := doctor.Selection{OwnBinDirs: []string{e.dirs.Shims()}, ShimsDir: e.dirs.Shims()}
	if list, err := e.store().List(store.CUDA); err == nil {
		for _, ent := range list {
			if ent.Err == nil {
				sel.InstalledCUDA = append(sel.InstalledCUDA, ent.Version.String())
			}
		}
	}
	r, err := resolveHere(e)
	r = query.WithReceipts(e.query(), r)
	var notInstalled *activate.NotInstalledError
	switch {
	case err == nil:
	case errors.As(err, &notInstalled):
		sel.Toolkit.Version = notInstalled.Spec.String()
		sel.Toolkit.Source = "set by " + notInstalled.Source.String()
	case errors.Is(err, errNothingSelected):
	default:
		return err
	}
	if r.CUDA != nil {
		sel.Toolkit = doctor.Toolkit{
			Version:    r.CUDA.Version.String(),
			Source:     "set by " + r.Selection.Source.String(),
			Dir:        r.CUDA.Path,
			HasReceipt: true,
			From:       r.CUDA.Receipt.Source,
			// A libraries-only install is a kind of install: doctor notes
			// it instead of failing it for lacking nvcc.
			LibrariesOnly: r.CUDA.Receipt.LibrariesOnly,
			Damage:        damage(*r.CUDA),
			LibDirs:       activate.Want(r, e.goos).Prepend["LD_LIBRARY_PATH"],
		}
		sel.OwnBinDirs = append(sel.OwnBinDirs, filepath.Join(r.CUDA.Path, "bin"))
	}
	if r.Cudnn != nil {
		sel.Cudnn = doctor.Cudnn{Version: r.Cudnn.Version.String(), Dir: r.Cudnn.Path, VariantMajor: r.Cudnn.CUDAMajor, Damage: damage(*r.Cudnn)}
	}
	h := e.host(true)
	in := doctor.Gather(ctx, h, sel)
	rep := doctor.Run(in)
	libCheck, fws := librariesCheck(ctx, e, h, r, in)
	rep.Add(doctor.CheckKernels(fws, in.GPUError))
	rep.Add(libCheck)
	if c, ok := leftoversCheck(e); ok {
		rep.Add(c)
	}
	if libs := selectedProducts(r); len(libs) > 0 {
		cuda := ""
		if r.CUDA != nil {
			cuda = r.CUDA.Version.String()
		}
		rep.Add(doctor.ProductsCheck(libs, cuda))
		if in.Torch != nil {
			if c, ok := doctor.ProductPinsCheck(libs, in.Torch.Version, in.Torch.CUDAPins); ok {
				rep.Add(c)
			}
		}
	}
	if gpu {
		rep.Add(gpuCheck(ctx, e, h, r, len(in.GPUs) > 0))
	}
	if asJSON {
		if err := doctor.WriteJSON(e.stdout, rep); err != nil {
			return err
		}
	} else {
		style := doctor.Plain
		if e.fancy(e.stdout) {
			style = doctor.Fancy
		}
		if err := doctor.WriteText(e.stdout, rep, style); err != nil {
			return err
		}
	}
	if code := rep.ExitCode(); code != 0 {
		return &query.ExitError{Code: code}
	}
	return nil
}

// gpuCheck compiles and runs the embedded device query and bandwidth test
// with the selected nvcc, as the seed guides do with deviceQuery.
func gpuCheck(ctx context.Context, e *env, h detect.Host, r activate.Resolved, haveGPU bool) doctor.Check {
	if r.CUDA == nil {
		return doctor.Check{ID: "gpu", Status: doctor.Skip, Message: "no toolkit selected to build the GPU check with"}
	}
	if !haveGPU {
		return doctor.Check{ID: "gpu", Status: doctor.Skip, Message: "no GPU found; nothing to run the GPU check on"}
	}
	dir, err := os.MkdirTemp("", "cudaenv-gpucheck-")
	if err != nil {
		return doctor.Check{ID: "gpu", Status: doctor.Fail, Message: err.Error()}
	}
	defer os.RemoveAll(dir)
	src := filepath.Join(dir, doctor.GPUCheckFile)
	if err := os.WriteFile(src, doctor.GPUCheckSource, 0o644); err != nil {
		return doctor.Check{ID: "gpu", Status: doctor.Fail, Message: err.Error()}
	}
	bin := filepath.Join(dir, "gpucheck")
	vars := envdiff.Result(e.vars, activate.Changes(e.vars, activate.Want(r, e.goos), e.goos))
	run := func(name string, args ...string) ([]byte, error) {
		ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Env = vars.Pairs()
		cmd.Dir = dir
		return cmd.CombinedOutput()
	}
	buildOut, buildErr := run(filepath.Join(r.CUDA.Path, "bin", "nvcc"), doctor.GPUCheckArgs(src, bin)...)
	var runOut []byte
	var runErr error
	if buildErr == nil {
		runOut, runErr = run(bin)
	}
	return doctor.GPUCheck(buildOut, buildErr, runOut, runErr)
}

// compatFramework answers compat NAME==VERSION: the pins its wheel on the
// package index names, then, for torch, what cudaenv's tables say of it.
// A bare "torch" is the installed one (tables only).
func compatFramework(e *env, c *cli.Context, arg string) error {
	if !strings.Contains(arg, "==") {
		return compatTorch(e, arg, false)
	}
	name, ver, _ := strings.Cut(arg, "==")
	in, err := e.installer(c, true)
	if err != nil {
		return err
	}
	pins, disagree, err := in.Pins(context.Background(), arg, c.String("python"), "")
	if err != nil {
		if name != "torch" || strings.TrimSpace(ver) == "" {
			return fmt.Errorf("compat: %w", err)
		}
		sayf(e.stderr, "cudaenv: could not read %s's wheel (%v); cudaenv's tables only", arg, err)
		return compatTorch(e, arg, false)
	}
	fw := pins.Framework
	sayf(e.stdout, "%s %s wheel %s pins:", fw.Project, fw.Version, pins.Wheel)
	sayf(e.stdout, "  %s → CUDA %s", pins.CUDAFrom, pins.CUDA)
	if pins.Cudnn != "" {
		sayf(e.stdout, "  %s → cuDNN %s", pins.CudnnFrom, pins.Cudnn)
	}
	var all []string
	for _, p := range pins.Applied {
		all = append(all, p.Requirement)
	}
	if len(all) == 0 {
		// jax[cuda13]: its plugin's wheel pins them.
		sayf(e.stdout, "  NVIDIA requirements: none of its own (those above come through its dependencies)")
	} else {
		sayf(e.stdout, "  NVIDIA requirements: %s", strings.Join(all, ", "))
	}
	if disagree != "" {
		sayf(e.stdout, "  note: %s", disagree)
	}
	sayf(e.stdout, "install them with: cudaenv install --for %s", termsafe.Arg(arg))
	if fw.Project == "torch" {
		return compatTorch(e, arg, true)
	}
	return nil
}

func compatTorch(e *env, arg string, wheelRead bool) error {
	name, ver, hasVer := strings.Cut(arg, "==")
	if name != "torch" || (hasVer && strings.TrimSpace(ver) == "") {
		return fmt.Errorf("compat: %q is not a PyTorch requirement; use torch==2.5.1, or torch for the one installed", arg)
	}
	rep, err := doctor.CompatTorch(context.Background(), e.host(true), ver)
	if t := rep.Installed; t != nil {
		// Both from the environment's files: the version was checked to
		// be PEP 440's, the path is whatever sys.path said.
		fmt.Fprintf(e.stdout, "installed: torch %s (%s)\n", termsafe.Escape(t.Version), termsafe.Escape(t.Path))
	}
	if err != nil && wheelRead {
		return nil // a release newer than the tables: its wheel has said it all
	}
	if err != nil {
		return err
	}
	rel := rep.Release
	if !rep.InTables {
		return compatInstalledTorch(e, rep)
	}
	if rel.Python != "" {
		fmt.Fprintf(e.stdout, "torch %s: Python %s\n", rel.Version, rel.Python)
	} else {
		// A release newer than the pairing table: its Pythons are not known.
		fmt.Fprintf(e.stdout, "torch %s\n", rel.Version)
	}
	if rel.Torchvision != "" {
		audio := "none (torchaudio ended with 2.11)"
		if rel.Torchaudio != "" {
			audio = rel.Torchaudio
		}
		fmt.Fprintf(e.stdout, "  built with it: torchvision %s, torchaudio %s\n", rel.Torchvision, audio)
	}
	if rel.Note != "" {
		fmt.Fprintf(e.stdout, "  note: %s\n", rel.Note)
	}
	for _, b := range rep.Builds {
		role := b.Role
		if b.OS == "linux" {
			role += ", Linux only"
		}
		if b.PyPIDefault == "linux" {
			role += ", PyPI's default on Linux"
		}
		fmt.Fprintf(e.stdout, "  %s (%s): CUDA %s, cuDNN %s, %s\n", b.Name, role, b.CUDA, orUnknownCell(b.Cudnn), b.Driver.Verdict())
		if b.Pip != "" {
			fmt.Fprintf(e.stdout, "    %s\n", b.Pip)
		}
	}
	if !wheelRead {
		fmt.Fprintf(e.stdout, "install a matching toolkit with: cudaenv install --for torch==%s\n", rel.Version)
	}
	compatPick(e, rep)
	return nil
}

// compatInstalledTorch reports an installed torch cudaenv's tables do not
// know, from its own version.py and METADATA.
func compatInstalledTorch(e *env, rep doctor.TorchCompat) error {
	t := rep.Installed
	cuda := "CPU only"
	if t.CUDA != "" {
		cuda = "CUDA " + t.CUDA
	}
	base, _, _ := strings.Cut(t.Version, "+")
	fmt.Fprintf(e.stdout, "torch %s (%s) is not in cudaenv's tables; its METADATA pins:\n", termsafe.Escape(t.Version), termsafe.Escape(cuda))
	if len(t.CUDAPins) == 0 {
		fmt.Fprintln(e.stdout, "  no CUDA wheels")
	}
	for _, p := range t.CUDAPins {
		fmt.Fprintf(e.stdout, "  %s\n", p)
	}
	fmt.Fprintf(e.stdout, "install a matching toolkit with: cudaenv install --for torch==%s\n", termsafe.Escape(base))
	return nil
}

// compatPick ends compat torch with the command that installs the build
// for this machine: its driver, its GPUs' architectures and its Python.
func compatPick(e *env, rep doctor.TorchCompat) {
	m := rep.Machine
	var facts []string
	if m.Driver != "" {
		facts = append(facts, "driver "+m.Driver)
	} else {
		facts = append(facts, "no driver found")
	}
	if len(m.GPUs) > 0 {
		var sms []string
		for _, g := range m.GPUs {
			sms = append(sms, compat.SM(g))
		}
		facts = append(facts, "GPU "+strings.Join(sms, ", "))
	} else {
		facts = append(facts, "no GPU found")
	}
	if m.Python != "" {
		facts = append(facts, "Python "+m.Python)
	}
	what := strings.Join(facts, ", ")
	if rep.Pick == nil {
		fmt.Fprintf(e.stdout, "for this machine (%s): %s\n", what, rep.PickErr)
		return
	}
	p := rep.Pick
	build := p.Variant.Name
	if p.PyPI {
		build += ", PyPI's default build"
	}
	fmt.Fprintf(e.stdout, "for this machine (%s): %s\n", what, build)
	for _, why := range p.Passed {
		fmt.Fprintf(e.stdout, "  passed over %s\n", why)
	}
	if p.Unverified != "" {
		fmt.Fprintf(e.stdout, "  note: %s\n", p.Unverified)
	}
	if p.Pip == "" {
		fmt.Fprintf(e.stdout, "  torch %s has no patch release to pin yet\n", rep.Release.Version)
		return
	}
	fmt.Fprintf(e.stdout, "  %s\n  %s\n", p.Pip, p.UV)
}

func compatMatrix(e *env) error {
	m := doctor.CompatMatrix(context.Background(), e.host(true))
	if m.Driver.Found() {
		fmt.Fprintf(e.stdout, "driver %s (%s)\n", m.Driver.Version, m.Driver.Source)
	} else {
		fmt.Fprintln(e.stdout, "driver: none found")
	}
	tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TORCH\tBUILD\tCUDA\tCUDNN\tROLE\tTHIS MACHINE")
	for _, row := range m.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", row.Torch, row.Variant.Name, row.Variant.CUDA, row.Variant.Cudnn, row.Variant.Role, row.Verdict())
	}
	return tw.Flush()
}

// damage is store.Entry.Damage as doctor words it; "" for none.
func damage(ent store.Entry) string {
	if err := ent.Damage(); err != nil {
		return err.Error()
	}
	return ""
}

// orUnknownCell is v, or "unknown" for a fact the tables do not have.
func orUnknownCell(v string) string {
	if v == "" {
		return "unknown"
	}
	return v
}

// selectedProducts are the libraries besides cuDNN the selection resolved
// to, for doctor's products check.
func selectedProducts(r activate.Resolved) []doctor.Product {
	var out []doctor.Product
	for _, t := range activate.OtherLibraries() {
		if l := r.Libs[t]; l != nil {
			out = append(out, doctor.Product{Title: t.Title(), Name: string(t), Version: l.Version.String(), Dir: l.Path, VariantMajor: l.CUDAMajor, Damage: damage(*l)})
		}
	}
	return out
}
