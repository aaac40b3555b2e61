package resolve

import "strings"

// Rewrite returns a pin file's text with its specs replaced by specs and
// everything else kept: comment lines, blank lines, a comment after the
// specs, the byte-order mark and CRLF line ends. The specs go where the
// first spec line was, or at the end when there was none.
func Rewrite(old []byte, specs string) []byte {
	text := string(old)
	bom := ""
	if strings.HasPrefix(text, "\uFEFF") {
		bom, text = "\uFEFF", strings.TrimPrefix(text, "\uFEFF")
	}
	eol := "\n"
	if strings.Contains(text, "\r\n") {
		eol = "\r\n"
	}
	text = strings.TrimSuffix(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	var out []string
	placed := false
	if text != "" {
		for _, line := range strings.Split(text, "\n") {
			body, comment, hasComment := strings.Cut(line, "#")
			if strings.TrimSpace(body) == "" {
				out = append(out, line)
				continue
			}
			if placed {
				if hasComment {
					out = append(out, "#"+comment)
				}
				continue
			}
			placed = true
			if hasComment {
				out = append(out, specs+" #"+comment)
			} else {
				out = append(out, specs)
			}
		}
	}
	if !placed {
		out = append(out, specs)
	}
	return []byte(bom + strings.Join(out, eol) + eol)
}
