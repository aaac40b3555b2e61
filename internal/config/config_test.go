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
