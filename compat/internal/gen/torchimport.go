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
	lines := strings.SplitAfter(string(repo), "\n")
	hdr := -1
	for i, l := range lines {
		if l != "" && !strings.HasPrefix(l, "#") {
			hdr = i
			break
		}
	}
	if hdr < 0 {
		return nil, nil, fmt.Errorf("torch_cuda.tsv: no header")
	}
	ri, err := columnIndex(strings.Split(strings.TrimRight(lines[hdr], "\n"), "\t"), "torch", "variant", "cudnn", "nccl", "pypi_default", "source")
	if err != nil {
		return nil, nil, fmt.Errorf("torch_cuda.tsv: %w", err)
	}
	rows := map[[2]string][]string{}
	byTorch := map[string][][]string{}
	cells := make([][]string, len(lines))
	for i := hdr + 1; i < len(lines); i++ {
		l := strings.TrimRight(lines[i], "\n")
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		c := strings.Split(l, "\t")
		if len(c) <= ri["source"] {
			return nil, nil, fmt.Errorf("torch_cuda.tsv line %d: %d columns", i+1, len(c))
		}
		cells[i] = c
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
		changed := false
		for _, f := range [][2]string{{"cudnn", cudnn}, {"nccl", nccl}, {"pypi_default", "linux"}} {
			if old := c[ri[f[0]]]; old != f[1] {
				if old != "" {
					notes = append(notes, fmt.Sprintf("torch %s %s %s: torch_cuda.tsv had %s, %s says %s", torch, def, f[0], old, label, f[1]))
				}
				c[ri[f[0]]] = f[1]
				changed = true
			}
		}
		// Only the build PyPI serves is the PyPI default.
		for _, o := range byTorch[torch] {
			if o[ri["variant"]] != def && o[ri["pypi_default"]] != "" {
				notes = append(notes, fmt.Sprintf("torch %s %s pypi_default: torch_cuda.tsv had %s, %s says PyPI serves %s", torch, o[ri["variant"]], o[ri["pypi_default"]], label, def))
				o[ri["pypi_default"]] = ""
			}
		}
		if changed || !strings.Contains(c[ri["source"]], label) {
			c[ri["source"]] += "; " + cite
		}
	}
	var b bytes.Buffer
	for i, l := range lines {
		if cells[i] == nil {
			b.WriteString(l)
			continue
		}
		b.WriteString(strings.Join(cells[i], "\t"))
		if strings.HasSuffix(l, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.Bytes(), notes, nil
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
