package compat

import (
	"slices"
	"testing"
)

func TestArchsFor(t *testing.T) {
	tests := []struct {
		name, cuda     string
		has, hasNot    []string
		lowest, newest string
	}{
		{"11.8 targets Kepler up to Hopper", "11.8.0", []string{"3.5", "8.9", "9.0"}, []string{"10.0", "12.0"}, "3.5", "9.0"},
		{"12.0 dropped Kepler", "12.0.1", []string{"5.0", "9.0"}, []string{"3.5", "3.7"}, "5.0", "9.0"},
		{"12.8 adds Blackwell", "12.8.1", []string{"10.0", "12.0"}, []string{"10.3", "12.1"}, "5.0", "12.0"},
		{"13.0 drops Maxwell, Pascal and Volta", "13.0.0", []string{"7.5", "11.0", "12.1"}, []string{"5.0", "6.1", "7.0", "7.2", "10.1"}, "7.5", "12.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ArchsFor(tt.cuda)
			for _, c := range tt.has {
				if !slices.Contains(got, c) {
					t.Errorf("ArchsFor(%s) = %v, missing %s", tt.cuda, got, c)
				}
			}
			for _, c := range tt.hasNot {
				if slices.Contains(got, c) {
					t.Errorf("ArchsFor(%s) = %v, has %s", tt.cuda, got, c)
				}
			}
			if got[0] != tt.lowest || got[len(got)-1] != tt.newest {
				t.Errorf("ArchsFor(%s) spans %s..%s, want %s..%s", tt.cuda, got[0], got[len(got)-1], tt.lowest, tt.newest)
			}
		})
	}
}

func TestParseCapability(t *testing.T) {
	tests := []struct{ in, want string }{
		{"9.0", "9.0"}, {"sm_90", "9.0"}, {"compute_120", "12.0"}, {"sm_90a", "9.0"}, {"sm_100f", "10.0"}, {"86", "8.6"}, {" 12.0 ", "12.0"},
	}
	for _, tt := range tests {
		if got, ok := ParseCapability(tt.in); !ok || got != tt.want {
			t.Errorf("ParseCapability(%q) = %q, %v", tt.in, got, ok)
		}
	}
	for _, bad := range []string{"", "sm_", "hopper", "9.x"} {
		if got, ok := ParseCapability(bad); ok {
			t.Errorf("ParseCapability(%q) = %q, want failure", bad, got)
		}
	}
	if SM("12.0") != "sm_120" || SM("9.0") != "sm_90" {
		t.Error("SM wrong")
	}
	if a, ok := ArchInfo("sm_89"); !ok || a.Name != "Ada" || a.MinCUDA != "11.8" {
		t.Errorf("ArchInfo(sm_89) = %+v", a)
	}
}

func TestRubinIsTargetedFromCUDA13_4(t *testing.T) {
	a, ok := ArchInfo("10.7")
	if !ok || a.Name != "Rubin" || a.SM() != "sm_107" {
		t.Fatalf("ArchInfo(10.7) = %+v, %v", a, ok)
	}
	if slices.Contains(ArchsFor("13.3.1"), "10.7") || !slices.Contains(ArchsFor("13.4.1"), "10.7") {
		t.Errorf("10.7 in ArchsFor: 13.3.1 %v, 13.4.1 %v; want only from 13.4", ArchsFor("13.3.1"), ArchsFor("13.4.1"))
	}
}
