package gen

import (
	"bytes"
	"fmt"
	"strings"
)

// ImportTorch merges the PyPI-wheel facts of the research table
// torch_variants.tsv (which CUDA build PyPI serves, and the cuDNN and NCCL
// that wheel pins) into the curated torch_cuda.tsv. Columns the research does
// not have (role, python, os, the other variants) stay as curated; for the
// fields it has, the research wins and every change is returned as a note for
// the maintainer. A release or variant missing from torch_cuda.tsv is only
// noted: its role and Python range come from PyTorch's release matrix, which
// the research does not carry. label names the research file in sources.
func ImportTorch(repo, variants []byte, label string) ([]byte, []string, error) {
	vHeader, vRows, err := splitTSV(variants)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", label, err)
	}
	vi, err := columnIndex(vHeader, "torch", "pypi_default", "cudnn_pin", "nccl_pin")
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", label, err)
	}
	tbl, err := parseCurated(repo, "torch_cuda.tsv", "torch", "variant", "cudnn", "nccl", "pypi_default", "source")
	if err != nil {
		return nil, nil, err
	}
	ri := tbl.col
	rows := map[[2]string][]string{}
	byTorch := map[string][][]string{}
	for _, c := range tbl.cells {
		if c == nil {
			continue
		}
		rows[[2]string{c[ri["torch"]], c[ri["variant"]]}] = c
		byTorch[c[ri["torch"]]] = append(byTorch[c[ri["torch"]]], c)
	}
	var notes []string
	cite := "cudnn/nccl/pypi_default: PyPI wheel METADATA Requires-Dist + torch/version.py (" + label + ")"
	for _, v := range vRows {
		torch, def, cudnn, nccl := v[vi["torch"]], v[vi["pypi_default"]], v[vi["cudnn_pin"]], v[vi["nccl_pin"]]
		if !isVersion(torch) || !isVariant(def) || !isVersion(cudnn) || !isVersion(nccl) {
			notes = append(notes, fmt.Sprintf("%s: skipped row %q: torch, pypi_default, cudnn_pin or nccl_pin malformed", label, strings.Join(v, "\t")))
			continue
		}
		c, ok := rows[[2]string{torch, def}]
		if !ok {
			notes = append(notes, fmt.Sprintf("torch %s %s: in %s but not in torch_cuda.tsv; add its row (role and python from RELEASE.md) and rerun", torch, def, label))
			continue
		}
		for _, f := range [][2]string{{"cudnn", cudnn}, {"nccl", nccl}, {"pypi_default", "linux"}} {
			if old := c[ri[f[0]]]; old != f[1] {
				if old != "" {
					notes = append(notes, fmt.Sprintf("torch %s %s %s: torch_cuda.tsv had %s, %s says %s", torch, def, f[0], old, label, f[1]))
				}
				c[ri[f[0]]] = f[1]
			}
		}
		// Only the build PyPI serves is the PyPI default.
		for _, o := range byTorch[torch] {
			if o[ri["variant"]] != def && o[ri["pypi_default"]] != "" {
				notes = append(notes, fmt.Sprintf("torch %s %s pypi_default: torch_cuda.tsv had %s, %s says PyPI serves %s", torch, o[ri["variant"]], o[ri["pypi_default"]], label, def))
				o[ri["pypi_default"]] = ""
			}
		}
		// A row that already names the research keeps its own wording.
		if !strings.Contains(c[ri["source"]], label) {
			c[ri["source"]] += "; " + cite
		}
	}
	return tbl.bytes(), notes, nil
}

// curated is a compat/data TSV split into lines, so a merge can rewrite rows
// in place and keep comments, order and everything it does not touch.
type curated struct {
	lines []string   // with their "\n"
	cells [][]string // per line: the row's cells, nil for comments and the header
	col   map[string]int
}

