//go:build unix

// Command install benchmarks fetch.Client.Fetch against `curl | tar -xJf`:
// it generates a 12-component toolkit mirror on disk, serves it on
// loopback, and installs it (run.sh drives it).
//
//	install gen   -dir DIR [-mb 360]     write DIR/cuda/redist/... and DIR/urls.txt
//	install serve -dir DIR              serve DIR on 127.0.0.1; prints the base URL
//	install fetch -base URL -dest DEST -cache CACHE
package main

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cudaenv/cudaenv/fetch"
	"github.com/cudaenv/cudaenv/fetch/fetchtest"
	"github.com/ulikunitz/xz"
)

// components are CUDA 12.4.1's 12 largest default linux-x86_64 libraries
// and tools, with their real compressed sizes in MB as weights.
var components = []struct {
	id, version string
	weight      float64
}{
	{"libcufft", "11.2.1.3", 509}, {"libcublas", "12.4.5.8", 468}, {"libcusparse", "12.3.1.170", 223},
	{"libnpp", "12.2.5.30", 184}, {"libcusolver", "11.6.1.9", 126}, {"libcurand", "10.3.5.147", 81},
	{"cuda_nvcc", "12.4.131", 51}, {"cuda_nvdisasm", "12.4.127", 49}, {"cuda_gdb", "12.4.127", 44},
	{"libcufile", "1.9.1.3", 41}, {"cuda_nvrtc", "12.4.127", 34}, {"libnvjitlink", "12.4.127", 29},
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: install gen|serve|fetch ...")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "gen":
		err = gen(os.Args[2:])
	case "serve":
		err = serve(os.Args[2:])
	case "fetch":
		err = runFetch(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "install:", err)
		os.Exit(1)
	}
}

