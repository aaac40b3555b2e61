package gen

import (
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
)

func TestCudnnFromManifests(t *testing.T) {
	fsys := fstest.MapFS{
		"redistrib_8.9.7.29.json": {Data: []byte(`{"release_date": "2023-12-05", "release_label": "8.9.7.29", "release_product": "cudnn-v8-9-cuda-12",
			"cudnn": {"name": "NVIDIA CUDA Deep Neural Network library", "version": "8.9.7.29", "linux-x86_64": {"relative_path": "x"}}}`)},
		"redistrib_8.9.7.json": {Data: []byte(`{"release_date": "2024-03-15", "release_label": "8.9.7", "release_product": "cudnn",
			"cudnn": {"version": "8.9.7.29", "cuda_variant": ["11", "12"], "linux-x86_64": {"cuda11": {}, "cuda12": {}}}}`)},
		"redistrib_9.12.0.json": {Data: []byte(`{"release_date": "2025-08-07", "cudnn": {"version": "9.12.0.46", "linux-x86_64": {"cuda12": {}}, "cuda_variant": ["12", "13"]}}`)},
		"SOURCES.md":            {Data: []byte("not a manifest")},
	}
	rows, err := CudnnFromManifests(fsys, "m")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("got %d rows: %+v", len(rows), rows)
	}
	if rows[0].Label != "8.9.7" || rows[0].Version != "8.9.7.29" || !reflect.DeepEqual(rows[0].Majors, []int{11, 12}) || rows[0].Date != "2024-03-15" {
		t.Errorf("the flat and the variant manifest of one library merge into one row: %+v", rows[0])
	}
	if !strings.Contains(rows[0].Source, "m/redistrib_8.9.7.json") || !strings.Contains(rows[0].Source, "m/redistrib_8.9.7.29.json") {
		t.Errorf("source names both manifests: %q", rows[0].Source)
	}
	if rows[1].Label != "9.12.0" || !reflect.DeepEqual(rows[1].Majors, []int{12, 13}) {
		t.Errorf("row = %+v", rows[1])
	}
}

func TestCudnnFromManifestsRejectsAManifestWithoutMajors(t *testing.T) {
	fsys := fstest.MapFS{"redistrib_9.0.0.json": {Data: []byte(`{"cudnn": {"version": "9.0.0.1"}}`)}}
	if _, err := CudnnFromManifests(fsys, "m"); err == nil {
		t.Error("want an error")
	}
}

func TestMergeCudnnKeepsRowsWithoutAManifest(t *testing.T) {
	existing := []CudnnRow{{Label: "9.8.0", Majors: []int{11, 12}, Source: "report"}, {Label: "9.5.1", Majors: []int{11}, Source: "old"}}
	fresh := []CudnnRow{{Label: "9.5.1", Version: "9.5.1.17", Majors: []int{11, 12}, Source: "manifest"}}
	got := MergeCudnn(existing, fresh)
	if len(got) != 2 || got[0].Source != "manifest" || got[1].Label != "9.8.0" {
		t.Errorf("MergeCudnn = %+v", got)
	}
}

func TestRenderRejectsBadData(t *testing.T) {
	good := map[string]string{}
	for _, tb := range tables {
		var h []string
		for _, c := range tb.columns {
			h = append(h, c.name)
		}
		good[tb.file] = "# comment\n" + strings.Join(h, "\t") + "\n"
	}
	tests := []struct{ name, file, body string }{
		{"a wrong header", "gpu_arch.tsv", "capability\tarch\n"},
		{"a short row", "gpu_arch.tsv", "capability\tarch\tmin_cuda\tmax_cuda\tsource\n9.0\tHopper\n"},
		{"a version that is not dotted numbers", "gpu_arch.tsv", "capability\tarch\tmin_cuda\tmax_cuda\tsource\n9.0\tHopper\t11.8x\t\tN\n"},
		{"an empty required cell", "torch_domains.tsv", "torch\ttorchvision\ttorchaudio\tsource\n2.5.1\t0.20.1\t2.5.1\t\n"},
		{"majors that are not integers", "cudnn_cuda.tsv", "label\tversion\tcuda_majors\trelease_date\tsource\n9.5.1\t\t11,x\t\tR\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for f, b := range good {
				fsys[f] = &fstest.MapFile{Data: []byte(b)}
			}
			fsys[tt.file] = &fstest.MapFile{Data: []byte(tt.body)}
			if _, err := Render(fsys); err == nil || !strings.Contains(err.Error(), tt.file) {
				t.Errorf("Render error = %v, want one naming %s", err, tt.file)
			}
		})
	}
	fsys := fstest.MapFS{}
	for f, b := range good {
		fsys[f] = &fstest.MapFile{Data: []byte(b)}
	}
	if _, err := Render(fsys); err != nil {
		t.Errorf("empty tables: %v", err)
	}
}
