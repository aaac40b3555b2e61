package cudabin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// path reports on one path named by the user.
func (in *inspector) path(ctx context.Context, p string) ([]Report, error) {
	fi, err := os.Stat(in.file(p))
	if err != nil {
		return nil, err
	}
	switch {
	case fi.IsDir():
		return in.folder(ctx, p)
	case strings.HasSuffix(strings.ToLower(p), ".whl"):
		return in.wheel(ctx, p, true)
	}
	rep, err := in.elfFile(p)
	if errors.Is(err, errNotELF) {
		return nil, fmt.Errorf("%s: not an ELF file, a wheel or a folder", p)
	}
	if err != nil {
		return nil, err
	}
	return []Report{rep}, nil
}

// interesting reports whether a file found in a folder or wheel has
// something to say: GPU code, CUDA libraries or undefined symbols.
func interesting(r Report) bool {
	return len(r.SASS) > 0 || len(r.PTX) > 0 || len(r.Needs) > 0 || len(r.Undefined) > 0 || r.Fatbins > 0
}

// candidate reports whether a name found in a folder may be an ELF
// library or program: *.so, *.so.N, or an executable file.
func candidate(name string, mode fs.FileMode) bool {
	return strings.HasSuffix(name, ".so") || strings.Contains(name, ".so.") || mode&0o111 != 0
}

// folder walks a folder (links to folders are not followed), reporting
// on its ELF files, then on its wheels one at a time.
func (in *inspector) folder(ctx context.Context, dir string) ([]Report, error) {
	var files, wheels []string
	count := 0
	err := filepath.WalkDir(in.file(dir), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // an unreadable folder is passed over
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if count++; count > in.opt.MaxFiles*10 {
			return fmt.Errorf("%s: more than %d entries; name a smaller folder", dir, in.opt.MaxFiles*10)
		}
		if d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		rel, _ := filepath.Rel(in.file(dir), p)
		p = filepath.Join(dir, rel)
		switch {
		case strings.HasSuffix(strings.ToLower(d.Name()), ".whl"):
			wheels = append(wheels, p)
		default:
			info, err := d.Info()
			if err == nil && candidate(d.Name(), info.Mode()) {
				files = append(files, p)
			}
		}
		if len(files)+len(wheels) > in.opt.MaxFiles {
			return fmt.Errorf("%s: more than %d libraries, programs and wheels; name a smaller folder", dir, in.opt.MaxFiles)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out, err := in.each(ctx, len(files), func(i int) *Report {
		r, err := in.elfFile(files[i])
		switch {
		case err == nil && interesting(r):
			return &r
		case err != nil && !errors.Is(err, errNotELF) && !errors.Is(err, errNotRegular):
			u := unreadable(files[i], err)
			return &u
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	sort.Slice(wheels, func(i, j int) bool { return wheels[i] < wheels[j] })
	for _, w := range wheels {
		rs, err := in.wheel(ctx, w, false)
		if err != nil {
			out = append(out, unreadable(w, err))
			continue
		}
		out = append(out, rs...)
	}
	return out, nil
}

// unreadable is the report on a file that could not be read.
func unreadable(p string, err error) Report {
	return Report{Path: p, Kind: "unreadable", SASS: []string{}, PTX: []PTX{}, Needs: []Need{}, Undefined: []Undefined{}, Notes: []string{err.Error()}}
}

// each runs report for 0..n-1 on the inspector's workers and returns the
// reports made, in order; the context's error when it ended first.
func (in *inspector) each(ctx context.Context, n int, report func(i int) *Report) ([]Report, error) {
	reps := make([]*Report, n)
	var wg sync.WaitGroup
	next := make(chan int)
	for range in.opt.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if ctx.Err() == nil {
					reps[i] = report(i)
				}
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []Report
	for _, r := range reps {
		if r != nil {
			out = append(out, *r)
		}
	}
	return out, nil
}
