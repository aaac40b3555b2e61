package doctor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cudaenv/cudaenv/internal/detect"
)

// torchHost is a machine whose driver is given and whose python3 has
// torch 2.4.0+cu121 on sys.path (withTorch), or none.
func torchHost(t *testing.T, driver string, withTorch bool) detect.Host {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{"/usr/bin/python3": ""}
	if withTorch {
		files["/site $dir/torch/version.py"] = "__version__ = '2.4.0+cu121'\ncuda: Optional[str] = '12.1'\n"
	}
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	run := func(_ context.Context, name string, args ...string) ([]byte, error) {
		return []byte("/site $dir\n"), nil
	}
	return detect.Host{Root: root, Run: run, GOOS: "linux", Env: map[string]string{"PATH": "/usr/bin", detect.DriverEnv: driver}}
}

func TestCompatTorch(t *testing.T) {
	tests := []struct {
		name      string
		driver    string
		withTorch bool
		version   string
		wantErr   string
		want      []string // build: verdict
		installed string
	}{
		{name: "a named release judges every CUDA build against the driver", driver: "535.104.05", version: "2.5.1", want: []string{
			"cu118: driver 535.104.05 runs it",
			"cu121: driver 535.104.05 runs it",
			"cu124: driver 535.104.05 runs it through minor-version compatibility (full support needs 550.54.14)",
		}},
		{name: "no driver is fine for building", driver: "none", version: "2.5.1+cu124", want: []string{
			"cu118: driver: none found (fine for building, not for running)",
			"cu121: driver: none found (fine for building, not for running)",
			"cu124: driver: none found (fine for building, not for running)",
		}},
		{name: "the installed torch is judged on its own build only", driver: "550.54.15", withTorch: true, installed: "2.4.0+cu121",
			want: []string{"cu121: driver 550.54.15 runs it"}},
		{name: "no installed torch says how to name one", driver: "550.54.15", wantErr: "compat: no torch in the active Python; name a release, e.g. cudaenv compat torch==2.5.1"},
		{name: "a release the tables lack is an error", driver: "550.54.15", version: "0.1.2", wantErr: "compat: torch 0.1.2 is not in cudaenv's tables; see: cudaenv compat"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := CompatTorch(context.Background(), torchHost(t, tt.driver, tt.withTorch), tt.version)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.installed != "" && (rep.Installed == nil || rep.Installed.Version != tt.installed) {
				t.Errorf("Installed = %+v, want torch %s", rep.Installed, tt.installed)
			}
			var got []string
			for _, b := range rep.Builds {
				got = append(got, b.Name+": "+b.Driver.Verdict())
				if b.Pip == "" || !strings.Contains(b.Pip, "/whl/"+b.Name) {
					t.Errorf("%s: pip line %q names no index for the build", b.Name, b.Pip)
				}
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("builds:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestCompatMatrixJudgesTheDetectedDriver(t *testing.T) {
	m := CompatMatrix(context.Background(), torchHost(t, "535.104.05", false))
	if m.Driver.Version != "535.104.05" || m.Driver.Source != detect.DriverEnv {
		t.Fatalf("Driver = %+v", m.Driver)
	}
	found := false
	for _, r := range m.Rows {
		if r.Torch == "2.5.1" && r.Variant.Name == "cu118" {
			found = true
			if r.Verdict() != "runs" {
				t.Errorf("2.5.1 cu118: %q, want runs", r.Verdict())
			}
		}
	}
	if !found {
		t.Error("no row for torch 2.5.1 cu118")
	}
}