func gen(args []string) error {
	fs := flag.NewFlagSet("gen", flag.ExitOnError)
	dir := fs.String("dir", "", "output directory")
	mb := fs.Int64("mb", 360, "unpacked size of the toolkit in MB")
	preset := fs.String("preset", "-6", "xz preset")
	from := fs.String("from", "", "take file contents from the real binaries (*.so*) and headers (*.h) under these directories (colon-separated) instead of generating them")
	fs.Parse(args)
	var bins, headers []string
	if *from != "" {
		var err error
		if bins, headers, err = realFiles(strings.Split(*from, ":")); err != nil {
			return err
		}
	}
	if *dir == "" {
		return fmt.Errorf("gen: -dir is required")
	}
	var total float64
	for _, c := range components {
		total += c.weight
	}
	type art struct {
		id, version, rel, sha string
		size, unpacked        int64
	}
	arts := make([]art, len(components))
	errs := make([]error, len(components))
	sem := make(chan struct{}, runtime.NumCPU())
	var wg sync.WaitGroup
	for i, c := range components {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			n := int64(float64(*mb<<20) * c.weight / total)
			rel := fmt.Sprintf("%s/linux-x86_64/%s-linux-x86_64-%s-archive.tar.xz", c.id, c.id, c.version)
			p := filepath.Join(*dir, "cuda", "redist", filepath.FromSlash(rel))
			entries := layout(c.id, c.version, n)
			var fill func(w io.Writer, e fetchtest.Entry) error
			if bins != nil {
				// Each archive reads on from a different file, as
				// different libraries would.
				b := &cycle{files: bins, next: i * len(bins) / len(components)}
				h := &cycle{files: headers, next: i * len(headers) / len(components)}
				defer b.Close()
				defer h.Close()
				fill = func(w io.Writer, e fetchtest.Entry) error {
					src := b
					if strings.HasSuffix(e.Name, ".h") {
						src = h
					}
					_, err := io.CopyN(w, src, e.Size)
					return err
				}
			}
			if err := writeArchive(p, fetchtest.TopFolder(rel), entries, uint64(i+1), *preset, fill); err != nil {
				errs[i] = err
				return
			}
			sum, size, err := hashFile(p)
			arts[i] = art{c.id, c.version, rel, sum, size, n}
			errs[i] = err
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	// The manifest, shaped like NVIDIA's.
	var b strings.Builder
	b.WriteString("{\n    \"release_date\": \"2024-04-17\",\n    \"release_label\": \"12.4.1\",\n    \"release_product\": \"cuda\"")
	var urls []string
	var packed, unpacked int64
	for _, a := range arts {
		fmt.Fprintf(&b, ",\n    %q: {\n        \"name\": %q,\n        \"license\": \"CUDA Toolkit\",\n        \"license_path\": \"%s/LICENSE.txt\",\n        \"version\": %q,\n        \"linux-x86_64\": {\n            \"relative_path\": %q,\n            \"sha256\": %q,\n            \"md5\": \"00000000000000000000000000000000\",\n            \"size\": \"%d\"\n        }\n    }",
			a.id, a.id, a.id, a.version, a.rel, a.sha, a.size)
		urls = append(urls, "cuda/redist/"+a.rel)
		packed += a.size
		unpacked += a.unpacked
	}
	b.WriteString("\n}")
	if err := os.WriteFile(filepath.Join(*dir, "cuda", "redist", "redistrib_12.4.1.json"), []byte(b.String()), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(*dir, "urls.txt"), []byte(strings.Join(urls, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	fmt.Printf("generated %d archives: %.1f MB compressed, %.1f MB unpacked\n", len(arts), float64(packed)/1e6, float64(unpacked)/1e6)
	return nil
}

// layout spreads n bytes over a component's files the way NVIDIA's
// archives do: one big shared library, a static library, many headers.
func layout(id, version string, n int64) []fetchtest.Entry {
	name := id
	if !strings.HasPrefix(name, "lib") {
		name = "lib" + strings.TrimPrefix(id, "cuda_")
	}
	maj := strings.Split(version, ".")[0]
	es := []fetchtest.Entry{
		{Name: "LICENSE", Body: "License of " + id + "\n"},
		{Name: "lib/" + name + ".so." + version, Mode: 0o755, Size: n * 6 / 10},
		{Name: "lib/" + name + ".so." + maj, Type: tar.TypeSymlink, Link: name + ".so." + version},
		{Name: "lib/" + name + ".so", Type: tar.TypeSymlink, Link: name + ".so." + maj},
	}
	rest := n - n*6/10
	headers := int64(40)
	hsize := rest / 20 / headers
	for i := int64(0); i < headers; i++ {
		es = append(es, fetchtest.Entry{Name: fmt.Sprintf("include/%s/h%02d.h", id, i), Size: hsize})
	}
	es = append(es, fetchtest.Entry{Name: "lib/" + name + "_static.a", Size: rest - hsize*headers})
	return es
}

// writeArchive writes a .tar.xz with the system xz (single-threaded, so one
// block, like a plain `xz` run) or, without it, ulikunitz/xz. With fill,
// the contents of sized entries come from fill instead of fetchtest.Fill.
func writeArchive(p, top string, entries []fetchtest.Entry, seed uint64, preset string, fill func(io.Writer, fetchtest.Entry) error) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	out, err := os.Create(p)
	if err != nil {
		return err
	}
	defer out.Close()
	if xzPath, err := exec.LookPath("xz"); err == nil {
		cmd := exec.Command(xzPath, preset, "-T1", "-c")
		cmd.Stdout = out
		cmd.Stderr = os.Stderr
		in, err := cmd.StdinPipe()
		if err != nil {
			return err
		}
		if err := cmd.Start(); err != nil {
			return err
		}
		werr := writeTar(in, top, entries, seed, fill)
		in.Close()
		if err := cmd.Wait(); err != nil {
			return err
		}
		return werr
	}
	xw, err := xz.NewWriter(out)
	if err != nil {
		return err
	}
	if err := writeTar(xw, top, entries, seed, fill); err != nil {
		return err
	}
	return xw.Close()
}

// writeTar writes the tar of a layout: fetchtest's, or with fill, the
// same headers with real contents.
func writeTar(w io.Writer, top string, entries []fetchtest.Entry, seed uint64, fill func(io.Writer, fetchtest.Entry) error) error {
	if fill == nil {
		return fetchtest.WriteTar(w, top, entries, seed)
	}
	tw := tar.NewWriter(w)
	epoch := time.Unix(1700000000, 0)
	for _, d := range []string{top, top + "/lib", top + "/include"} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755, ModTime: epoch}); err != nil {
			return err
		}
	}
	made := map[string]bool{}
	for _, e := range entries {
		name := top + "/" + e.Name
		if d := filepath.Dir(name); !made[d] && strings.Count(e.Name, "/") > 1 {
			made[d] = true
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755, ModTime: epoch}); err != nil {
				return err
			}
		}
		h := &tar.Header{Typeflag: e.Type, Name: name, Mode: e.Mode, Linkname: e.Link, ModTime: epoch, Size: e.Size}
		switch {
		case h.Typeflag == tar.TypeSymlink:
			h.Mode = 0o777
		case h.Mode == 0:
			h.Mode = 0o644
		}
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
			if e.Size == 0 {
				h.Size = int64(len(e.Body))
			}
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		var err error
		switch {
		case h.Typeflag != tar.TypeReg:
		case e.Size > 0:
			err = fill(tw, e)
		default:
			_, err = io.WriteString(tw, e.Body)
		}
		if err != nil {
			return err
		}
	}
	return tw.Close()
}

