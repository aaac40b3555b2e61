package compat

import (
	"strings"
	"testing"
)

func TestDriverCheckVerdict(t *testing.T) {
	tests := []struct {
		name, cuda, driver, want string
	}{
		{"a new enough driver runs it", "11.8", "535.104.05", "driver 535.104.05 runs it"},
		{"an older driver of the branch runs it through minor-version compatibility", "12.4", "535.104.05",
			"driver 535.104.05 runs it through minor-version compatibility (full support needs 550.54.14)"},
		{"a driver below the floor is too old", "12.4", "470.57.02", "driver 470.57.02 is too old (needs 550.54.14)"},
		{"no driver is fine for building", "12.4", "", "driver: none found (fine for building, not for running)"},
		{"a release the tables lack has an unknown requirement", "99.1", "550.54.15", "driver 550.54.15: unknown requirement"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CheckDriver(tt.cuda, tt.driver, "linux").Verdict(); got != tt.want {
				t.Errorf("CheckDriver(%q, %q).Verdict() = %q, want %q", tt.cuda, tt.driver, got, tt.want)
			}
		})
	}
}

func TestTorchMatrixRowVerdict(t *testing.T) {
	tests := []struct {
		name string
		row  TorchMatrixRow
		want string
	}{
		{"a driver that runs the build says runs", TorchMatrixRow{Driver: DriverOK, Need: "520.61.05"}, "runs"},
		{"minor-version compatibility is named", TorchMatrixRow{Driver: DriverMinorCompat, Need: "550.54.14"}, "runs (minor-version compat)"},
		{"a driver too old names the minimum", TorchMatrixRow{Driver: DriverTooOld, Need: "550.54.14"}, "driver too old (needs 550.54.14)"},
		{"no driver judged gives a dash", TorchMatrixRow{Need: "550.54.14"}, "-"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.row.Verdict(); got != tt.want {
				t.Errorf("Verdict() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestTorchMatrixVerdictsFollowTheDriver(t *testing.T) {
	for _, row := range TorchMatrix("535.104.05", "linux") {
		if row.Torch == "2.5.1" && row.Variant.Name == "cu118" && row.Verdict() != "runs" {
			t.Errorf("torch 2.5.1 cu118 with driver 535.104.05: %q, want runs", row.Verdict())
		}
		if row.Torch == "2.5.1" && row.Variant.Name == "cu124" && row.Verdict() != "runs (minor-version compat)" {
			t.Errorf("torch 2.5.1 cu124 with driver 535.104.05: %q, want runs (minor-version compat)", row.Verdict())
		}
	}
	for _, row := range TorchMatrix("", "linux") {
		if row.Verdict() != "-" {
			t.Fatalf("with no driver, %s %s says %q, want -", row.Torch, row.Variant.Name, row.Verdict())
		}
	}
}

func TestBuildFor(t *testing.T) {
	tests := []struct {
		name, torch, driver string
		wantCUDA, wantCudnn string // "" CUDA: none
	}{
		{"a current driver takes the newest CUDA build", "2.5.1", "550.54.15", "12.4", "9.1.0.70"},
		{"minor-version compatibility is enough", "2.5.1", "535.104.05", "12.4", "9.1.0.70"},
		{"no driver takes the newest CUDA build", "2.5.1", "", "12.4", "9.1.0.70"},
		{"an old driver falls back to the newest build it runs", "2.5.1", "470.57.02", "11.8", "9.1.0.70"},
		{"a driver too old for every build gets none", "2.5.1", "390.12", "", ""},
		{"torch 2.14 on Linux takes its Linux-only CUDA 13.4 build", "2.14.1", "", "13.4", ""},
		{"on Windows it takes the newest build made for Windows", "2.14.1 windows", "", "13.2", "9.24.0.43"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			torch, goos, _ := strings.Cut(tt.torch, " ")
			if goos == "" {
				goos = "linux"
			}
			rel, ok := Torch(torch)
			if !ok {
				t.Fatalf("torch %s not in the tables", torch)
			}
			v, ok := rel.BuildFor(tt.driver, goos)
			if tt.wantCUDA == "" {
				if ok {
					t.Fatalf("BuildFor(%q) = %s, want none", tt.driver, v.Name)
				}
				return
			}
			if !ok || v.CUDA != tt.wantCUDA || v.Cudnn != tt.wantCudnn {
				t.Errorf("BuildFor(%q) = CUDA %q cuDNN %q (%v), want CUDA %s cuDNN %s", tt.driver, v.CUDA, v.Cudnn, ok, tt.wantCUDA, tt.wantCudnn)
			}
		})
	}
}
