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
	reps := make([]*Report, len(files))
	var wg sync.WaitGroup
	next := make(chan int)
	for range in.opt.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if ctx.Err() != nil {
					continue
				}
				r, err := in.elfFile(files[i])
				if err == nil && interesting(r) {
					reps[i] = &r
				} else if err != nil && !errors.Is(err, errNotELF) && !errors.Is(err, errNotRegular) {
					reps[i] = &Report{Path: files[i], Kind: "unreadable", SASS: []string{}, PTX: []PTX{}, Needs: []Need{}, Undefined: []Undefined{}, Notes: []string{err.Error()}}
				}
			}
		}()
	}
	for i := range files {
		next <- i
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	var out []Report
	for _, r := range reps {
		if r != nil {
			out = append(out, *r)
		}
	}
	sort.Slice(wheels, func(i, j int) bool { return wheels[i] < wheels[j] })
	for _, w := range wheels {
		rs, err := in.wheel(ctx, w, false)
		if err != nil {
			out = append(out, Report{Path: w, Kind: "unreadable", SASS: []string{}, PTX: []PTX{}, Needs: []Need{}, Undefined: []Undefined{}, Notes: []string{err.Error()}})
			continue
		}
		out = append(out, rs...)
	}
	return out, nil
}