// realFiles lists the shared libraries (over 64 KiB) and headers under
// dirs, in a stable order.
func realFiles(dirs []string) (bins, headers []string, err error) {
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return nil
			}
			base := d.Name()
			switch {
			case strings.HasSuffix(base, ".h"):
				headers = append(headers, p)
			case strings.Contains(base, ".so"):
				if info, err := d.Info(); err == nil && info.Size() > 64<<10 {
					bins = append(bins, p)
				}
			}
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
	}
	if len(bins) == 0 || len(headers) == 0 {
		return nil, nil, fmt.Errorf("gen: no shared libraries or no headers under %s", strings.Join(dirs, ":"))
	}
	sort.Strings(bins)
	sort.Strings(headers)
	return bins, headers, nil
}

// cycle reads files one after another, from files[next], round and round.
type cycle struct {
	files []string
	next  int
	cur   *os.File
}

func (c *cycle) Close() {
	if c.cur != nil {
		c.cur.Close()
	}
}

func (c *cycle) Read(p []byte) (int, error) {
	for {
		if c.cur == nil {
			f, err := os.Open(c.files[c.next%len(c.files)])
			c.next++
			if err != nil {
				return 0, err
			}
			c.cur = f
		}
		n, err := c.cur.Read(p)
		if n > 0 {
			return n, nil
		}
		c.cur.Close()
		c.cur = nil
		if err != nil && err != io.EOF {
			return 0, err
		}
	}
}

func hashFile(p string) (string, int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	return hex.EncodeToString(h.Sum(nil)), n, err
}

func serve(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	dir := fs.String("dir", "", "directory to serve")
	fs.Parse(args)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Printf("http://%s\n", ln.Addr())
	os.Stdout.Sync()
	return http.Serve(ln, http.FileServer(http.Dir(*dir)))
}

func runFetch(args []string) error {
	fs := flag.NewFlagSet("fetch", flag.ExitOnError)
	base := fs.String("base", "", "mirror base URL")
	dest := fs.String("dest", "", "install directory")
	cache := fs.String("cache", "", "cache directory")
	jobs := fs.Int("jobs", 0, "parallel downloads")
	unpackers := fs.Int("unpackers", 0, "parallel extractions")
	jsonOut := fs.Bool("json", false, "print a JSON summary")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile")
	verbose := fs.Bool("v", false, "log progress to stderr")
	fs.Parse(args)
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			return err
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	c := &fetch.Client{Base: *base, CacheDir: *cache, Jobs: *jobs, Unpackers: *unpackers}
	start := time.Now()
	if *verbose {
		c.Progress = &logProgress{start: start}
	}
	ctx := context.Background()
	m, err := c.Manifest(ctx, fetch.CUDA, "12.4.1")
	if err != nil {
		return err
	}
	arts, err := m.Select(fetch.Selection{Platform: "linux-x86_64", Profile: "default"})
	if err != nil {
		return err
	}
	if _, err := c.Fetch(ctx, arts, *dest); err != nil {
		return err
	}
	wall := time.Since(start)
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	sum := map[string]any{
		"components": len(arts), "wall_s": wall.Seconds(), "maxrss_kib": ru.Maxrss,
		"user_s": time.Duration(ru.Utime.Nano()).Seconds(), "sys_s": time.Duration(ru.Stime.Nano()).Seconds(),
	}
	if *jsonOut {
		var buf bytes.Buffer
		json.NewEncoder(&buf).Encode(sum)
		os.Stdout.Write(buf.Bytes())
		return nil
	}
	keys := make([]string, 0, len(sum))
	for k := range sum {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Printf("%s=%v ", k, sum[k])
	}
	fmt.Println()
	return nil
}

// logProgress logs milestones to stderr.
type logProgress struct {
	start time.Time
	mu    sync.Mutex
	total int64
	got   int64
	next  int64
}

func (p *logProgress) Start(total int64, n int) {
	p.total = total
	fmt.Fprintf(os.Stderr, "%6.2fs start: %d components, %.1f MB\n", time.Since(p.start).Seconds(), n, float64(total)/1e6)
}

func (p *logProgress) Add(n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.got += n
	if p.got >= p.next {
		fmt.Fprintf(os.Stderr, "%6.2fs downloaded %.0f%%\n", time.Since(p.start).Seconds(), 100*float64(p.got)/float64(p.total))
		p.next += p.total / 4
	}
}

func (p *logProgress) ComponentDone(id string) {
	fmt.Fprintf(os.Stderr, "%6.2fs extracted %s\n", time.Since(p.start).Seconds(), id)
}

func (p *logProgress) Finish() {}
