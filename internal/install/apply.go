package install

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cudaenv/cudaenv/fetch"
	"github.com/cudaenv/cudaenv/internal/filelist"
	"github.com/cudaenv/cudaenv/store"
)

// Apply carries out a plan under the entry's store lock: an entry that is
// linked is left alone; one that is installed with every planned component
// is left alone unless force; one that lacks components gets them (the
// union is fetched again, the archives it had from the cache, and replaces
// the old tree). Otherwise the archives are downloaded, verified and
// staged, the receipt written last, and Options.Changed run. The Result is
// reported as well as returned.
func (in *Installer) Apply(ctx context.Context, pl *Plan, force bool) (Result, error) {
	st := in.opts.Store
	unlock, err := st.LockContext(ctx, pl.Kind, pl.Name)
	if errors.Is(err, store.ErrLockWait) {
		return Result{}, fmt.Errorf("install %s: %w; nothing was installed", pl.Label, err)
	}
	if err != nil {
		return Result{}, err
	}
	defer unlock()
	res := Result{Label: pl.Label, Use: pl.Name}
	if pl.Kind.Library() {
		res.Use = strconv.Itoa(pl.CUDAMajor) + " " + string(pl.Kind) + "@"
		if pl.useWith != "" {
			res.Use = pl.useWith + " " + string(pl.Kind) + "@"
		}
	}
	if have, ok := st.Get(pl.Kind, pl.Name); ok && have.Err == nil && !force {
		res.Entry = have
		if pl.Kind.Library() {
			res.Use += have.Version.String()
		}
		if have.Linked() {
			res.Outcome = AlreadyLinked
			in.event(res)
			return res, nil
		}
		health := have.Health()
		if health.Damage == nil && health.Unchecked > 0 {
			// Files whose inode was touched, not known to have changed:
			// read them now (and have them vouched for, if whole).
			if v, err := have.Verify(false); err == nil {
				health = v.Health
			}
		}
		if derr := health.Damage; derr != nil {
			// As list, doctor and verify say it: a repair keeps the
			// entry's source, components and builds.
			arg := have.Version.String()
			if pl.Kind.Library() {
				arg = fmt.Sprintf("%s@%s --cuda-major %d", pl.Kind, have.Version, pl.CUDAMajor)
			}
			again := "repair it: cudaenv verify --repair " + arg
			if have.System {
				again = "ask its admin to run cudaenv verify --system --repair " + arg + ", or install your own copy, which comes first: cudaenv install " + arg + " --force"
			}
			return Result{}, fmt.Errorf("install %s: the installed tree %s is damaged (%s); %s", pl.Label, have.Dir, derr, again)
		}
		if pl.lockName != "" {
			if differ := notAsLocked(have, pl.Artifacts); len(differ) > 0 {
				in.event(NotAsLocked{Label: pl.Label, Lock: pl.lockName, Components: differ})
			}
		}
		missing := missingComponents(have, pl.Artifacts)
		var changed []string
		if pl.pinned {
			// A framework's builds: those the entry has at other versions
			// are taken too.
			changed = changedComponents(have, pl.Artifacts)
		}
		if len(changed) > 0 {
			if have.System {
				return Result{}, fmt.Errorf("install %s: the system store's %s has other builds of %s than the requirements pin; install your own copy, which comes first: add --force", pl.Label, have.Dir, strings.Join(changed, ", "))
			}
			ids := append(componentIDs(have), missing...)
			if pl.Artifacts, err = pl.reselect(ids); err != nil {
				return Result{}, fmt.Errorf("install %s: %w", pl.Label, err)
			}
			pl.Receipt.Profile = ""
			in.event(Adding{Label: pl.Label, Missing: missing, Changed: changed})
			missing = nil
		}
		if len(changed) == 0 && (len(missing) == 0 || !pl.Explicit) {
			// Adding gigabytes is done only when asked for by name.
			res.Outcome, res.Components, res.Missing = AlreadyInstalled, len(have.Receipt.Components), missing
			for _, a := range pl.Artifacts {
				if slices.Contains(missing, a.Component) {
					res.MissingBytes += a.Size
				}
			}
			in.event(res)
			return res, nil
		}
		if have.System {
			// Completing it would mean a private copy of everything.
			return Result{}, fmt.Errorf("install %s: the system store's %s lacks %s; ask its admin to add them (cudaenv install --system), or install your own copy, which comes first: add --force", pl.Label, have.Dir, strings.Join(missing, ", "))
		}
		if len(missing) > 0 {
			if pl.Artifacts, err = pl.reselect(append(componentIDs(have), missing...)); err != nil {
				return Result{}, fmt.Errorf("install %s: %w", pl.Label, err)
			}
			pl.Receipt.Profile = ""
			in.event(Adding{Label: pl.Label, Missing: missing})
		}
	}

	in.reportSkipped(pl)
	if pl.prepare != nil {
		if pl.Artifacts, err = pl.prepare(ctx, pl.Artifacts); err != nil {
			return Result{}, fmt.Errorf("install %s: %w", pl.Label, err)
		}
	}
	client := *in.client
	client.Progress = nil
	if in.opts.Reporter != nil {
		if p := in.opts.Reporter.Progress(pl.Label); p != nil {
			client.Progress = p
		}
	}
	start := time.Now()
	// What the extraction hashed or knew of each file, for the entry's
	// file list.
	sums := filelist.NewSums()
	fctx := filelist.WithSums(ctx, sums)
	ent, err := st.InstallFiles(pl.Kind, pl.Name, sums, func(stage string) (store.Receipt, error) {
		fr, err := client.Fetch(fctx, pl.Artifacts, stage)
		if err != nil {
			if ctx.Err() != nil {
				return store.Receipt{}, &interrupted{pl.Label}
			}
			return store.Receipt{}, fmt.Errorf("install %s: %w", pl.Label, err)
		}
		if err := finishTree(stage, pl, fr); err != nil {
			return store.Receipt{}, fmt.Errorf("install %s: %w", pl.Label, err)
		}
		r := withComponents(pl.Receipt, fr)
		r.LibrariesOnly = pl.Kind == store.CUDA && !hasNvcc(stage)
		return r, nil
	})
	if err != nil {
		return Result{}, err
	}
	res.Elapsed = time.Since(start)
	if in.opts.Changed != nil {
		in.opts.Changed()
	}
	res.Outcome, res.Entry, res.Components = Installed, ent, len(pl.Artifacts)
	if pl.Kind.Library() {
		res.Use += ent.Version.String()
	}
	in.event(res)
	return res, nil
}

