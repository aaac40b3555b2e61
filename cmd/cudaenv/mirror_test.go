package main

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/cudaenv/cudaenv/fetch/fetchtest"
	"github.com/cudaenv/cudaenv/fetch/pypi"
	"github.com/cudaenv/cudaenv/fetch/pypi/pypitest"
)

// mirrors holds each script's test mirror, by $WORK.
var (
	mirrorsMu sync.Mutex
	mirrors   = map[string]*fetchtest.Mirror{}
)

// mirrorCmds are the testscript verbs that drive a local NVIDIA mirror
// (the repository's copies of NVIDIA's manifests, generated archives).
// Nothing reaches the internet.
func mirrorCmds(t *testing.T) map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	get := func(ts *testscript.TestScript) *fetchtest.Mirror {
		mirrorsMu.Lock()
		defer mirrorsMu.Unlock()
		m := mirrors[ts.Getenv("WORK")]
		if m == nil {
			ts.Fatalf("no mirror: run the mirror command first")
		}
		return m
	}
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		// mirror: start a mirror and point CUDAENV_MIRROR at it.
		"mirror": func(ts *testscript.TestScript, neg bool, args []string) {
			m := fetchtest.NewMirror(t, fetchtest.Options{})
			mirrorsMu.Lock()
			mirrors[ts.Getenv("WORK")] = m
			mirrorsMu.Unlock()
			ts.Setenv("CUDAENV_MIRROR", m.URL())
		},
		// mirror-fault COMPONENT KIND [N]: notfound, fail N, drop N (bytes),
		// ignorerange, wrongsha, wrongsize, truncate N, zipslip, symlink, or none.
		"mirror-fault": func(ts *testscript.TestScript, neg bool, args []string) {
			if len(args) < 2 {
				ts.Fatalf("usage: mirror-fault COMPONENT KIND [N]")
			}
			n := int64(0)
			if len(args) > 2 {
				v, err := strconv.ParseInt(args[2], 10, 64)
				ts.Check(err)
				n = v
			}
			var f fetchtest.Fault
			switch args[1] {
			case "none":
			case "notfound":
				f.NotFound = true
			case "fail":
				f.Fail = int(n)
			case "drop":
				f.DropAfter = n
			case "ignorerange":
				f.IgnoreRange = true
			case "wrongsha":
				f.WrongSHA256 = true
			case "wrongsize":
				f.WrongSize = true
			case "truncate":
				f.Truncate = n
			case "hang":
				f.Hang = true
			case "zipslip":
				f.Extra = []fetchtest.Entry{{Name: "../../evil", Raw: true, Body: "pwned\n"}}
			case "symlink":
				f.Extra = []fetchtest.Entry{{Name: "lib/escape", Type: '2', Link: "../../../../../../../etc/passwd"}}
			default:
				ts.Fatalf("unknown fault %q", args[1])
			}
			get(ts).SetFault(args[0], f)
		},
		// mirror-hostile COMPONENT KIND [PATH]: serve the component's
		// archives as one of fetchtest.Hostile's attacks.
		"mirror-hostile": func(ts *testscript.TestScript, neg bool, args []string) {
			if len(args) < 2 || len(args) > 3 {
				ts.Fatalf("usage: mirror-hostile COMPONENT KIND [PATH] (kinds: %s)", fetchtest.HostileKinds)
			}
			f, err := fetchtest.Hostile(args[1], strings.Join(args[2:], ""))
			ts.Check(err)
			get(ts).SetFault(args[0], f)
		},
		// mirror-requests COMPONENT: print how often its archives were requested.
		"mirror-requests": func(ts *testscript.TestScript, neg bool, args []string) {
			m := get(ts)
			if len(args) == 0 {
				counts := m.Requests()
				var keys []string
				for k := range counts {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				for _, k := range keys {
					fmt.Fprintf(ts.Stdout(), "%s %d\n", k, counts[k])
				}
				return
			}
			for _, c := range args {
				fmt.Fprintf(ts.Stdout(), "%s %d range=%d\n", c, m.ArchiveRequests(c), m.RangeRequests(c))
			}
		},
		"mirror-reset": func(ts *testscript.TestScript, neg bool, args []string) {
			get(ts).ResetCounts()
		},
		// pypi-index [html] [releases=V,V...] [missing=PROJECT] [cuda13.5] [cudnn=V:MAJOR,MAJOR...]:
		// start a PEP 691 (or, with html, PEP 503 only) index of generated
		// NVIDIA wheels; point CUDAENV_PYPI_INDEX at it. releases limits it
		// to those catalog releases; cuda13.5 adds a CUDA 13.5 the catalog
		// does not know (as the real index had it); cudnn adds a cuDNN build;
		// lib=NAME:VERSION:MAJORS a library's (nccl:2.30.7:12,13);
		// missing leaves a project's wheels out. frameworks adds the torch
		// wheels of scriptFrameworks; toolkit the cuda-toolkit meta-packages
		// of scriptToolkit; zip64 torch wheels that lie about their zip
		// directory and size.
		// pypi-index hostile PROJECT KIND [PATH]: the same, with the
		// project's wheels carrying one of pypitest.Hostile's attacks.
		"pypi-index": func(ts *testscript.TestScript, neg bool, args []string) {
			var opts []pypitest.Option
			if len(args) > 0 && args[0] == "hostile" {
				if len(args) < 3 || len(args) > 4 {
					ts.Fatalf("usage: pypi-index hostile PROJECT KIND [PATH] (kinds: %s)", pypitest.HostileKinds)
				}
				entries, err := pypitest.Hostile(args[2], strings.Join(args[3:], ""))
				ts.Check(err)
				opts = append(opts, pypitest.Extra(args[1], entries...))
				args = nil
			}
			for _, a := range args {
				switch key, val, _ := strings.Cut(a, "="); key {
				case "html":
					opts = append(opts, pypitest.HTMLOnly())
				case "releases":
					opts = append(opts, pypitest.Releases(strings.Split(val, ",")...))
				case "missing":
					opts = append(opts, pypitest.Missing(val))
				case "cuda13.5":
					opts = append(opts, pypitest.ExtraRelease(pypi.Release{Version: "13.5.0", Components: []pypi.Component{
						{ID: "cuda_cudart", Version: "13.5.37"}, {ID: "cuda_nvcc", Version: "13.5.37"},
						{ID: "cuda_crt", Version: "13.5.37"}, {ID: "libnvvm", Version: "13.5.37"},
						{ID: "cccl", Version: "13.3.5.0.6"}, {ID: "libcublas", Version: "13.10.0.20"},
					}}))
				case "toolkit":
					opts = append(opts, scriptToolkit()...)
				case "cudnn":
					v, majors, _ := strings.Cut(val, ":")
					var ms []int
					for _, m := range strings.Split(majors, ",") {
						n, err := strconv.Atoi(m)
						ts.Check(err)
						ms = append(ms, n)
					}
					opts = append(opts, pypitest.ExtraCudnn(v, ms...))
				case "lib":
					// lib=nccl:2.30.7:12,13 adds a library's wheels.
					parts := strings.Split(val, ":")
					if len(parts) != 3 {
						ts.Fatalf("usage: pypi-index lib=NAME:VERSION:MAJORS")
					}
					var ms []int
					for _, m := range strings.Split(parts[2], ",") {
						n, err := strconv.Atoi(m)
						ts.Check(err)
						ms = append(ms, n)
					}
					opts = append(opts, pypitest.ExtraLibrary(parts[0], parts[1], ms...))
				case "frameworks":
					opts = append(opts, scriptFrameworks()...)
				case "resolve":
					opts = append(opts, scriptResolve()...)
				case "zip64":
					// zip64: hostile torch wheels served by range: 2.17.0
					// of 8 GiB whose zip64 end record claims 2^56 entries,
					// 2.18.0 whose page claims 2^62 bytes.
					lie := func(v string, entries uint64, size int64) pypitest.FrameworkWheel {
						return pypitest.FrameworkWheel{Project: "torch", Version: v, Serve: pypitest.ServeRanges, Zip64Entries: entries, ClaimSize: size,
							Requires: []string{`nvidia-cudnn-cu13==9.26.0.51; platform_system == "Linux"`}}
					}
					opts = append(opts, pypitest.Frameworks(lie("2.17.0", 1<<56, 8<<30), lie("2.18.0", 1<<40, 1<<62)))
				default:
					ts.Fatalf("pypi-index: unknown argument %q", a)
				}
			}
			ix := pypitest.New(t, opts...)
			ts.Setenv("CUDAENV_PYPI_INDEX", ix.URL())
		},
	}
}

