package compat

import (
	"reflect"
	"testing"
)

func TestPipLine(t *testing.T) {
	tests := []struct {
		name, torch, variant, want string
	}{
		{"a CUDA build gets its index and the matching domain libraries", "2.5.1", "cu124",
			"pip install torch==2.5.1 torchvision==0.20.1 torchaudio==2.5.1 --index-url https://download.pytorch.org/whl/cu124"},
		{"the seed guide's 2.4.0 pairs with torchvision 0.19.0 and torchaudio 2.4.0", "2.4.0", "cu124",
			"pip install torch==2.4.0 torchvision==0.19.0 torchaudio==2.4.0 --index-url https://download.pytorch.org/whl/cu124"},
		{"torch 2.0.0 wheels pair with torchvision 0.15.1 and torchaudio 2.0.1", "2.0.0", "cu118",
			"pip install torch==2.0.0 torchvision==0.15.1 torchaudio==2.0.1 --index-url https://download.pytorch.org/whl/cu118"},
		{"a release without torchaudio leaves it out", "2.12.0", "cu130",
			"pip install torch==2.12.0 torchvision==0.27.0 --index-url https://download.pytorch.org/whl/cu130"},
		{"a bare minor means its newest patch release", "2.5", "cu121",
			"pip install torch==2.5.1 torchvision==0.20.1 torchaudio==2.5.1 --index-url https://download.pytorch.org/whl/cu121"},
		{"no variant means PyPI's default build", "2.7.1", "",
			"pip install torch==2.7.1 torchvision==0.22.1 torchaudio==2.7.1"},
		{"the CPU build is always offered", "2.7.1", "cpu",
			"pip install torch==2.7.1 torchvision==0.22.1 torchaudio==2.7.1 --index-url https://download.pytorch.org/whl/cpu"},
		{"a variant the release was not built for gives nothing", "2.5.1", "cu128", ""},
		{"2.14 is released: its newest patch with the newest torchvision for it", "2.14", "cu130",
			"pip install torch==2.14.1 torchvision==0.29.2 --index-url https://download.pytorch.org/whl/cu130"},
		{"an unknown release gives nothing", "3.0.0", "cu124", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := PipLine(tt.torch, tt.variant); got != tt.want {
				t.Errorf("PipLine(%q, %q) =\n %q\nwant\n %q", tt.torch, tt.variant, got, tt.want)
			}
		})
	}
}

func TestTorch(t *testing.T) {
	rel, ok := Torch("2.5.1+cu124")
	if !ok {
		t.Fatal("Torch(2.5.1+cu124) not found")
	}
	if rel.Version != "2.5.1" || rel.Minor != "2.5" || rel.Torchvision != "0.20.1" || rel.Torchaudio != "2.5.1" {
		t.Errorf("Torch(2.5.1+cu124) = %+v", rel)
	}
	var names []string
	for _, v := range rel.Variants {
		names = append(names, v.Name+"="+v.CUDA+"/"+v.Cudnn)
	}
	if want := []string{"cu118=11.8/9.1.0.70", "cu121=12.1/9.1.0.70", "cu124=12.4/9.1.0.70"}; !reflect.DeepEqual(names, want) {
		t.Errorf("variants = %v, want %v", names, want)
	}

	t.Run("a pre-release is answered from its minor without domain libraries", func(t *testing.T) {
		rel, ok := Torch("2.6.0a0+ecf3bae40a.nv25.01")
		if !ok || rel.Version != "2.6.0" {
			t.Fatalf("Torch(pre-release) = %+v, %v", rel, ok)
		}
		if rel.Torchvision != "0.21.0" {
			t.Errorf("Torchvision = %q, want 0.21.0 (2.6.0 is in the table)", rel.Torchvision)
		}
	})
	t.Run("a patch release missing from the pairing table says so", func(t *testing.T) {
		rel, ok := Torch("2.6.3")
		if !ok || rel.Torchvision != "" || rel.Note == "" {
			t.Errorf("Torch(2.6.3) = %+v, %v", rel, ok)
		}
	})
	t.Run("2.14 is a release, built for CUDA 13.4 too, and 2.11 cu130 bundles the cuDNN its wheel pins", func(t *testing.T) {
		rel, ok := Torch("2.14")
		if _, cu134 := rel.Variant("cu134"); !ok || rel.Status != "release" || !cu134 {
			t.Errorf("Torch(2.14) = %+v, %v", rel, ok)
		}
		rel, _ = Torch("2.11.0")
		if v, _ := rel.Variant("cu130"); v.Cudnn != "9.19.0.56" {
			t.Errorf("torch 2.11 cu130 cuDNN = %q, want 9.19.0.56", v.Cudnn)
		}
		rel, ok = Torch("2.15.0")
		if v, _ := rel.Variant("cu132"); !ok || v.Cudnn != "9.26.0.51" || v.PyPIDefault != "linux" {
			t.Errorf("Torch(2.15.0) = %+v, %v", rel, ok)
		}
	})
	t.Run("an unknown release is not found", func(t *testing.T) {
		if _, ok := Torch("1.13.1"); ok {
			t.Error("Torch(1.13.1) found")
		}
	})
}

