package query

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cudaenv/cudaenv/internal/activate"
	"github.com/cudaenv/cudaenv/internal/rootfs"
	"github.com/cudaenv/cudaenv/internal/termsafe"
	"github.com/cudaenv/cudaenv/store"
)

// listed is one entry as list shows it; list --json prints these.
type listed struct {
	Kind          string  `json:"kind"`
	Version       string  `json:"version"`
	CUDAMajor     int     `json:"cuda_major,omitempty"`
	Label         string  `json:"label"`
	Source        string  `json:"source"`
	Path          string  `json:"path"`
	LinkTarget    string  `json:"link_target,omitempty"`
	Profile       string  `json:"profile,omitempty"`
	Components    int     `json:"components"`
	LibrariesOnly bool    `json:"libraries_only"`
	SizeBytes     *int64  `json:"size_bytes"`               // null for linked trees: not the store's
	Store         string  `json:"store"`                    // user or system
	ShadowsSystem bool    `json:"shadows_system,omitempty"` // a user entry in front of the system store's
	Active        bool    `json:"active"`
	ActiveBy      string  `json:"active_by,omitempty"`
	Broken        *string `json:"broken,omitempty"`
	Damaged       *string `json:"damaged,omitempty"` // installed, but not whole: see store.Entry.Damage
	// Unchecked counts files whose inode was touched since they were
	// installed (a link made elsewhere, a chmod undone): their content was
	// not read; cudaenv verify reads them.
	Unchecked int `json:"unchecked,omitempty"`
	// Differs maps each component whose build is not the release's own
	// (install --for) to the release's own version ("" when none).
	Differs     map[string]string `json:"differs,omitempty"`
	differsText string
}

