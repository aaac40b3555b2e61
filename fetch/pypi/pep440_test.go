package pypi

import (
	"slices"
	"testing"
)

// The cases follow PEP 440 and the packaging library's tests (what pip
// and uv answer).
func TestSpecifiersMeanWhatPEP440Says(t *testing.T) {
	tests := []struct {
		spec, version string
		want          bool
	}{
		// == and !=, with padding, local labels and wildcards.
		{"==13.0.2", "13.0.2", true},
		{"==13.0.2", "13.0.2.0", true},
		{"==13.0", "13.0.0", true},
		{"==13.0.2", "13.0.2+cu130", true},
		{"==13.0.2+cu130", "13.0.2", false},
		{"==13.0.2+cu130", "13.0.2+cu130", true},
		{"==13.0.2", "13.0.2.post1", false},
		{"!=13.0.2", "13.0.2+local", false},
		{"==12.9.1.4.*", "12.9.1.4", true},
		{"==12.9.1.4.*", "12.9.1.4.post1", true},
		{"==12.9.1.4.*", "12.9.1.40", false},
		{"==13.*", "13.0.3.0", true},
		{"==13.*", "12.9.1", false},
		{"==1.0.*", "1", true},
		{"==1.0.*", "1.0rc1", true},
		{"!=1.*", "1.5", false},
		{"!=1.*", "2.0", true},
		{"==1!2.0", "2.0", false},
		{"==1!2.0", "1!2.0", true},
		// Ordered comparisons.
		{"<=13.1.1.3", "13.1.1.3", true},
		{"<=13.1.1.3", "13.1.1.3+local", true},
		{">=13.1.0.3", "13.1.0.3", true},
		{">=13.1.0.3", "13.1.0.2", false},
		{"<2.0", "2.0rc1", false},
		{"<2.0rc2", "2.0rc1", true},
		{"<2.0", "1.9.post1", true},
		{">1.0", "1.0.post1", false},
		{">1.0.post1", "1.0.post2", true},
		{">1.0", "1.0+local", false},
		{">1.0", "1.1", true},
		{"<1!0.5", "3.0", true},
		// ~= (compatible release).
		{"~=2.1", "2.9", true},
		{"~=2.1", "3.0", false},
		{"~=2.1.3", "2.1.9", true},
		{"~=2.1.3", "2.2.0", false},
		{"~=2.1.3", "2.1.2", false},
		{"~=1.4.5a4", "1.4.5", true},
		// === compares the string.
		{"===12.4.127", "12.4.127", true},
		{"===12.4.127", "12.4.127.0", false},
		{"===foobar", "FooBar", true},
	}
	for _, tt := range tests {
		s, err := ParseSpecifier(tt.spec)
		if err != nil {
			t.Errorf("%s: %v", tt.spec, err)
			continue
		}
		if got := s.Allows(tt.version); got != tt.want {
			t.Errorf("%s allows %s = %v, want %v", tt.spec, tt.version, got, tt.want)
		}
	}
}

func TestSpecifierSetsTakePreReleasesOnlyWhenOneNamesThem(t *testing.T) {
	tests := []struct {
		req, version string
		want         bool
	}{
		{"x<=13.1.1.3,>=13.1.0.3", "13.1.1.3", true},
		{"x<=0.9.0,>=0.9.0", "0.9.0", true},
		{"x<=0.9.0,>=0.9.0", "0.9.0.1", false},
		{"x>=9.12", "9.30.0.1rc1", false},
		{"x>=9.30.0.1rc1", "9.30.0.1rc1", true},
		{"x!=9.30.0.1rc1", "9.30.0.2rc1", false},
		{"x==9.30.0.1rc1.*", "9.30.0.1rc1", true},
		{"x>=9", "9.30.0.1.dev3", false},
		{"x>=9.0.dev0", "9.30.0.1.dev3", true},
		{"x", "1.0", true},
		{"x", "1.0rc1", false},
	}
	for _, tt := range tests {
		d, err := ParseDependency(tt.req)
		if err != nil {
			t.Fatalf("%s: %v", tt.req, err)
		}
		if got := d.Allows(tt.version); got != tt.want {
			t.Errorf("%s allows %s = %v, want %v", tt.req, tt.version, got, tt.want)
		}
	}
}

func TestSpecifiersThatAreNotPEP440AreRefused(t *testing.T) {
	for _, s := range []string{"=>1.0", "==1.*.0", ">=1.0.*", "~=1", "~=1.0.*", ">=1.0+local", "==", "==1.0,", "===1 0", "<1.*"} {
		if _, err := ParseSpecifier(s); err == nil {
			t.Errorf("%q: no error", s)
		}
	}
}