func parseCurated(data []byte, name string, need ...string) (*curated, error) {
	t := &curated{lines: strings.SplitAfter(string(data), "\n")}
	t.cells = make([][]string, len(t.lines))
	hdr := -1
	for i, l := range t.lines {
		l = strings.TrimRight(l, "\n")
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		c := strings.Split(l, "\t")
		if hdr < 0 {
			hdr = i
			col, err := columnIndex(c, need...)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			t.col = col
			continue
		}
		if len(c) != len(strings.Split(strings.TrimRight(t.lines[hdr], "\n"), "\t")) {
			return nil, fmt.Errorf("%s line %d: %d columns", name, i+1, len(c))
		}
		t.cells[i] = c
	}
	if hdr < 0 {
		return nil, fmt.Errorf("%s: no header", name)
	}
	return t, nil
}

func (t *curated) bytes() []byte {
	var b bytes.Buffer
	for i, l := range t.lines {
		if t.cells[i] == nil {
			b.WriteString(l)
			continue
		}
		b.WriteString(strings.Join(t.cells[i], "\t"))
		if strings.HasSuffix(l, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

// ImportDomains checks torch_domains.tsv against the research table
// torchvision_torch.tsv (each torchvision wheel's Requires-Dist on torch).
// Only exact pins (torch (==X)) name a pairing; a range such as >=2.14.0 fits
// several torch releases, so those rows stay as curated. torchaudio is not in
// the research and is never touched; a torch release the table lacks is noted.
func ImportDomains(repo, vision []byte, label string) ([]byte, []string, error) {
	vHeader, vRows, err := splitTSV(vision)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", label, err)
	}
	vi, err := columnIndex(vHeader, "torchvision", "torch_requirement")
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", label, err)
	}
	tbl, err := parseCurated(repo, "torch_domains.tsv", "torch", "torchvision", "source")
	if err != nil {
		return nil, nil, err
	}
	ri := tbl.col
	rows := map[string][]string{}
	for _, c := range tbl.cells {
		if c != nil {
			rows[c[ri["torch"]]] = c
		}
	}
	var notes []string
	seen := map[string]bool{}
	for _, v := range vRows {
		tv, req := v[vi["torchvision"]], v[vi["torch_requirement"]]
		torch, exact := strings.CutPrefix(req, "torch (==")
		torch, closed := strings.CutSuffix(torch, ")")
		if !exact || !closed {
			continue
		}
		if !isVersion(tv) || !isVersion(torch) {
			notes = append(notes, fmt.Sprintf("%s: skipped row %q: torchvision or torch_requirement malformed", label, strings.Join(v, "\t")))
			continue
		}
		if seen[torch] {
			continue // one torchvision per torch: the first the research lists
		}
		seen[torch] = true
		c, ok := rows[torch]
		if !ok {
			notes = append(notes, fmt.Sprintf("torch %s: in %s (torchvision %s) but not in torch_domains.tsv; add its row (torchaudio by hand) and rerun", torch, label, tv))
			continue
		}
		if old := c[ri["torchvision"]]; old != tv {
			if old != "" {
				notes = append(notes, fmt.Sprintf("torch %s torchvision: torch_domains.tsv had %s, %s says %s", torch, old, label, tv))
			}
			c[ri["torchvision"]] = tv
		}
		if !strings.Contains(c[ri["source"]], label) {
			c[ri["source"]] += "; torchvision: PyPI wheel METADATA Requires-Dist torch (==" + torch + ") (" + label + ")"
		}
	}
	return tbl.bytes(), notes, nil
}

// splitTSV returns the header and rows of a research TSV, skipping # lines.
func splitTSV(data []byte) ([]string, [][]string, error) {
	var header []string
	var rows [][]string
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimRight(l, "\r")
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		c := strings.Split(l, "\t")
		if header == nil {
			header = c
			continue
		}
		for len(c) < len(header) {
			c = append(c, "")
		}
		rows = append(rows, c)
	}
	if header == nil {
		return nil, nil, fmt.Errorf("no header")
	}
	return header, rows, nil
}

func columnIndex(header []string, names ...string) (map[string]int, error) {
	idx := map[string]int{}
	for i, h := range header {
		idx[h] = i
	}
	for _, n := range names {
		if _, ok := idx[n]; !ok {
			return nil, fmt.Errorf("no %s column", n)
		}
	}
	return idx, nil
}

func isVariant(v string) bool {
	return strings.HasPrefix(v, "cu") && len(v) > 2 && isVersion(v[2:])
}
