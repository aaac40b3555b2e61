package version

import (
	"sort"
	"testing"
)

func TestCompareOrdersNumericallyPerComponent(t *testing.T) {
	tests := []struct {
		desc string
		a, b string
		want int
	}{
		{"a later minor with two digits sorts after a single-digit one", "12.10", "12.9", 1},
		{"equal versions compare equal", "12.4.1", "12.4.1", 0},
		{"a prefix sorts before the longer version", "12.4", "12.4.0", -1},
		{"four-part cuDNN versions compare by their last part", "8.9.7.29", "8.9.7.3", 1},
		{"majors dominate", "11.8.0", "13.0.0", -1},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			if got := Compare(MustParse(tt.a), MustParse(tt.b)); got != tt.want {
				t.Errorf("Compare(%s, %s) = %d, want %d", tt.a, tt.b, got, tt.want)
			}
		})
	}
}

func TestParseSpecAcceptsOnlyVersionText(t *testing.T) {
	tests := []struct {
		desc, in, want string
		bad            bool
	}{
		{desc: "a major alone is a spec", in: "12", want: "12"},
		{desc: "major and minor", in: "12.4", want: "12.4"},
		{desc: "a full version", in: "12.4.1", want: "12.4.1"},
		{desc: "latest", in: "latest", want: "latest"},
		{desc: "system", in: "system", want: "system"},
		{desc: "a cuDNN spec", in: "cudnn@9.5", want: "cudnn@9.5"},
		{desc: "a four-part cuDNN spec", in: "cudnn@8.9.7.29", want: "cudnn@8.9.7.29"},
		{desc: "an explicit cuda tool", in: "cuda@12.4", want: "12.4"},
		{desc: "a path is refused", in: "../../etc", bad: true},
		{desc: "an absolute path is refused", in: "/usr/local/cuda", bad: true},
		{desc: "a backslash is refused", in: `12\4`, bad: true},
		{desc: "command substitution is refused", in: "$(touch pwned)", bad: true},
		{desc: "backticks are refused", in: "`id`", bad: true},
		{desc: "a semicolon is refused", in: "12.4;rm", bad: true},
		{desc: "a control character is refused", in: "12.4\x1b", bad: true},
		{desc: "an empty component is refused", in: "12..4", bad: true},
		{desc: "a four-part CUDA version is refused", in: "12.4.1.1", bad: true},
		{desc: "an unknown tool is refused", in: "conda@2.1", bad: true},
		{desc: "an NCCL spec", in: "nccl@2.30", want: "nccl@2.30"},
		{desc: "a cuSPARSELt spec in capitals", in: "CUSPARSELT@0.8.1", want: "cusparselt@0.8.1"},
		{desc: "nccl cannot be system", in: "nccl@system", bad: true},
		{desc: "cudnn cannot be system", in: "cudnn@system", bad: true},
		{desc: "a huge number is refused", in: "12345678901234", bad: true},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			s, err := ParseSpec(tt.in)
			if tt.bad {
				if err == nil {
					t.Fatalf("ParseSpec(%q) = %v, want an error", tt.in, s)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseSpec(%q): %v", tt.in, err)
			}
			if got := s.String(); got != tt.want {
				t.Errorf("ParseSpec(%q).String() = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestBestPicksTheNewestMatch(t *testing.T) {
	installed := []Version{MustParse("11.8.0"), MustParse("12.4.0"), MustParse("12.4.1"), MustParse("12.10.0"), MustParse("12.9.1")}
	tests := []struct {
		desc, spec, want string
	}{
		{"a partial spec takes the newest patch", "12.4", "12.4.1"},
		{"a major takes the numerically newest minor", "12", "12.10.0"},
		{"latest takes the newest of all", "latest", "12.10.0"},
		{"an exact version matches itself", "12.4.0", "12.4.0"},
		{"a missing version matches nothing", "13", ""},
		{"12.1 does not match 12.10", "12.1", ""},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			s, err := ParseSpec(tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := Best(s, installed)
			if tt.want == "" {
				if ok {
					t.Fatalf("Best(%s) = %s, want no match", tt.spec, got)
				}
				return
			}
			if !ok || got.String() != tt.want {
				t.Errorf("Best(%s) = %s, %v; want %s", tt.spec, got, ok, tt.want)
			}
		})
	}
}

func TestVersionsSortWithCompare(t *testing.T) {
	vs := []Version{MustParse("12.10"), MustParse("12.9"), MustParse("12.2"), MustParse("11.8")}
	sort.Slice(vs, func(i, j int) bool { return Compare(vs[i], vs[j]) < 0 })
	got := ""
	for _, v := range vs {
		got += v.String() + " "
	}
	if want := "11.8 12.2 12.9 12.10 "; got != want {
		t.Errorf("sorted = %q, want %q", got, want)
	}
}
