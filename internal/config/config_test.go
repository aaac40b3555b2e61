package config

import "testing"

func TestParseReadsKeyValueLines(t *testing.T) {
	got, err := Parse("c", []byte("# defaults\nsource = pypi\r\npypi_index=\"https://m.example/simple/\" # campus\n\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got["source"] != "pypi" || got["pypi_index"] != "https://m.example/simple/" {
		t.Errorf("got %v", got)
	}
}

func TestParseRejectsTyposWithTheLine(t *testing.T) {
	tests := []struct{ desc, text, want string }{
		{"an unknown key", "sorce = pypi\n", `c:1: unknown setting "sorce"; known: mirror, pypi_index, source, system_root`},
		{"a line without =", "\nsource pypi\n", "c:2: expected key = value"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			if _, err := Parse("c", []byte(tt.text)); err == nil || err.Error() != tt.want {
				t.Errorf("err = %v, want %s", err, tt.want)
			}
		})
	}
}

// The way out a refused line is given works for that line: unset removes
// a line by its key, and a line with none (or with a key unset cannot be
// given) is only to be fixed or deleted.
func TestARefusedLineSaysHowToBeRidOfIt(t *testing.T) {
	tests := []struct{ desc, text, want string }{
		{"an unknown key", "sorce = pypi\n", "fix that line, or remove it with cudaenv config unset sorce"},
		{"a line without =", "source pypi\n", "fix that line, or delete it (it sets nothing)"},
		{"a key with a space", "so urce = pypi\n", "fix that line, or delete it (it sets nothing)"},
	}
	for _, tt := range tests {
		_, err := Parse("c", []byte(tt.text))
		le, ok := err.(*LineError)
		if !ok || le.Fix() != tt.want {
			t.Errorf("%s: %v, want %q", tt.desc, err, tt.want)
			continue
		}
		if le.Key != "" {
			if out, found := Unset([]byte(tt.text), le.Key); !found || len(out) != 0 {
				t.Errorf("%s: unset %s left %q", tt.desc, le.Key, out)
			}
		}
	}
}

func TestLookupFindsOneKeyWhateverElseTheFileHolds(t *testing.T) {
	tests := []struct {
		desc, text, want string
		found            bool
	}{
		{"a plain line", "system_root = /opt/cudaenv\n", "/opt/cudaenv", true},
		{"quoted, with a comment, CRLF and a BOM", "\xef\xbb\xbfsystem_root = \"/opt/cuda env\" # NFS\r\n", "/opt/cuda env", true},
		{"beside a typo", "sorce = pypi\nsystem_root=/lustre/cudaenv\n", "/lustre/cudaenv", true},
		{"the last line wins", "system_root = /a\nsystem_root = /b\n", "/b", true},
		{"commented out", "# system_root = /opt/cudaenv\n", "", false},
		{"a key that only starts the same", "system_root_old = /x\n", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			got, found := Lookup([]byte(tt.text), "system_root")
			if got != tt.want || found != tt.found {
				t.Errorf("Lookup = %q, %v; want %q, %v", got, found, tt.want, tt.found)
			}
		})
	}
}