func TestVersionsOrderAsPEP440Says(t *testing.T) {
	ordered := []string{
		"1.0.dev1", "1.0a1.dev1", "1.0a1", "1.0a2", "1.0b1", "1.0rc1", "1.0rc1.post1.dev1", "1.0rc1.post1", "1.0",
		"1.0+abc", "1.0+abc.5", "1.0+5", "1.0+5.abc", "1.0.post1.dev1", "1.0.post1", "1.0.1", "1.1", "1!0.1",
	}
	shuffled := slices.Clone(ordered)
	slices.Reverse(shuffled)
	slices.SortFunc(shuffled, compareVersions)
	if !slices.Equal(shuffled, ordered) {
		t.Errorf("sorted:\n%v\nwant\n%v", shuffled, ordered)
	}
	for _, pair := range [][2]string{{"1.0", "1.0.0"}, {"1.0-1", "1.0.post1"}, {"1.0c1", "1.0rc1"}, {"1.0.PREVIEW1", "1.0rc1"}, {"v1.0", "1.0"}, {"1.0_dev2", "1.0.dev2"}} {
		if !SameVersion(pair[0], pair[1]) {
			t.Errorf("%s and %s differ", pair[0], pair[1])
		}
	}
}

func TestWheelTagsRankAsPipDoes(t *testing.T) {
	linux := WheelTarget{Platform: LinuxX86_64, Python: "3.12"}
	rank := func(t *testing.T, target WheelTarget, name string) (int, bool) {
		t.Helper()
		w, err := ParseWheelName(name)
		if err != nil {
			t.Fatal(err)
		}
		return target.tagRank(w)
	}
	// Best first, as packaging.tags.sys_tags orders them for CPython 3.12.
	ordered := []string{
		"x-1-cp312-cp312-manylinux_2_28_x86_64.whl",
		"x-1-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
		"x-1-cp312-cp312-manylinux2014_x86_64.whl",
		"x-1-cp312-cp312-manylinux1_x86_64.whl",
		"x-1-cp312-cp312-linux_x86_64.whl",
		"x-1-cp312-abi3-manylinux_2_28_x86_64.whl",
		"x-1-cp312-none-manylinux_2_28_x86_64.whl",
		"x-1-cp311-abi3-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl",
		"x-1-cp38-abi3-manylinux_2_28_x86_64.whl",
		"x-1-cp32-abi3-manylinux_2_28_x86_64.whl",
		"x-1-py312-none-manylinux_2_28_x86_64.whl",
		"x-1-py3-none-manylinux2014_x86_64.whl",
		"x-1-py39-none-manylinux_2_28_x86_64.whl",
		"x-1-py30-none-manylinux_2_28_x86_64.whl",
		"x-1-cp312-none-any.whl",
		"x-1-py312-none-any.whl",
		"x-1-py2.py3-none-any.whl",
		"x-1-py311-none-any.whl",
	}
	prev := -1
	for _, name := range ordered {
		r, ok := rank(t, linux, name)
		if !ok || r <= prev {
			t.Errorf("%s: rank %d (ok %v), after %d", name, r, ok, prev)
		}
		prev = r
	}
	for _, name := range []string{
		"x-1-cp313-cp313-manylinux_2_28_x86_64.whl",
		"x-1-cp311-cp311-manylinux_2_28_x86_64.whl",
		"x-1-cp313-abi3-manylinux_2_28_x86_64.whl",
		"x-1-cp312-cp312t-manylinux_2_28_x86_64.whl",
		"x-1-cp312-cp312-manylinux_2_28_aarch64.whl",
		"x-1-cp312-cp312-musllinux_1_2_x86_64.whl",
		"x-1-cp312-cp312-win_amd64.whl",
		"x-1-py313-none-any.whl",
		"x-1-py2-none-any.whl",
		"x-1-cp312-cp312-any.whl",
		"x-1-pp310-pypy310_pp73-manylinux_2_28_x86_64.whl",
	} {
		if r, ok := rank(t, linux, name); ok {
			t.Errorf("%s fits (rank %d)", name, r)
		}
	}
	old := WheelTarget{Platform: LinuxX86_64, Python: "3.12", Glibc: 17}
	if _, ok := rank(t, old, "x-1-cp312-cp312-manylinux_2_28_x86_64.whl"); ok {
		t.Error("glibc 2.17 takes a manylinux_2_28 wheel")
	}
	musl := WheelTarget{Platform: LinuxX86_64, Python: "3.12", Musl: 2}
	a, okA := rank(t, musl, "x-1-cp312-cp312-musllinux_1_2_x86_64.whl")
	b, okB := rank(t, musl, "x-1-cp312-cp312-musllinux_1_1_x86_64.whl")
	if _, bad := rank(t, musl, "x-1-cp312-cp312-manylinux_2_28_x86_64.whl"); !okA || !okB || a >= b || bad {
		t.Errorf("musl: %d %v, %d %v, manylinux %v", a, okA, b, okB, bad)
	}
	win := WheelTarget{Platform: WindowsX86_64, Python: "3.12"}
	if _, ok := rank(t, win, "x-1-cp312-cp312-win_amd64.whl"); !ok {
		t.Error("win_amd64 does not fit windows-x86_64")
	}
	arm := WheelTarget{Platform: LinuxSBSA, Python: "3.12"}
	if _, ok := rank(t, arm, "x-1-cp312-cp312-manylinux2014_aarch64.whl"); !ok {
		t.Error("manylinux2014_aarch64 does not fit linux-sbsa")
	}
}
