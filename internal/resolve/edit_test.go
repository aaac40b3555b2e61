package resolve

import "testing"

func TestRewriteReplacesOnlyTheSpecs(t *testing.T) {
	for _, tc := range []struct{ name, old, specs, want string }{
		{"an empty file gets the specs", "", "12.4", "12.4\n"},
		{"a file of comments keeps them and gains the specs at the end", "# built with\n", "12.4", "# built with\n12.4\n"},
		{"comment lines around the specs stay in place", "# top\n11.8 cudnn@8.9\n\n# bottom\n", "12.4 cudnn@9.5", "# top\n12.4 cudnn@9.5\n\n# bottom\n"},
		{"a comment after the specs stays on their line", "11.8   # for detectron\n", "12.4", "12.4 # for detectron\n"},
		{"specs spread over lines collapse onto the first", "11.8\ncudnn@8.9 # old\n# end\n", "12.4", "12.4\n# old\n# end\n"},
		{"CRLF and a byte-order mark survive", "\uFEFF# win\r\n11.8\r\n", "12.4", "\uFEFF# win\r\n12.4\r\n"},
		{"a missing final newline is added", "11.8", "12.4", "12.4\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(Rewrite([]byte(tc.old), tc.specs)); got != tc.want {
				t.Errorf("Rewrite(%q, %q) = %q, want %q", tc.old, tc.specs, got, tc.want)
			}
		})
	}
}
