package envpins

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cudaenv/cudaenv/internal/venv"
)

// writeFile writes a lock file named name in a fresh folder.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	must(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

func TestHostileLockFiles(t *testing.T) {
	tests := []struct {
		name, file, content string
		want                []string // requirements, when it reads
		err, passed         string   // substrings of the error, of a passed line
	}{
		{name: "a file far larger than any lock is refused unread", file: "uv.lock", content: "huge", err: "larger than 16 MiB, more than any real lock file"},
		{name: "garbage is not a uv.lock", file: "uv.lock", content: "\x00\x01[[[", err: "not a uv.lock"},
		{name: "a newer uv.lock version is refused", file: "uv.lock", content: "version = 2\n", err: "uv.lock version 2; cudaenv reads version 1"},
		{name: "a pylock.toml of another major version is refused", file: "pylock.toml", content: "lock-version = \"2.0\"\n", err: `lock-version "2.0"`},
		{name: "a version that is not PEP 440 is passed over, said", file: "pylock.toml",
			content: "lock-version = \"1.0\"\n[[packages]]\nname = \"nvidia-cublas-cu12\"\nversion = \"12.8.4.1; rm -rf ~\"\n[[packages]]\nname = \"nvidia-nvtx-cu12\"\nversion = \"12.8.90\"\n",
			want:    []string{"nvidia-nvtx-cu12==12.8.90"}, passed: "not a valid name and version"},
		{name: "escape sequences in a name are passed over, never returned", file: "pylock.toml",
			content: "lock-version = \"1.0\"\n[[packages]]\nname = \"nvidia-cublas-cu12\\u001b]0;pwned\\u0007\"\nversion = \"12.8.4.1\"\n[[packages]]\nname = \"nvidia-nvtx-cu12\"\nversion = \"12.8.90\"\n",
			want:    []string{"nvidia-nvtx-cu12==12.8.90"}, passed: "not a valid name and version"},
		{name: "a marker that does not parse holds for nothing, said", file: "pylock.toml",
			content: "lock-version = \"1.0\"\n[[packages]]\nname = \"nvidia-cublas-cu12\"\nversion = \"12.8.4.1\"\nmarker = \"os_name === $(reboot)\"\n[[packages]]\nname = \"nvidia-nvtx-cu12\"\nversion = \"12.8.90\"\n",
			want:    []string{"nvidia-nvtx-cu12==12.8.90"}, passed: "its marker does not evaluate"},
		{name: "two versions of one project for one target are refused", file: "pylock.toml",
			content: "lock-version = \"1.0\"\n[[packages]]\nname = \"nvidia-cublas-cu12\"\nversion = \"12.8.4.1\"\n[[packages]]\nname = \"nvidia_cublas_cu12\"\nversion = \"12.9.1.4\"\n",
			err:     "two versions of nvidia-cublas-cu12 for the same target: 12.8.4.1 (pylock.toml) and 12.9.1.4"},
		{name: "a pylock package without a version takes its wheel's", file: "pylock.toml",
			content: "lock-version = \"1.0\"\n[[packages]]\nname = \"nvidia-nvtx-cu12\"\nwheels = [{ url = \"https://x/nvidia_nvtx_cu12-12.8.90-py3-none-manylinux_2_27_x86_64.whl\" }]\n",
			want:    []string{"nvidia-nvtx-cu12==12.8.90"}},
		{name: "a cycle of dependencies ends", file: "uv.lock",
			content: "version = 1\n[[package]]\nname = \"p\"\nversion = \"1\"\nsource = { virtual = \".\" }\ndependencies = [{ name = \"a\" }]\n" +
				"[[package]]\nname = \"a\"\nversion = \"1\"\ndependencies = [{ name = \"b\" }]\n[[package]]\nname = \"b\"\nversion = \"1\"\ndependencies = [{ name = \"a\" }, { name = \"nvidia-nvtx-cu12\" }]\n" +
				"[[package]]\nname = \"nvidia-nvtx-cu12\"\nversion = \"12.8.90\"\ndependencies = [{ name = \"p\" }]\n",
			want: []string{"nvidia-nvtx-cu12==12.8.90"}},
		{name: "what the project does not reach is not installed", file: "uv.lock",
			content: "version = 1\n[[package]]\nname = \"p\"\nversion = \"1\"\nsource = { editable = \".\" }\ndependencies = [{ name = \"nvidia-nvtx-cu12\" }]\n" +
				"[package.optional-dependencies]\ngpu = [{ name = \"nvidia-cublas-cu12\" }]\n" +
				"[[package]]\nname = \"nvidia-nvtx-cu12\"\nversion = \"12.8.90\"\n[[package]]\nname = \"nvidia-cublas-cu12\"\nversion = \"12.8.4.1\"\n",
			want: []string{"nvidia-nvtx-cu12==12.8.90"}},
		{name: "requirements: a range is not a pin", file: "requirements.txt", content: "torch==2.9.0\nnvidia-cublas-cu12>=12.8\n", err: "line 2: nvidia-cublas-cu12>=12.8 is not an exact pin"},
		{name: "requirements: a line that does not parse is an error", file: "requirements.txt", content: "nvidia-cublas-cu12==12.8.4.1$(id)\n", err: "line 1:"},
		{name: "requirements: other files are not followed", file: "requirements.txt",
			content: "-r /etc/passwd\n--index-url https://example.com/simple\nnvidia-nvtx-cu12==12.8.90 \\\n    --hash=sha256:00 # via torch\n",
			want:    []string{"nvidia-nvtx-cu12==12.8.90"}, passed: "line 1: -r is not followed; pass that file itself"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := writeFile(t, tt.file, tt.content)
			if tt.content == "huge" {
				must(t, os.Truncate(p, MaxLockBytes+1)) // sparse: nothing written
			}
			got, err := Read(context.Background(), p, linux312)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Requirements, tt.want) {
				t.Errorf("requirements %q, want %q", got.Requirements, tt.want)
			}
			if tt.passed != "" && !slices.ContainsFunc(got.Passed, func(s string) bool { return strings.Contains(s, tt.passed) }) {
				t.Errorf("passed %q, want a line with %q", got.Passed, tt.passed)
			}
			for _, r := range got.Requirements {
				if strings.ContainsAny(r, "\x1b\x07 ;$") {
					t.Errorf("requirement %q carries control or shell characters", r)
				}
			}
		})
	}
}

func TestALockBehindALinkIsRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "my 'locks'")
	must(t, os.Mkdir(dir, 0o755))
	real, err := os.ReadFile(filepath.Join("testdata", "torch-2.9.0", "uv.lock"))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(dir, "real.lock"), real, 0o644))
	link := filepath.Join(dir, "uv.lock")
	if err := os.Symlink("real.lock", link); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	_, err = Read(context.Background(), link, linux312)
	if !errors.Is(err, venv.ErrLink) {
		t.Errorf("err = %v, want ErrLink", err)
	}
	// The error says what to pass instead: a copy where the name the link
	// names is not one cudaenv reads, else that file, quoted for a shell.
	if want := "; pass a copy of the file it names (" + filepath.Join(dir, "real.lock") + ") named uv.lock"; err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("err = %v, want it to end %q", err, want)
	}
	must(t, os.MkdirAll(filepath.Join(dir, "reqs"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "reqs", "gpu.txt"), []byte("nvidia-nvtx-cu12==12.8.90\n"), 0o644))
	reqs := filepath.Join(dir, "requirements.txt")
	must(t, os.Symlink(filepath.Join("reqs", "gpu.txt"), reqs))
	_, err = Read(context.Background(), reqs, linux312)
	if want := "; pass the file it names instead: --for '" + strings.ReplaceAll(filepath.Join(dir, "reqs", "gpu.txt"), "'", `'\''`) + "'"; err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("err = %v, want it to end %q", err, want)
	}
}

func TestHostileVenvs(t *testing.T) {
	prefix := venvWith(t, KindVenv, "3.12", "nvidia-nvtx-cu12==12.8.90")
	site := filepath.Join(prefix, "lib", "python3.12", "site-packages")
	// A METADATA whose version is not PEP 440, one with an escape in its
	// name, one far too large, one that links elsewhere: each left out.
	bad := distInfo(t, site, "nvidia-cublas-cu12", "12.8.4.1")
	must(t, os.WriteFile(filepath.Join(bad, "METADATA"), []byte("Name: nvidia-cublas-cu12\nVersion: 12.8.4.1`id`\n\n"), 0o644))
	esc := distInfo(t, site, "nvidia-cudnn-cu12", "9.10.2.21")
	must(t, os.WriteFile(filepath.Join(esc, "METADATA"), []byte("Name: nvidia-cudnn-cu12\x1b[2J\nVersion: 9.10.2.21\n\n"), 0o644))
	huge := distInfo(t, site, "nvidia-nccl-cu12", "2.27.5")
	must(t, os.Truncate(filepath.Join(huge, "METADATA"), venv.MaxMetadataBytes+1))
	linked := distInfo(t, site, "nvidia-curand-cu12", "10.3.9.90")
	must(t, os.Remove(filepath.Join(linked, "METADATA")))
	if err := os.Symlink("/etc/passwd", filepath.Join(linked, "METADATA")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	p, err := Read(context.Background(), prefix, linux312)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"nvidia-nvtx-cu12==12.8.90"}; !slices.Equal(p.Requirements, want) {
		t.Errorf("requirements %q, want %q", p.Requirements, want)
	}
}
