package detect

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// GPU is one device nvidia-smi lists.
type GPU struct {
	Index      int
	Name       string // "NVIDIA H200"
	ComputeCap string // "9.0"; "" when nvidia-smi is too old to report it
	Driver     string // driver version nvidia-smi reports
}

var (
	smiQuery    = []string{"--query-gpu=driver_version,name,compute_cap", "--format=csv,noheader"}
	smiQueryOld = []string{"--query-gpu=driver_version,name", "--format=csv,noheader"}
)

// GPUs lists the GPUs through nvidia-smi (on PATH, else WSL's). No nvidia-smi
// and "No devices were found" are normal: no GPUs and no error. An older
// nvidia-smi that lacks compute_cap is asked again without it.
func (h Host) GPUs(ctx context.Context) ([]GPU, error) {
	gpus, _, err := h.queryGPUs(ctx)
	return gpus, err
}

// NvidiaSMI returns the nvidia-smi to run: the one on PATH, else WSL's, else "".
func (h Host) NvidiaSMI() string {
	if p := h.LookPath("nvidia-smi"); p != "" {
		return p
	}
	if h.GOOS != "windows" && h.isFile(WSLNvidiaSMI) {
		return WSLNvidiaSMI
	}
	return ""
}

func (h Host) queryGPUs(ctx context.Context) ([]GPU, string, error) {
	smi := h.NvidiaSMI()
	if smi == "" {
		return nil, "", nil
	}
	out, err := h.run(ctx, smi, smiQuery...)
	withCap := true
	if err != nil && strings.Contains(string(out), "is not a valid field") {
		withCap = false
		out, err = h.run(ctx, smi, smiQueryOld...)
	}
	if strings.Contains(string(out), "No devices were found") {
		return nil, smi, nil
	}
	if err != nil {
		return nil, smi, fmt.Errorf("%s: %s", smi, firstLine(out, err))
	}
	gpus, err := ParseSMI(out, withCap)
	if err != nil {
		return nil, smi, fmt.Errorf("%s: %w", smi, err)
	}
	return gpus, smi, nil
}

// ParseSMI reads the output of `nvidia-smi --query-gpu=driver_version,name[,compute_cap]
// --format=csv,noheader`, one GPU per line: "550.54.15, NVIDIA H200, 9.0".
// withCap says whether the query asked for compute_cap. "[N/A]" values are
// read as empty.
func ParseSMI(out []byte, withCap bool) ([]GPU, error) {
	var gpus []GPU
	for _, line := range strings.Split(strings.ReplaceAll(string(out), "\r\n", "\n"), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		f := strings.Split(line, ",")
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
			if strings.HasPrefix(f[i], "[") {
				f[i] = "" // [N/A], [Not Supported]
			}
		}
		want := 2
		if withCap {
			want = 3
		}
		if len(f) < want || !reDriverVersion().MatchString(f[0]) {
			return nil, fmt.Errorf("unexpected line %q", line)
		}
		g := GPU{Index: len(gpus), Driver: f[0]}
		if withCap {
			g.Name = strings.Join(f[1:len(f)-1], ", ")
			g.ComputeCap = f[len(f)-1]
			if g.ComputeCap != "" {
				if _, err := strconv.ParseFloat(g.ComputeCap, 64); err != nil {
					return nil, fmt.Errorf("unexpected compute capability %q", g.ComputeCap)
				}
			}
		} else {
			g.Name = strings.Join(f[1:], ", ")
		}
		gpus = append(gpus, g)
	}
	return gpus, nil
}

func firstLine(out []byte, err error) string {
	s := strings.TrimSpace(string(out))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if s == "" {
		return err.Error()
	}
	return s
}