// scriptToolkit is the cuda-toolkit meta-package as the real index has
// it (the research data in shared/nvidia/compat/cuda_toolkit_pypi.tsv): 13.5.0, a release the
// catalog lacks, whose "all" extra pins its wheels (and not the newer
// cuBLAS the index also has); 13.0.1 uploaded as 13.0.1.0; a pre-release
// 13.6.0rc1 with its runtime 13.6.46rc1; a 13.7.0 sdist with no wheel.
func scriptToolkit() []pypitest.Option {
	r135 := pypi.Release{Version: "13.5.0", Components: []pypi.Component{
		{ID: "cuda_cudart", Version: "13.5.37"}, {ID: "cuda_nvcc", Version: "13.5.37"},
		{ID: "cuda_crt", Version: "13.5.37"}, {ID: "libnvvm", Version: "13.5.37"},
		{ID: "cccl", Version: "13.3.5.0.6"}, {ID: "libcublas", Version: "13.10.0.20"},
	}}
	r1301, _ := pypi.CatalogRelease("13.0.1")
	rc := pypi.Release{Version: "13.6.0", Components: []pypi.Component{{ID: "cuda_cudart", Version: "13.6.46rc1"}}}
	return []pypitest.Option{
		pypitest.ExtraRelease(r135), pypitest.ExtraRelease(rc),
		pypitest.ExtraRelease(pypi.Release{Version: "13.5.9", Components: []pypi.Component{{ID: "libcublas", Version: "13.11.0.1"}}}),
		pypitest.Frameworks(pypitest.ToolkitWheel(r135, "13.5.0"), pypitest.ToolkitWheel(r1301, "13.0.1.0"), pypitest.ToolkitWheel(rc, "13.6.0rc1")),
		pypitest.Sdist(pypi.ToolkitProject, "13.7.0"),
	}
}

