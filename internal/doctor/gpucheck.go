package doctor

import (
	_ "embed"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// GPUCheckSource is the CUDA program of `cudaenv doctor --gpu`: a device
// query, a kernel run on every device and a pinned host<->device copy
// bandwidth figure. Write it to GPUCheckFile, build it with GPUCheckArgs and
// hand its output to GPUCheck.
//
//go:embed gpucheck.cu
var GPUCheckSource []byte

// GPUCheckFile is the name to write GPUCheckSource under.
const GPUCheckFile = "gpucheck.cu"

// GPUCheckArgs are the nvcc arguments that build src into the executable out.
// No -arch: nvcc's default target embeds PTX, which the driver JIT-compiles
// for GPUs newer than the toolkit, so the test also runs there.
func GPUCheckArgs(src, out string) []string {
	return []string{"-O2", "-o", out, src}
}

// GPUDevice is one "device N: NAME, sm_XY, Z GiB" line of the self-test.
type GPUDevice struct {
	Index  int
	Name   string
	SM     string  // "sm_90"
	MemGiB float64 // total memory
	Kernel bool    // the test kernel ran and wrote the right values
}

// GPUCheckResult is what the self-test printed.
type GPUCheckResult struct {
	Driver, Runtime string // CUDA versions the driver and the runtime report, "12.4"
	Devices         []GPUDevice
	H2D, D2H        float64 // GB/s (1e9 bytes per second) on device 0
	Error           string  // the "error: ..." line, if any
}

var (
	reGCVersions = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^cuda driver (\d+\.\d+) runtime (\d+\.\d+)$`) })
	reGCDevice   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^device (\d+): (.*), (sm_\d+), ([0-9.]+) GiB$`) })
	reGCKernel   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^kernel (\d+): ok$`) })
	reGCBand     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^h2d ([0-9.]+) GB/s d2h ([0-9.]+) GB/s$`) })
)

// ParseGPUCheck reads the self-test's output. Lines it does not know are
// ignored.
func ParseGPUCheck(out []byte) GPUCheckResult {
	var r GPUCheckResult
	for _, line := range strings.Split(strings.ReplaceAll(string(out), "\r\n", "\n"), "\n") {
		line = strings.TrimSpace(line)
		if m := reGCVersions().FindStringSubmatch(line); m != nil {
			r.Driver, r.Runtime = m[1], m[2]
		} else if m := reGCDevice().FindStringSubmatch(line); m != nil {
			idx, _ := strconv.Atoi(m[1])
			mem, _ := strconv.ParseFloat(m[4], 64)
			r.Devices = append(r.Devices, GPUDevice{Index: idx, Name: m[2], SM: m[3], MemGiB: mem})
		} else if m := reGCKernel().FindStringSubmatch(line); m != nil {
			idx, _ := strconv.Atoi(m[1])
			for i := range r.Devices {
				if r.Devices[i].Index == idx {
					r.Devices[i].Kernel = true
				}
			}
		} else if m := reGCBand().FindStringSubmatch(line); m != nil {
			r.H2D, _ = strconv.ParseFloat(m[1], 64)
			r.D2H, _ = strconv.ParseFloat(m[2], 64)
		} else if strings.HasPrefix(line, "error: ") && r.Error == "" {
			r.Error = strings.TrimPrefix(line, "error: ")
		}
	}
	return r
}

// GPUCheck turns the self-test's build and run into the "gpu" check.
// buildErr is the nvcc failure (with its output), runOut and runErr what
// running the program gave.
func GPUCheck(buildOut []byte, buildErr error, runOut []byte, runErr error) Check {
	c := Check{ID: IDGPU}
	if buildErr != nil {
		c.Status = Fail
		c.Message = "the self-test did not compile: " + firstNonEmptyLine(buildOut, buildErr.Error())
		c.Hint = "see the host-compiler and toolkit checks"
		return c
	}
	r := ParseGPUCheck(runOut)
	var devs []string
	for _, d := range r.Devices {
		devs = append(devs, fmt.Sprintf("%s (%s, %.1f GiB)", d.Name, d.SM, d.MemGiB))
	}
	switch {
	case r.Error != "" || runErr != nil:
		c.Status = Fail
		msg := r.Error
		if msg == "" {
			msg = firstNonEmptyLine(runOut, runErr.Error())
		}
		c.Message = "the self-test failed: " + msg
		if strings.Contains(msg, "no kernel image is available") {
			c.Hint = "the toolkit cannot build for this GPU; see the gpu-arch check"
		} else if strings.Contains(msg, "insufficient for CUDA runtime") {
			c.Hint = "the driver is too old for this toolkit; see the driver check"
		}
	case len(r.Devices) == 0:
		c.Status = Fail
		c.Message = "the self-test reported no device"
	default:
		c.Status = OK
		c.Message = fmt.Sprintf("%s ran a kernel; h2d %.1f GB/s d2h %.1f GB/s", strings.Join(devs, ", "), r.H2D, r.D2H)
		for _, d := range r.Devices {
			if !d.Kernel {
				c.Status = Fail
				c.Message = fmt.Sprintf("device %d (%s) did not confirm its kernel run", d.Index, d.Name)
			}
		}
	}
	return c
}

func firstNonEmptyLine(out []byte, fallback string) string {
	for _, l := range strings.Split(string(out), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return fallback
}
