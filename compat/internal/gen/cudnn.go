package gen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// CudnnRow is one line of compat/data/cudnn_cuda.tsv.
type CudnnRow struct {
	Label   string // release label, e.g. "9.5.1"
	Version string // the cudnn component's version, e.g. "9.5.1.17"
	Majors  []int  // CUDA majors it is built for
	Date    string // release date from the manifest
	Source  string
}

var manifestName = regexp.MustCompile(`^redistrib_([0-9.]+)\.json$`)
var productMajor = regexp.MustCompile(`cuda-([0-9]+)$`)

// CudnnFromManifests reads every redistrib_<label>.json in fsys (NVIDIA's cuDNN
// manifests) and returns one row per cudnn component version, with the CUDA
// majors taken from cuda_variant (or, for the old single-variant format, from
// release_product "cudnn-v8-9-cuda-12"). dir is only used in the source column.
func CudnnFromManifests(fsys fs.FS, dir string) ([]CudnnRow, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("list cudnn manifests: %w", err)
	}
	byVersion := map[string]*CudnnRow{}
	for _, e := range entries {
		m := manifestName.FindStringSubmatch(e.Name())
		if m == nil || e.IsDir() {
			continue
		}
		data, err := fs.ReadFile(fsys, e.Name())
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", e.Name(), err)
		}
		row, err := cudnnRowFromManifest(data, m[1])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		row.Source = "manifest:" + path.Join(dir, e.Name()) + "(cudnn.cuda_variant|release_product)"
		if prev, ok := byVersion[row.Version]; ok {
			// Same library published twice (8.9.7.29 flat, then 8.9.7 with variants).
			prev.Majors = unionInts(prev.Majors, row.Majors)
			if len(row.Label) < len(prev.Label) {
				prev.Label, prev.Date = row.Label, row.Date
			}
			prev.Source += "; " + row.Source
			continue
		}
		byVersion[row.Version] = &row
	}
	rows := make([]CudnnRow, 0, len(byVersion))
	for _, r := range byVersion {
		rows = append(rows, *r)
	}
	sortCudnn(rows)
	return rows, nil
}

func cudnnRowFromManifest(data []byte, fileLabel string) (CudnnRow, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return CudnnRow{}, fmt.Errorf("decode manifest: %w", err)
	}
	var comp struct {
		Version     string   `json:"version"`
		CudaVariant []string `json:"cuda_variant"`
	}
	raw, ok := top["cudnn"]
	if !ok {
		return CudnnRow{}, fmt.Errorf("no cudnn component")
	}
	if err := json.Unmarshal(raw, &comp); err != nil {
		return CudnnRow{}, fmt.Errorf("decode cudnn component: %w", err)
	}
	var date, product string
	_ = json.Unmarshal(top["release_date"], &date)
	_ = json.Unmarshal(top["release_product"], &product)
	var ms []int
	for _, v := range comp.CudaVariant {
		n, err := strconv.Atoi(strings.SplitN(v, ".", 2)[0])
		if err != nil {
			return CudnnRow{}, fmt.Errorf("cuda_variant %q: %w", v, err)
		}
		ms = unionInts(ms, []int{n})
	}
	if len(ms) == 0 {
		m := productMajor.FindStringSubmatch(product)
		if m == nil {
			return CudnnRow{}, fmt.Errorf("no cuda_variant and release_product %q names no CUDA major", product)
		}
		n, _ := strconv.Atoi(m[1])
		ms = []int{n}
	}
	if comp.Version == "" {
		return CudnnRow{}, fmt.Errorf("cudnn component has no version")
	}
	return CudnnRow{Label: fileLabel, Version: comp.Version, Majors: ms, Date: date}, nil
}

// MergeCudnn returns existing with every row whose version (or label) also
// comes from a manifest replaced by the manifest's row, sorted by version.
func MergeCudnn(existing, fromManifests []CudnnRow) []CudnnRow {
	seen := map[string]bool{}
	for _, r := range fromManifests {
		seen[r.Version] = true
		seen[r.Label] = true
	}
	out := append([]CudnnRow(nil), fromManifests...)
	for _, r := range existing {
		if seen[r.Label] || (r.Version != "" && seen[r.Version]) {
			continue
		}
		out = append(out, r)
	}
	sortCudnn(out)
	return out
}

// ReadCudnnTSV returns the comment header and rows of cudnn_cuda.tsv.
func ReadCudnnTSV(fsys fs.FS) (comments []string, rows []CudnnRow, err error) {
	data, err := fs.ReadFile(fsys, "cudnn_cuda.tsv")
	if err != nil {
		return nil, nil, fmt.Errorf("read cudnn_cuda.tsv: %w", err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "#") {
			comments = append(comments, l)
		}
	}
	var t table
	for _, tt := range tables {
		if tt.file == "cudnn_cuda.tsv" {
			t = tt
		}
	}
	cells, err := readTSV(fsys, t)
	if err != nil {
		return nil, nil, err
	}
	for _, c := range cells {
		var ms []int
		for _, f := range strings.Split(c[2], ",") {
			n, _ := strconv.Atoi(f)
			ms = append(ms, n)
		}
		rows = append(rows, CudnnRow{Label: c[0], Version: c[1], Majors: ms, Date: c[3], Source: c[4]})
	}
	return comments, rows, nil
}

// FormatCudnnTSV renders rows as cudnn_cuda.tsv, comment lines first.
func FormatCudnnTSV(comments []string, rows []CudnnRow) []byte {
	var b bytes.Buffer
	for _, c := range comments {
		b.WriteString(c + "\n")
	}
	b.WriteString("label\tversion\tcuda_majors\trelease_date\tsource\n")
	for _, r := range rows {
		ms := make([]string, len(r.Majors))
		for i, m := range r.Majors {
			ms[i] = strconv.Itoa(m)
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\t%s\n", r.Label, r.Version, strings.Join(ms, ","), r.Date, r.Source)
	}
	return b.Bytes()
}

func sortCudnn(rows []CudnnRow) {
	sort.Slice(rows, func(i, j int) bool {
		a, b := rows[i].Version, rows[j].Version
		if a == "" {
			a = rows[i].Label
		}
		if b == "" {
			b = rows[j].Label
		}
		return compareDotted(a, b) < 0
	})
}

func compareDotted(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) || i < len(bs); i++ {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

func unionInts(a, b []int) []int {
	out := append([]int(nil), a...)
	for _, x := range b {
		found := false
		for _, y := range out {
			if x == y {
				found = true
			}
		}
		if !found {
			out = append(out, x)
		}
	}
	sort.Ints(out)
	return out
}
