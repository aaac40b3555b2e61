package gen

import (
	"os"
	"strings"
	"testing"
)

func TestImportDomains(t *testing.T) {
	repo, err := os.ReadFile("testdata/torch_domains.tsv")
	if err != nil {
		t.Fatal(err)
	}
	vision, err := os.ReadFile("testdata/torchvision_torch.tsv")
	if err != nil {
		t.Fatal(err)
	}
	const label = "../shared/nvidia/compat/torchvision_torch.tsv" // only a citation, as go generate writes it into the rows; never read
	row := func(table, key string) string {
		for _, l := range strings.Split(table, "\n") {
			if strings.HasPrefix(l, key+"\t") {
				return l
			}
		}
		return ""
	}
	tests := []struct {
		name      string
		repo      string
		vision    string
		wantNotes []string
		check     func(t *testing.T, out string)
	}{
		{
			name: "an agreeing pairing keeps its facts and cites the research once",
			repo: string(repo), vision: string(vision),
			check: func(t *testing.T, out string) {
				if got := row(out, "2.13.0"); !strings.HasPrefix(got, row(string(repo), "2.13.0")+"; torchvision: PyPI wheel METADATA Requires-Dist torch (==2.13.0) ("+label+")") {
					t.Errorf("2.13.0 = %q", got)
				}
				if row(out, "2.14.0") != row(string(repo), "2.14.0") {
					t.Error("a row already citing the research is left alone")
				}
			},
		},
		{
			name: "a torchvision that only asks for torch >= X pairs with no release",
			repo: string(repo), vision: string(vision),
			check: func(t *testing.T, out string) {
				if row(out, "2.14.1") != row(string(repo), "2.14.1") {
					t.Errorf("2.14.1 = %q", row(out, "2.14.1"))
				}
			},
		},
		{
			name: "a wrong torchvision is corrected and reported, torchaudio untouched",
			repo: strings.Replace(string(repo), "2.13.0\t0.28.0\t", "2.13.0\t0.27.1\t", 1), vision: string(vision),
			wantNotes: []string{"torch 2.13.0 torchvision: torch_domains.tsv had 0.27.1, " + label + " says 0.28.0"},
			check: func(t *testing.T, out string) {
				if !strings.HasPrefix(row(out, "2.13.0"), "2.13.0\t0.28.0\t\t") {
					t.Errorf("2.13.0 = %q", row(out, "2.13.0"))
				}
			},
		},
		{
			name: "a torch release the table lacks is reported and not invented",
			repo: string(repo), vision: string(vision) + "0.30.0\tlinux-x86_64\ttorch (==2.15.0)\tPyPI\n",
			wantNotes: []string{"torch 2.15.0: in " + label + " (torchvision 0.30.0) but not in torch_domains.tsv"},
			check: func(t *testing.T, out string) {
				if strings.Contains(out, "2.15.0") {
					t.Error("a 2.15.0 row was written")
				}
			},
		},
		{
			name: "a research row with a malformed version is skipped",
			repo: string(repo), vision: strings.Replace(string(vision), "0.28.0\t", "0.28.0$(id)\t", 1),
			wantNotes: []string{"skipped row"},
			check: func(t *testing.T, out string) {
				if strings.Contains(out, "$(id)") {
					t.Error("the malformed version reached the table")
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, notes, err := ImportDomains([]byte(tt.repo), []byte(tt.vision), label)
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
			again, _, err := ImportDomains(out, []byte(tt.vision), label)
			if err != nil || string(again) != string(out) {
				t.Error("a second import changes the table")
			}
		})
	}
}