// scriptResolve are wheels whose requirements are real ones (read from
// pypi.org's torch 2.7.1, tensorflow 2.19.1 and xformers 0.0.35 wheels; see
// fetch/pypi/testdata/framework_requires.txt): torch 2.7.1 pins nvrtc of
// CUDA 12.6.2 and cuBLAS, nvJitLink of 12.6.3; tensorflow 2.19.1 pins
// 12.5.1's wheels exactly (a release the catalog lacks, which the index
// has, beside PyPI's cuda-toolkit 12.5.1 that pins 12.5.0's); xformers
// (py39-none) takes any torch>=2.7.
func scriptResolve() []pypitest.Option {
	cu126 := `; platform_system == "Linux" and platform_machine == "x86_64"`
	torch271 := []string{"filelock", "typing-extensions>=4.10.0", "nvidia-cuda-nvrtc-cu12==12.6.77" + cu126, "nvidia-cuda-runtime-cu12==12.6.77" + cu126,
		"nvidia-cuda-cupti-cu12==12.6.80" + cu126, "nvidia-cudnn-cu12==9.5.1.17" + cu126, "nvidia-cublas-cu12==12.6.4.1" + cu126,
		"nvidia-cufft-cu12==11.3.0.4" + cu126, "nvidia-curand-cu12==10.3.7.77" + cu126, "nvidia-cusolver-cu12==11.7.1.2" + cu126,
		"nvidia-cusparse-cu12==12.5.4.2" + cu126, "nvidia-nccl-cu12==2.26.2" + cu126, "nvidia-nvtx-cu12==12.6.77" + cu126,
		"nvidia-nvjitlink-cu12==12.6.85" + cu126, "nvidia-cufile-cu12==1.11.1.6" + cu126, "triton==3.3.1" + cu126}
	andCuda := func(reqs ...string) []string {
		for i, r := range reqs {
			reqs[i] = r + " ; extra == 'and-cuda'"
		}
		return reqs
	}
	tf := append([]string{"absl-py >=1.0.0", "numpy <2.2.0,>=1.26.0", `tensorflow-intel ==2.19.1 ; platform_system == "Windows"`}, andCuda(
		"nvidia-cublas-cu12 ==12.5.3.2", "nvidia-cuda-cupti-cu12 ==12.5.82", "nvidia-cuda-nvcc-cu12 ==12.5.82", "nvidia-cuda-nvrtc-cu12 ==12.5.82",
		"nvidia-cuda-runtime-cu12 ==12.5.82", "nvidia-cudnn-cu12 ==9.3.0.75", "nvidia-cufft-cu12 ==11.2.3.61", "nvidia-curand-cu12 ==10.3.6.82",
		"nvidia-cusolver-cu12 ==11.6.3.83", "nvidia-cusparse-cu12 ==12.5.1.3", "nvidia-nvjitlink-cu12 ==12.5.82")...)
	r1251 := pypi.Release{Version: "12.5.1", Components: []pypi.Component{
		{ID: "libcublas", Version: "12.5.3.2"}, {ID: "cuda_cupti", Version: "12.5.82"}, {ID: "cuda_nvcc", Version: "12.5.82"},
		{ID: "cuda_nvrtc", Version: "12.5.82"}, {ID: "cuda_cudart", Version: "12.5.82"}, {ID: "libcufft", Version: "11.2.3.61"},
		{ID: "libcurand", Version: "10.3.6.82"}, {ID: "libcusolver", Version: "11.6.3.83"}, {ID: "libcusparse", Version: "12.5.1.3"},
		{ID: "libnvjitlink", Version: "12.5.82"}, {ID: "cuda_cccl", Version: "12.5.39"},
	}}
	r1250, _ := pypi.CatalogRelease("12.5.0")
	return []pypitest.Option{
		pypitest.Releases("12.5.0", "12.6.2", "12.6.3"),
		pypitest.ExtraRelease(r1251),
		pypitest.Frameworks(
			pypitest.FrameworkWheel{Project: "torch", Version: "2.7.1", Serve: pypitest.ServeMetadata, Requires: torch271},
			pypitest.FrameworkWheel{Project: "tensorflow", Version: "2.19.1", Platform: "manylinux_2_17_x86_64.manylinux2014_x86_64", Serve: pypitest.ServeMetadata, Requires: tf, ProvidesExtra: []string{"and-cuda"}},
			pypitest.FrameworkWheel{Project: "xformers", Version: "0.0.35", Python: "py39", Serve: pypitest.ServeMetadata, Requires: []string{"torch>=2.7"}},
			pypitest.ToolkitWheel(r1250, "12.5.1"),
		),
		pypitest.ExtraCudnn("9.3.0.75", 12), pypitest.ExtraLibrary("nccl", "2.26.2", 12),
	}
}

