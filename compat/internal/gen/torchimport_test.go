package gen

import (
	"os"
	"strings"
	"testing"
)

func TestImportTorch(t *testing.T) {
	repo, err := os.ReadFile("testdata/torch_cuda.tsv")
	if err != nil {
		t.Fatal(err)
	}
	variants, err := os.ReadFile("testdata/torch_variants.tsv")
	if err != nil {
		t.Fatal(err)
	}
	const label = "research/torch_variants.tsv"
	row := func(table []byte, key string) string {
		for _, l := range strings.Split(string(table), "\n") {
			if strings.HasPrefix(l, key+"\t") {
				return l
			}
		}
		return ""
	}
	tests := []struct {
		name      string
		repo      string
		variants  string
		wantErr   string
		wantNotes []string // each must appear in one note; none when empty
		check     func(t *testing.T, out string)
	}{
		{
			name: "a table that agrees with the research keeps every fact and cites the research once",
			repo: string(repo), variants: string(variants),
			check: func(t *testing.T, out string) {
				for _, key := range []string{"2.10\tcu128", "2.11\tcu130"} {
					before, after := row(repo, key), row([]byte(out), key)
					if !strings.HasPrefix(after, before+"; ") || strings.Count(after, label) != 1 {
						t.Errorf("%s: row %q, want the curated row plus one citation of %s", key, after, label)
					}
				}
				if row([]byte(out), "2.11\tcu126") != row(repo, "2.11\tcu126") {
					t.Error("a variant PyPI does not serve is left as curated")
				}
				if !strings.HasPrefix(out, string(repo[:strings.Index(string(repo), "2.10")])) {
					t.Error("comments and header are kept")
				}
			},
		},
		{
			name: "a wrong cuDNN pin is corrected from the research and reported",
			repo: strings.Replace(string(repo), "2.11\tcu130\tstable\trelease\t9.19.0.56", "2.11\tcu130\tstable\trelease\t9.17.1.4", 1), variants: string(variants),
			wantNotes: []string{"torch 2.11 cu130 cudnn: torch_cuda.tsv had 9.17.1.4, " + label + " says 9.19.0.56"},
			check: func(t *testing.T, out string) {
				if !strings.HasPrefix(row([]byte(out), "2.11\tcu130"), "2.11\tcu130\tstable\trelease\t9.19.0.56\t2.28.9\t") {
					t.Errorf("row = %q", row([]byte(out), "2.11\tcu130"))
				}
			},
		},
		{
			name: "a new row left without pins gets them from the research, with no disagreement to report",
			repo: strings.Replace(string(repo), "2.11\tcu130\tstable\trelease\t9.19.0.56\t2.28.9\t3.10-3.14, 3.14t\t\tlinux\t", "2.11\tcu130\tstable\trelease\t\t\t3.10-3.14, 3.14t\t\t\t", 1), variants: string(variants),
			check: func(t *testing.T, out string) {
				if !strings.HasPrefix(row([]byte(out), "2.11\tcu130"), "2.11\tcu130\tstable\trelease\t9.19.0.56\t2.28.9\t3.10-3.14, 3.14t\t\tlinux\t") {
					t.Errorf("row = %q", row([]byte(out), "2.11\tcu130"))
				}
			},
		},
		{
			name: "a variant wrongly marked as the PyPI default loses the mark",
			repo: strings.Replace(string(repo), "2.11\tcu126\tstable\trelease\t9.10.2.21\t2.28.9\t3.10-3.14, 3.14t\t\t", "2.11\tcu126\tstable\trelease\t9.10.2.21\t2.28.9\t3.10-3.14, 3.14t\t\tlinux", 1), variants: string(variants),
			wantNotes: []string{"torch 2.11 cu126 pypi_default: torch_cuda.tsv had linux, " + label + " says PyPI serves cu130"},
			check: func(t *testing.T, out string) {
				if row([]byte(out), "2.11\tcu126") != row(repo, "2.11\tcu126") {
					t.Errorf("row = %q", row([]byte(out), "2.11\tcu126"))
				}
			},
		},
		{
			name: "a release the table lacks is reported and not invented",
			repo: string(repo), variants: string(variants) + "2.16\t2027-01-01\tcu132\tcu132\t\t9.30.0.1\t2.31.1\t\t\t\tPyPI\n",
			wantNotes: []string{"torch 2.16 cu132: in " + label + " but not in torch_cuda.tsv"},
			check: func(t *testing.T, out string) {
				if strings.Contains(out, "2.16") {
					t.Error("a row for 2.16 was written without its role and python range")
				}
			},
		},
		{
			name: "a research row with shell text in a pin is skipped",
			repo: string(repo), variants: strings.Replace(string(variants), "\t9.19.0.56\t", "\t9.19.0.56; rm -rf ~\t", 1),
			wantNotes: []string{"skipped row"},
			check: func(t *testing.T, out string) {
				if strings.Contains(out, "rm -rf") || row([]byte(out), "2.11\tcu130") != row(repo, "2.11\tcu130") {
					t.Errorf("row = %q", row([]byte(out), "2.11\tcu130"))
				}
			},
		},
		{
			name: "research without a pin column is an error",
			repo: string(repo), variants: "torch\tpypi_default\tcudnn_pin\n2.10\tcu128\t9.10.2.21\n",
			wantErr: label + ": no nccl_pin column",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, notes, err := ImportTorch([]byte(tt.repo), []byte(tt.variants), label)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(notes) != len(tt.wantNotes) {
				t.Fatalf("notes = %q, want %q", notes, tt.wantNotes)
			}
			for i, w := range tt.wantNotes {
				if !strings.Contains(notes[i], w) {
					t.Errorf("note %q, want it to say %q", notes[i], w)
				}
			}
			tt.check(t, string(out))
			again, notes2, err := ImportTorch(out, []byte(tt.variants), label)
			if err != nil || string(again) != string(out) || len(notes2) > len(tt.wantNotes) {
				t.Errorf("a second import changes the table or reports more (notes %q)", notes2)
			}
		})
	}
}
