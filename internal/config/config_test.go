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
		{"an unknown key", "sorce = pypi\n", `c:1: unknown setting "sorce"; known: mirror, pypi_index, source`},
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
