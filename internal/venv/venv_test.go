package venv

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"
)

func write(t *testing.T, p, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadFileRefusesWhatIsNotAPlainSmallFile(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("named pipes and /dev/zero are Unix's")
	}
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	write(t, plain, "__version__ = '2.5.1'\n")
	zero := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	toPlain := filepath.Join(dir, "to-plain")
	if err := os.Symlink("plain", toPlain); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := mkfifo(fifo); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "huge")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 40); err != nil { // sparse: no room taken
		t.Skipf("a sparse file of 1 TiB cannot be made here: %v", err)
	}
	f.Close()

	for _, tc := range []struct {
		name string
		path string
		want error
	}{
		{"a link to /dev/zero is not followed", zero, ErrLink},
		{"a link to a plain file is not followed either", toPlain, ErrLink},
		{"a named pipe is opened without waiting for a writer, then refused", fifo, ErrNotRegular},
		{"a device is refused", "/dev/null", ErrNotRegular},
		{"a file larger than the cap is refused before a byte is read", huge, ErrTooLarge},
		{"a folder is refused", dir, ErrNotRegular},
		{"a missing file says so", filepath.Join(dir, "none"), fs.ErrNotExist},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := ReadFile(context.Background(), tc.path, MaxSourceBytes)
			if !errors.Is(err, tc.want) || data != nil {
				t.Fatalf("ReadFile(%s) = %q, %v; want %v", tc.path, data, err, tc.want)
			}
			var pe *PathError
			if !errors.As(err, &pe) || pe.Path != tc.path {
				t.Errorf("error %v does not name the path", err)
			}
		})
	}
	data, err := ReadFile(context.Background(), plain, MaxSourceBytes)
	if err != nil || string(data) != "__version__ = '2.5.1'\n" {
		t.Fatalf("plain file: %q, %v", data, err)
	}
}

func TestAFileWhoseSizeIsMadeUpIsReadOnlyAsFarAsItsSize(t *testing.T) {
	// /proc's files are regular and say size 0 whatever they hold (and
	// some, /proc/kmsg, block): only the size the descriptor gives is read.
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc here")
	}
	data, err := ReadFile(context.Background(), "/proc/self/status", MaxSourceBytes)
	if err != nil || len(data) != 0 {
		t.Fatalf("ReadFile(/proc/self/status) = %d bytes, %v; want 0 bytes", len(data), err)
	}
}

func TestAReadThatBlocksIsGivenUpAtTheDeadline(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("named pipes are Unix's")
	}
	// A read that never returns on its own: opening a named pipe for
	// reading waits for a writer (ReadFile itself never opens one so).
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := mkfifo(fifo); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := withDeadline(ctx, func() ([]byte, error) { return os.ReadFile(fifo) })
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v; want ErrTimeout", err)
	}
	// Unblock the reader left behind.
	if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
		w.Close()
	}
}

func TestParseTorchVersionPy(t *testing.T) {
	for _, tc := range []struct {
		name, src, version, cuda string
		bad                      bool
	}{
		{name: "the typed form PyTorch writes now", src: "from typing import Optional\n__version__ = '2.5.1+cu124'\ncuda: Optional[str] = '12.4'\n", version: "2.5.1+cu124", cuda: "12.4"},
		{name: "the plain form of older releases", src: "__version__ = \"1.13.1\"\ncuda = \"11.7\"\n", version: "1.13.1", cuda: "11.7"},
		{name: "a CPU-only build", src: "__version__ = '2.5.1+cpu'\ncuda: Optional[str] = None\n", version: "2.5.1+cpu"},
		{name: "a nightly", src: "__version__ = '2.6.0.dev20241001+cu124'\ncuda = '12.4'\n", version: "2.6.0.dev20241001+cu124", cuda: "12.4"},
		{name: "no __version__", src: "cuda = '12.4'\n", bad: true},
		{name: "a terminal escape in the version", src: "__version__ = '2.5.1\x1b]0;owned\x07'\n", bad: true},
		{name: "a version that is a line of advice", src: "__version__ = '2.5.1 pip install evil --extra-index-url http://x'\n", bad: true},
		{name: "a version too long to be one", src: "__version__ = '2.5" + repeat(".1", 60) + "'\n", bad: true},
		{name: "a cuda that is not a version", src: "__version__ = '2.5.1'\ncuda = '12.4; rm -rf ~'\n", bad: true},
		{name: "an escape in cuda", src: "__version__ = '2.5.1'\ncuda = '\x1b[2J'\n", bad: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, c, err := ParseTorchVersionPy([]byte(tc.src))
			if tc.bad {
				if err == nil || !errors.Is(err, ErrInvalid) {
					t.Fatalf("got %q %q %v; want ErrInvalid", v, c, err)
				}
				return
			}
			if err != nil || v != tc.version || c != tc.cuda {
				t.Fatalf("got %q %q %v; want %q %q", v, c, err, tc.version, tc.cuda)
			}
		})
	}
}

func repeat(s string, n int) string {
	out := ""
	for range n {
		out += s
	}
	return out
}