// scriptFrameworks are torch wheels for the scripts: 2.15.0, newer than
// every table, read through range requests only (the server refuses a
// whole-file GET of it); 2.11.0, whose cuDNN pin (9.19.0.56) the table's
// row once got wrong, with a PEP 658 metadata file; 2.10.0, a small wheel
// read whole, whose cuDNN pin no table has; jax-cuda13-plugin 0.9.0, in
// no table, with ranges under its with-cuda extra; torch 2.16.0, whose
// METADATA is too big to believe. Pins are shaped as in
// the research data in shared/nvidia/compat/torch_pins.tsv.
func scriptFrameworks() []pypitest.Option {
	linux := `; platform_system == "Linux"`
	r1302, _ := pypi.CatalogRelease("13.0.2")
	return []pypitest.Option{
		// cuda-toolkit 13.0.2 as NVIDIA's is: an extra per component.
		pypitest.Frameworks(pypitest.ToolkitWheel(r1302, "13.0.2")),
		pypitest.Frameworks(
			pypitest.FrameworkWheel{Project: "torch", Version: "2.15.0", Serve: pypitest.ServeRanges, Padding: 5 << 20, Requires: []string{
				"filelock", `cuda-toolkit[cublas,cudart,cufft,nvrtc]==13.2.2` + linux, `nvidia-cudnn-cu13==9.26.0.51` + linux, `nvidia-nccl-cu13==2.30.1` + linux}},
			pypitest.FrameworkWheel{Project: "torch", Version: "2.11.0", Serve: pypitest.ServeMetadata, Requires: []string{
				`cuda-toolkit[cublas,cudart]==13.0.2` + linux, `nvidia-cudnn-cu13==9.19.0.56` + linux}},
			pypitest.FrameworkWheel{Project: "torch", Version: "2.10.0", Serve: pypitest.ServeWhole, Requires: []string{
				`nvidia-cuda-runtime-cu12==12.8.90` + linux, `nvidia-cublas-cu12==12.8.4.1` + linux, `nvidia-cudnn-cu12==9.99.0.1` + linux}},
			pypitest.FrameworkWheel{Project: "cuda-toolkit", Version: "13.2.2", Python: "py2.py3", Platform: "any", Serve: pypitest.ServeWhole, Requires: []string{
				`nvidia-cublas==13.3.0.5; extra == "cublas"`, `nvidia-cuda-runtime==13.2.86; extra == "cudart"`, `nvidia-curand==10.4.2.51; extra == "curand"`}},
			pypitest.FrameworkWheel{Project: "jax", Version: "0.9.0", Python: "py3", Platform: "any", Serve: pypitest.ServeMetadata, Requires: []string{
				`jax-cuda13-plugin[with-cuda]==0.9.0; extra == "cuda13"`}},
			pypitest.FrameworkWheel{Project: "jax-cuda13-plugin", Version: "0.9.0", Serve: pypitest.ServeMetadata, Requires: []string{
				"jax-cuda13-pjrt==0.9.0", `nvidia-cuda-runtime>=13.0.48; extra == "with-cuda"`, `nvidia-cudnn-cu13<10.0,>=9.12.0.46; extra == "with-cuda"`}},
			pypitest.FrameworkWheel{Project: "torch", Version: "2.16.0", Serve: pypitest.ServeMetadata,
				Metadata: "Metadata-Version: 2.1\nName: torch\nVersion: 2.16.0\nSummary: " + strings.Repeat("x", 5<<20) + "\n\n"},
		),
		pypitest.ExtraCudnn("9.26.0.51", 13), pypitest.ExtraCudnn("9.19.0.56", 13), pypitest.ExtraCudnn("9.99.0.1", 12),
		pypitest.ExtraLibrary("nccl", "2.30.1", 13),
	}
}