// hasNvcc reports whether a toolkit tree has the compiler driver; one
// without it is a libraries-only entry.
func hasNvcc(root string) bool {
	for _, name := range []string{"nvcc", "nvcc.exe"} {
		if fi, err := os.Stat(filepath.Join(root, "bin", name)); err == nil && fi.Mode().IsRegular() {
			return true
		}
	}
	return false
}

func componentIDs(e store.Entry) []string {
	var ids []string
	for _, c := range e.Receipt.Components {
		ids = append(ids, c.ID)
	}
	return ids
}

// missingComponents are the planned components an installed entry lacks;
// cccl and cuda_cccl (renamed in CUDA 13) count as one.
func missingComponents(have store.Entry, arts []fetch.Artifact) []string {
	got := map[string]bool{}
	for _, c := range have.Receipt.Components {
		got[c.ID] = true
	}
	var missing []string
	for _, a := range arts {
		if !got[a.Component] && !(a.Component == "cccl" && got["cuda_cccl"]) && !(a.Component == "cuda_cccl" && got["cccl"]) {
			missing = append(missing, a.Component)
		}
	}
	sort.Strings(missing)
	return missing
}

// changedComponents are the planned components an installed entry has at
// other versions: "libcublas 13.1.0.3 → 13.1.1.3", sorted.
func changedComponents(have store.Entry, arts []fetch.Artifact) []string {
	got := map[string]string{}
	for _, c := range have.Receipt.Components {
		got[c.ID] = c.Version
	}
	var out []string
	for _, a := range arts {
		if v, ok := got[a.Component]; ok && v != a.Version {
			out = append(out, a.Component+" "+v+" → "+a.Version)
		}
	}
	sort.Strings(out)
	return out
}

// withComponents completes a receipt with what Fetch installed.
func withComponents(r store.Receipt, res *fetch.Result) store.Receipt {
	licenses := map[string]bool{}
	for _, ic := range res.Components {
		r.Components = append(r.Components, store.Component{ID: ic.ID, Version: ic.Version, SHA256: ic.SHA256, Size: ic.Size, License: ic.License})
		if ic.License != "" {
			licenses[ic.License] = true
		}
	}
	for l := range licenses {
		r.Licenses = append(r.Licenses, l)
	}
	sort.Strings(r.Licenses)
	return r
}

// interrupted is an install stopped by its context (Ctrl-C). It is a
// context.Canceled, so the store sets the half tree aside at once instead
// of deleting it there and then.
type interrupted struct{ label string }

func (e *interrupted) Error() string {
	return "install " + e.label + ": interrupted; nothing was installed"
}
func (e *interrupted) Unwrap() error { return context.Canceled }