// List lists installed and linked versions (args: none) with their
// source, contents and size, marking the active ones; as JSON for scripts.
func List(in *In, args []string, asJSON bool) error {
	if len(args) > 0 {
		return errors.New("list takes no arguments; see: cudaenv list --help")
	}
	st := in.Store()
	active, _ := ResolveHere(in)
	var entries []store.Entry
	for _, k := range store.Kinds() {
		group, err := st.List(k)
		if err != nil {
			return err
		}
		entries = append(entries, group...)
	}
	// Each entry's fast check is a stat of each of its files: the
	// entries are checked at once, one a core.
	rows := make([]listed, len(entries))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(entries)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(entries); i = int(next.Add(1) - 1) {
				rows[i] = describe(entries[i], active)
			}
		})
	}
	wg.Wait()
	// Space that interrupted installs and uninstalls hold is not any
	// version's, yet it is the user's disk: say so rather than hide it.
	if left := st.Leftovers(); len(left) > 0 {
		var n int64
		for _, l := range left {
			n += l.Bytes
		}
		fmt.Fprintf(in.Stderr, "cudaenv: %s held by %s that an interrupted install or uninstall left (%s); the next install or uninstall frees it\n",
			HumanBytes(n), Plural(len(left), "folder"), termsafe.Escape(left[0].Path))
	}
	if asJSON {
		if rows == nil {
			rows = []listed{}
		}
		enc := json.NewEncoder(in.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	if len(rows) == 0 {
		fmt.Fprintln(in.Stderr, "cudaenv: nothing installed yet; run: cudaenv install 12.4 (or cudaenv link /usr/local/cuda-12.4)")
		return nil
	}
	width := 0
	for _, r := range rows {
		width = max(width, len(r.Label))
	}
	for _, r := range rows {
		mark := " "
		if r.Active {
			mark = "*"
		}
		// Paths come from wherever the user cd'ed to and what was linked.
		fmt.Fprintln(in.Stdout, termsafe.Escape(strings.TrimRight(fmt.Sprintf("%s %-*s  %s", mark, width, r.Label, r.details()), " ")))
	}
	return nil
}

// Holds says what an installed entry holds, as list and install say it:
// "default profile, 14 components" for CUDA; for a library (cuDNN, NCCL,
// …), installed whole, most often from one archive or wheel, only a count
// of more than one ("full profile, 1 component" would say nothing).
func Holds(k store.Kind, profile string, components int) string {
	var what []string
	library := k != store.CUDA
	if profile != "" && !library {
		what = append(what, profile+" profile")
	}
	if components > 1 || (components == 1 && !library) {
		what = append(what, Plural(components, "component"))
	}
	return strings.Join(what, ", ")
}

// details is the text after the version: where it came from, what it
// holds, its size, and why it is active.
func (r listed) details() string {
	var parts []string
	switch {
	case r.LinkTarget != "":
		parts = append(parts, "linked -> "+r.LinkTarget)
	case r.LibrariesOnly:
		parts = append(parts, "libraries only ("+r.Source+")")
	default:
		parts = append(parts, r.Source)
	}
	switch {
	case r.Store == "system":
		parts = append(parts, "(system store)")
	case r.ShadowsSystem:
		parts = append(parts, "(yours, in front of the system store's)")
	}
	var what []string
	if h := Holds(store.Kind(r.Kind), r.Profile, r.Components); h != "" {
		what = append(what, h)
	}
	if r.LibrariesOnly && r.LinkTarget != "" {
		what = append(what, "libraries only")
	}
	if len(what) > 0 {
		parts = append(parts, strings.Join(what, ", "))
	}
	if r.SizeBytes != nil {
		parts = append(parts, HumanBytes(*r.SizeBytes))
	}
	if r.differsText != "" {
		parts = append(parts, "with builds not its own: "+r.differsText)
	}
	if r.Broken != nil {
		parts = append(parts, "(broken: "+*r.Broken+")")
	}
	if r.Damaged != nil {
		parts = append(parts, "(damaged: "+*r.Damaged+"; repair: cudaenv verify --repair "+r.arg()+")")
	} else if r.Unchecked > 0 {
		parts = append(parts, "(unchecked: "+Plural(r.Unchecked, "file")+" touched since installed; check: cudaenv verify "+r.arg()+")")
	}
	if r.Active {
		parts = append(parts, "(set by "+r.ActiveBy+")")
	}
	return strings.Join(parts, "  ")
}

// arg is how a command line names the entry: 12.4.1, cudnn@9.5.1.17.
func (r listed) arg() string {
	if r.Kind != string(store.CUDA) {
		return r.Kind + "@" + r.Version
	}
	return r.Version
}

// Plural is "1 noun" or "N nouns".
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// HumanBytes is a size in bytes, KiB, MiB, … with one decimal.
func HumanBytes(n int64) string { return rootfs.SizeText(n) }

func describe(ent store.Entry, active activate.Resolved) listed {
	r := listed{
		Kind:       string(ent.Kind),
		Version:    ent.Version.String(),
		CUDAMajor:  ent.CUDAMajor,
		Label:      ent.Label(),
		Source:     ent.Receipt.Source,
		Path:       ent.Path,
		Profile:    ent.Receipt.Profile,
		Components: len(ent.Receipt.Components),
		Store:      "user",
		Differs:    ent.Receipt.Differs,
	}
	r.differsText = ent.Receipt.DiffersText()
	if ent.System {
		r.Store = "system"
	}
	r.ShadowsSystem = ent.Shadows
	if ent.Linked() {
		r.Source, r.LinkTarget = "link", ent.Path
	} else {
		// From the receipt; an entry installed before receipts recorded
		// it is walked.
		size := ent.Receipt.InstalledBytes
		if size <= 0 {
			size = rootfs.Size(ent.Dir)
		}
		r.SizeBytes = &size
	}
	health := ent.Health()
	damage := health.Damage
	if damage != nil {
		msg := damage.Error()
		r.Damaged = &msg
	}
	r.Unchecked = health.Unchecked
	if ent.Kind == store.CUDA && ent.Err == nil {
		// The receipt says for what cudaenv installed; a linked tree (or a
		// receipt from before the flag) is looked at. A damaged tree's
		// missing nvcc is damage, not a kind of install.
		r.LibrariesOnly = ent.Receipt.LibrariesOnly || (damage == nil && !hasCompiler(ent.Path))
	}
	if ent.Err != nil {
		msg := ent.Err.Error()
		r.Broken = &msg
	}
	for _, a := range active.Entries() {
		if a.Dir == ent.Dir {
			r.Active, r.ActiveBy = true, active.Selection.Source.String()
		}
	}
	return r
}

// hasCompiler reports whether a toolkit tree has nvcc.
func hasCompiler(root string) bool {
	for _, name := range []string{"nvcc", "nvcc.exe"} {
		if fi, err := os.Stat(filepath.Join(root, "bin", name)); err == nil && fi.Mode().IsRegular() {
			return true
		}
	}
	return false
}
