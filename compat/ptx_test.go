package compat

import "testing"

func TestPTXBuiltWith(t *testing.T) {
	for isa, want := range map[string]string{"7.8": "11.8", "8.4": "12.4", "8.5": "12.5", "8.6": "12.7", "9.0": "13.0", "9.5": "13.5", "6.5": "10.2"} {
		if got, ok := PTXBuiltWith(isa); !ok || got != want {
			t.Errorf("PTXBuiltWith(%s) = %q, %v; want %s", isa, got, ok, want)
		}
	}
	if _, ok := PTXBuiltWith("99.9"); ok {
		t.Error("an unknown ISA has a release")
	}
	// Newer ISA, newer or same CUDA, every row.
	for i := 1; i < len(ptxISARows); i++ {
		a, b := ptxISARows[i-1], ptxISARows[i]
		if CompareVersions(a.isa, b.isa) >= 0 || CompareVersions(a.cuda, b.cuda) >= 0 {
			t.Errorf("rows out of order: %v then %v", a, b)
		}
	}
	if isa, cuda := NewestPTXISA(); isa != "9.5" || cuda != "13.5" {
		t.Errorf("newest %s %s", isa, cuda)
	}
}
