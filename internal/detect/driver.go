package detect

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Driver is the NVIDIA driver of the machine.
type Driver struct {
	Version string // "550.54.15"; "" when no driver was found
	Source  string // where Version was read: "CUDAENV_DRIVER_VERSION", a file, or an nvidia-smi path
	Open    bool   // the open kernel module ("Open Kernel Module" in /proc)
	// Tegra holds the L4T release a Jetson reports instead of a driver version
	// ("NVRM version: NVIDIA UNIX Kernel Module for aarch64  34.1.1").
	Tegra  string
	Detail string // why no driver was found, or what went wrong on the way
}

// Found reports whether a driver version is known.
func (d Driver) Found() bool { return d.Version != "" }

// Files the driver version is read from, in order.
const (
	SysModuleVersion = "/sys/module/nvidia/version"
	ProcDriverFile   = "/proc/driver/nvidia/version"
	WSLNvidiaSMI     = "/usr/lib/wsl/lib/nvidia-smi"
)

// DriverEnv overrides driver detection; "none" means "no driver" (for CI).
const DriverEnv = "CUDAENV_DRIVER_VERSION"

var reDriverVersion = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\d+\.\d+(\.\d+)?$`) })

// Driver finds the driver version: the CUDAENV_DRIVER_VERSION override, then
// /sys/module/nvidia/version, then /proc/driver/nvidia/version, then
// nvidia-smi (on PATH, or WSL's /usr/lib/wsl/lib/nvidia-smi). No driver is
// a normal answer, with Detail saying what was looked at.
func (h Host) Driver(ctx context.Context) Driver {
	if v, ok := h.Env[DriverEnv]; ok && strings.TrimSpace(v) != "" {
		v = strings.TrimSpace(v)
		if strings.EqualFold(v, "none") {
			return Driver{Source: DriverEnv, Detail: DriverEnv + "=none"}
		}
		if !reDriverVersion().MatchString(v) {
			return Driver{Source: DriverEnv, Detail: fmt.Sprintf("%s=%q is not a driver version like 550.54.15", DriverEnv, v)}
		}
		return Driver{Version: v, Source: DriverEnv}
	}
	if b, err := h.readFile(SysModuleVersion); err == nil {
		if v := strings.TrimSpace(string(b)); reDriverVersion().MatchString(v) {
			d := Driver{Version: v, Source: SysModuleVersion}
			if p, err := h.readFile(ProcDriverFile); err == nil {
				d.Open = strings.Contains(string(p), "Open Kernel Module")
			}
			return d
		}
	}
	if b, err := h.readFile(ProcDriverFile); err == nil {
		if d, ok := ParseProcVersion(b); ok {
			d.Source = ProcDriverFile
			return d
		}
	}
	gpus, smi, err := h.queryGPUs(ctx)
	switch {
	case smi == "":
		return Driver{Detail: "no NVIDIA kernel module loaded and no nvidia-smi found"}
	case err != nil:
		return Driver{Detail: err.Error()}
	case len(gpus) == 0:
		return Driver{Detail: smi + " lists no GPU"}
	}
	return Driver{Version: gpus[0].Driver, Source: smi}
}

var reProcVersion = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`NVRM version:.*?Kernel Module(?: for \S+)?\s+(\d+\.\d+(?:\.\d+)?)`)
})

// ParseProcVersion reads the driver version from the text of
// /proc/driver/nvidia/version, proprietary or open kernel module:
//
//	NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024
//	NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.15  Release Build  (...)
//
// On Jetson the number is an L4T release (below 100) and lands in Tegra.
func ParseProcVersion(b []byte) (Driver, bool) {
	m := reProcVersion().FindSubmatch(b)
	if m == nil {
		return Driver{}, false
	}
	v := string(m[1])
	d := Driver{Open: strings.Contains(string(b), "Open Kernel Module")}
	if major, _ := strconv.Atoi(strings.SplitN(v, ".", 2)[0]); major < 100 {
		d.Tegra = v
		d.Detail = "Jetson (L4T " + v + "): the driver comes with the board support package"
		return d, true
	}
	d.Version = v
	return d, true
}
