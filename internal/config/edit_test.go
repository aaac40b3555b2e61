package config

import (
	"strings"
	"testing"
)

func TestSetKeepsCommentsAndOtherLinesAndRewritesTheLastSettingLine(t *testing.T) {
	tests := []struct{ desc, in, key, value, want string }{
		{"an empty file gets the line", "", "source", "pypi", "source = pypi\n"},
		{"a key the file lacks is appended", "# mine\nmirror = https://m/\n", "source", "pypi", "# mine\nmirror = https://m/\nsource = pypi\n"},
		{"the line is rewritten in place, its comment dropped with it", "# mine\nsource = nvidia # old\nmirror = https://m/", "source", "pypi", "# mine\nsource = pypi\nmirror = https://m/\n"},
		{"a key set twice keeps one line, where the last was", "source = auto\nmirror = https://m/\nsource=nvidia\n", "source", "pypi", "mirror = https://m/\nsource = pypi\n"},
		{"a commented-out line stays a comment", "# source = pypi\n", "source", "auto", "# source = pypi\nsource = auto\n"},
		{"a key that only starts the same is another key", "system_root_old = /x\n", "system_root", "/opt/c", "system_root_old = /x\nsystem_root = /opt/c\n"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			got := string(Set([]byte(tt.in), tt.key, tt.value))
			if got != tt.want {
				t.Errorf("Set = %q, want %q", got, tt.want)
			}
			if m, err := Parse("c", []byte(got)); err == nil && m[tt.key] != tt.value {
				t.Errorf("the file reads back %s = %q", tt.key, m[tt.key])
			}
		})
	}
}

func TestUnsetRemovesEveryLineOfTheKeyEvenOneParseRefuses(t *testing.T) {
	got, found := Unset([]byte("# mine\nsorce = pypi\nsource = auto\nsorce=x\n"), "sorce")
	if !found || string(got) != "# mine\nsource = auto\n" {
		t.Errorf("Unset = %q, %v", got, found)
	}
	if _, found := Unset([]byte("source = auto\n"), "mirror"); found {
		t.Error("unset a key the file lacks")
	}
}

func TestValidateSaysWhatAKeyTakes(t *testing.T) {
	for _, tt := range []struct{ key, value, want string }{
		{"source", "pypi", ""},
		{"source", "auto", ""},
		{"source", "pip", `source: "pip" is not nvidia, pypi or auto`},
		{"mirror", "https://mirror.example/cuda", ""},
		{"mirror", "ftp://m/", `mirror: "ftp://m/" is not an http(s) URL`},
		{"pypi_index", "pypi.org/simple", `pypi_index: "pypi.org/simple" is not an http(s) URL`},
		{"system_root", "/opt/cudaenv", ""},
		{"system_root", "opt/cudaenv", `system_root: "opt/cudaenv" is not an absolute folder`},
		{"system_root", "/opt/a#b", "holds a '#'"},
		{"mirror", "https://m/\n", "control character"},
		{"source", "", "give a value"},
		{"sorce", "pypi", `unknown setting "sorce"; known: mirror, pypi_index, source, system_root`},
	} {
		err := Validate(tt.key, tt.value)
		if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("Validate(%q, %q) = %v; want %q", tt.key, tt.value, err, tt.want)
		}
	}
}