func TestValidVersionAndName(t *testing.T) {
	for _, v := range []string{"1", "2.5.1", "2.5.1+cu124", "9.1.0.70", "1!2.0", "1.0rc1", "1.0.post1", "1.0.dev3", "v1.0", "12.4.127"} {
		if !ValidVersion(v) {
			t.Errorf("ValidVersion(%q) = false", v)
		}
	}
	for _, v := range []string{"", "2.5.1 ", "2.5.1\n", "2.5.1\x1b[0m", "latest", "1.0+", "1.0+a..b", "../1.0", repeat("1.", 60) + "1"} {
		if ValidVersion(v) {
			t.Errorf("ValidVersion(%q) = true", v)
		}
	}
	for _, n := range []string{"torch", "nvidia-cudnn-cu12", "Nvidia_CUDNN.cu12", "a"} {
		if !ValidName(n) {
			t.Errorf("ValidName(%q) = false", n)
		}
	}
	for _, n := range []string{"", "-torch", "torch-", "to rch", "torch\x1b", "../x"} {
		if ValidName(n) {
			t.Errorf("ValidName(%q) = true", n)
		}
	}
	if got := Normalize("Nvidia--CUDNN._cu12"); got != "nvidia_cudnn_cu12" {
		t.Errorf("Normalize = %q", got)
	}
}

func TestOpenFindsVenvsAndCondaPrefixes(t *testing.T) {
	ctx := context.Background()
	venv := t.TempDir()
	write(t, filepath.Join(venv, "pyvenv.cfg"), "home = /usr/bin\n")
	write(t, filepath.Join(venv, "lib/python3.12/site-packages/x.py"), "")
	if runtime.GOOS != "windows" {
		if err := os.Symlink("lib", filepath.Join(venv, "lib64")); err != nil {
			t.Fatal(err)
		}
	}
	e, err := Open(ctx, venv)
	if err != nil || e.Kind != "venv" || e.Python != "3.12" || !slices.Equal(e.Sites, []string{filepath.Join(venv, "lib/python3.12/site-packages")}) {
		t.Fatalf("venv: %+v, %v", e, err)
	}

	conda := t.TempDir()
	write(t, filepath.Join(conda, "conda-meta/history"), "")
	write(t, filepath.Join(conda, "lib/python3.13t/site-packages/x.py"), "")
	write(t, filepath.Join(conda, "lib/python3.13t.bak/site-packages/x.py"), "") // not a Python's folder
	e, err = Open(ctx, conda)
	if err != nil || e.Kind != "conda" || e.Python != "3.13t" || len(e.Sites) != 1 {
		t.Fatalf("conda: %+v, %v", e, err)
	}

	empty := t.TempDir()
	if _, err := Open(ctx, empty); err == nil {
		t.Fatal("a folder with no site-packages was taken for an environment")
	}
}

func TestDistsKeepsOnlyWhatLooksLikeWhatItClaims(t *testing.T) {
	ctx := context.Background()
	site := t.TempDir()
	meta := func(folder, body string) { write(t, filepath.Join(site, folder, "METADATA"), body) }
	meta("nvidia_cudnn_cu12-9.1.0.70.dist-info", "Metadata-Version: 2.1\nName: nvidia-cudnn-cu12\nVersion: 9.1.0.70\nRequires-Dist: nvidia-cublas-cu12\n\nRequires-Dist: not-a-header\n")
	meta("torch-2.5.1+cu124.dist-info", "Name: torch\nVersion: 2.5.1+cu124\nRequires-Dist: nvidia-cudnn-cu12==9.1.0.70; platform_system == \"Linux\"\nRequires-Dist: evil\x1b[2J\n")
	meta("nvidia_evil-1.0.dist-info", "Name: nvidia-evil\nVersion: 1.0\x1b]0;owned\x07\n")
	meta("nvidia_two-1.0.dist-info", "Name: nvidia-two\nVersion: 1.0\nVersion: 2.0\n")
	meta("nvidia_liar-1.0.dist-info", "Name: torch\nVersion: 1.0\n") // names another project than its folder
	meta("numpy-2.0.dist-info", "Name: numpy\nVersion: 2.0\n")
	if runtime.GOOS != "windows" {
		if err := os.MkdirAll(filepath.Join(site, "nvidia_link-1.0.dist-info"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("/dev/zero", filepath.Join(site, "nvidia_link-1.0.dist-info", "METADATA")); err != nil {
			t.Fatal(err)
		}
	}

	var got []string
	for _, d := range Dists(ctx, site, nil) {
		got = append(got, d.Name+" "+d.Version)
		if d.Name == "torch" && !slices.Equal(d.Requires, []string{`nvidia-cudnn-cu12==9.1.0.70; platform_system == "Linux"`}) {
			t.Errorf("torch requires %q", d.Requires)
		}
		if d.Name == "nvidia-cudnn-cu12" && !slices.Equal(d.Requires, []string{"nvidia-cublas-cu12"}) {
			t.Errorf("cudnn requires %q: a line after the headers was read", d.Requires)
		}
	}
	want := []string{"numpy 2.0", "nvidia-cudnn-cu12 9.1.0.70", "torch 2.5.1+cu124"}
	if !slices.Equal(got, want) {
		t.Fatalf("Dists = %q; want %q", got, want)
	}

	var asked []string
	only := Dists(ctx, site, func(name string) bool { asked = append(asked, name); return name == "torch" })
	if len(only) != 1 || only[0].Name != "torch" || !slices.Contains(asked, "nvidia_cudnn_cu12") {
		t.Fatalf("Dists(torch) = %+v, asked %q", only, asked)
	}
}

func TestReadTorch(t *testing.T) {
	ctx := context.Background()
	site := t.TempDir()
	if _, err := ReadTorch(ctx, site); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("no torch: %v", err)
	}
	write(t, filepath.Join(site, "torch/version.py"), "__version__ = '2.5.1+cu124'\ncuda = '12.4'\n")
	tv, err := ReadTorch(ctx, site)
	if err != nil || tv.Version != "2.5.1+cu124" || tv.CUDA != "12.4" || tv.Path != filepath.Join(site, "torch/version.py") {
		t.Fatalf("ReadTorch = %+v, %v", tv, err)
	}
}
