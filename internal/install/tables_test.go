package install

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/cudaenv/cudaenv/compat"
)

// Offline, every torch release in the tables is answered from them, from
// each source: the build PyPI serves (its CUDA release, cuDNN, NCCL,
// cuSPARSELt and NVSHMEM), said to come from the tables, and a dry run
// that names every version even though no file can be listed.
func TestForTorchOfflineAnswersEveryReleaseFromTheTables(t *testing.T) {
	releases := compat.TorchPyPIReleases("linux-x86_64")
	if len(releases) < 20 {
		t.Fatalf("%d releases in the table", len(releases))
	}
	for _, v := range releases {
		b, _ := compat.TorchPyPI(v, "linux-x86_64")
		for _, source := range Sources {
			t.Run(v+" from "+source, func(t *testing.T) {
				w := newWorld(t)
				in := w.installer(t, func(o *Options) { o.Offline = true })
				_, err := in.Install(context.Background(), Request{For: []string{"torch==" + v}, DryRun: true, Source: source})
				if err != nil {
					t.Fatalf("offline dry run: %v", err)
				}
				var answer *FrameworkFromTables
				var would []string
				for _, e := range w.rec.events {
					switch e := e.(type) {
					case FrameworkFromTables:
						answer = &e
					case WouldInstall:
						if e.Unlisted == "" || !strings.Contains(e.Unlisted, "offline") {
							t.Errorf("%s: unlisted %q, want the offline reason", e.Label, e.Unlisted)
						}
						would = append(would, e.Label)
					}
				}
				if answer == nil || answer.CUDA != b.CUDA || answer.Variant != b.Variant || answer.Cudnn != b.Cudnn || answer.NCCL != b.NCCL || answer.CuSPARSELt != b.CuSPARSELt || answer.NVSHMEM != b.NVSHMEM {
					t.Fatalf("answer %+v, want the row %+v", answer, b)
				}
				cudnn := b.Cudnn
				if source != "pypi" {
					cudnn = strings.Join(strings.Split(cudnn, ".")[:3], ".") // NVIDIA's release of the build
				}
				want := []string{"CUDA " + b.CUDA, "cuDNN " + cudnn, "NCCL " + b.NCCL}
				if b.CuSPARSELt != "" {
					want = append(want, "cuSPARSELt "+b.CuSPARSELt)
				}
				if b.NVSHMEM != "" {
					want = append(want, "NVSHMEM "+b.NVSHMEM)
				}
				if !slices.Equal(would, want) {
					t.Errorf("would install %q, want %q", would, want)
				}
			})
		}
	}
}

// PyPI's aarch64 wheel of torch before 2.11 is a CPU build: there is no
// CUDA to answer with, and the error says so.
func TestForTorchTablesRefuseACPUBuild(t *testing.T) {
	w := newWorld(t)
	in := w.installer(t, func(o *Options) { o.Offline = true })
	_, err := in.Install(context.Background(), Request{For: []string{"torch==2.10.0"}, DryRun: true, Platform: "linux-sbsa"})
	if err == nil || !strings.Contains(err.Error(), "PyPI's torch 2.10.0 wheel for linux-sbsa is a CPU build") {
		t.Fatalf("err = %v", err)
	}
	in = w.installer(t, func(o *Options) { o.Offline = true })
	if _, err := in.Install(context.Background(), Request{For: []string{"torch==2.11.0"}, DryRun: true, Platform: "linux-sbsa"}); err != nil {
		t.Fatalf("2.11.0 on linux-sbsa: %v", err)
	}
}