func TestVariantFor(t *testing.T) {
	rel, _ := Torch("2.5.1")
	tests := []struct{ cuda, want string }{
		{"12.6.3", "cu124"},
		{"12.4.1", "cu124"},
		{"12.2.0", "cu121"},
		{"11.8.0", "cu118"},
		{"12.0.0", "cu121"}, // every 12.x build is newer: the oldest of them
		{"13.0.0", ""},
	}
	for _, tt := range tests {
		got, _ := rel.VariantFor(tt.cuda)
		if got.Name != tt.want {
			t.Errorf("VariantFor(%q) = %q, want %q", tt.cuda, got.Name, tt.want)
		}
	}
}

func TestTorchReleasesCoverEveryMinor(t *testing.T) {
	rs := TorchReleases()
	if len(rs) < 14 || rs[0].Minor != "2.0" {
		t.Fatalf("TorchReleases() = %d releases starting at %q", len(rs), rs[0].Minor)
	}
	for _, r := range rs {
		if len(r.Variants) == 0 {
			t.Errorf("%s has no variants", r.Minor)
		}
	}
}

func TestVariantNames(t *testing.T) {
	if got := VariantName("12.4.1"); got != "cu124" {
		t.Errorf("VariantName(12.4.1) = %q", got)
	}
	if got := variantCUDA("cu118"); got != "11.8" {
		t.Errorf("variantCUDA(cu118) = %q", got)
	}
	if got := variantCUDA("cpu"); got != "" {
		t.Errorf("variantCUDA(cpu) = %q", got)
	}
}

func TestTorchMatrix(t *testing.T) {
	rows := TorchMatrix("550.54.15", "linux")
	if len(rows) < 40 || rows[0].Torch != "2.15" {
		t.Fatalf("TorchMatrix has %d rows, first %q", len(rows), rows[0].Torch)
	}
	status := map[string]DriverStatus{}
	for _, r := range rows {
		status[r.Torch+"+"+r.Variant.Name] = r.Driver
	}
	want := map[string]DriverStatus{
		"2.5.1+cu124":  DriverOK,
		"2.7.1+cu128":  DriverMinorCompat,
		"2.9.1+cu130":  DriverTooOld,
		"2.5.1+cu118":  DriverOK,
		"2.12.1+cu126": DriverMinorCompat,
	}
	for k, w := range want {
		if status[k] != w {
			t.Errorf("%s: %v, want %v", k, status[k], w)
		}
	}
	for _, r := range TorchMatrix("", "linux") {
		if r.Driver != DriverUnknown || r.Need == "" {
			t.Errorf("without a driver: %+v", r)
		}
	}
}
