package query

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cudaenv/cudaenv/internal/activate"
	"github.com/cudaenv/cudaenv/internal/resolve"
	"github.com/cudaenv/cudaenv/store"
)

// Parse takes only the forms whose every word it understands, so that
// everything else goes to cudaenv's CLI, which answers it as before.
func TestParseTakesOnlyPlainForms(t *testing.T) {
	tests := []struct {
		desc string
		args []string
		ok   bool
		env  EnvOptions
	}{
		{"current alone", []string{"current"}, true, EnvOptions{}},
		{"current with an argument", []string{"current", "x"}, false, EnvOptions{}},
		{"current asking for help", []string{"current", "--help"}, false, EnvOptions{}},
		{"which with a name", []string{"which", "nvcc"}, true, EnvOptions{}},
		{"which without a name (its error is the same)", []string{"which"}, true, EnvOptions{}},
		{"which with a flag", []string{"which", "-h"}, false, EnvOptions{}},
		{"which after --", []string{"which", "--", "nvcc"}, false, EnvOptions{}},
		{"prefix with versions", []string{"prefix", "12.4", "cudnn@9"}, true, EnvOptions{}},
		{"env alone", []string{"env"}, true, EnvOptions{}},
		{"env with a format and a shell in every spelling", []string{"env", "--format", "json", "-shell=fish", "12.4"}, true, EnvOptions{Format: "json", Shell: "fish", Specs: []string{"12.4"}}},
		{"env with a single-dash format", []string{"env", "11.8", "-format", "dotenv"}, true, EnvOptions{Format: "dotenv", Specs: []string{"11.8"}}},
		{"env with a format given twice", []string{"env", "--format", "json", "--format", "shell"}, false, EnvOptions{}},
		{"env with a format missing its value", []string{"env", "--format"}, false, EnvOptions{}},
		{"env with an empty format", []string{"env", "--format="}, false, EnvOptions{}},
		{"env writing GitHub's files", []string{"env", "--github"}, false, EnvOptions{}},
		{"env with an unknown flag", []string{"env", "--shel", "bash"}, false, EnvOptions{}},
		{"list alone", []string{"list"}, true, EnvOptions{}},
		{"ls as JSON", []string{"ls", "--json"}, true, EnvOptions{}},
		{"list as JSON with one dash", []string{"list", "-json"}, true, EnvOptions{}},
		{"list with --json=true", []string{"list", "--json=true"}, false, EnvOptions{}},
		{"list with an argument", []string{"list", "x"}, false, EnvOptions{}},
		{"another command", []string{"install", "12.4"}, false, EnvOptions{}},
		{"nothing", nil, false, EnvOptions{}},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			cmd, ok := Parse(tt.args)
			if ok != tt.ok || (ok && cmd == nil) {
				t.Fatalf("Parse(%q) ok = %v, want %v", tt.args, ok, tt.ok)
			}
			if ok && tt.args[0] == "env" {
				if o, _ := parseEnv(tt.args[1:]); o.Format != tt.env.Format || o.Shell != tt.env.Shell || strings.Join(o.Specs, " ") != strings.Join(tt.env.Specs, " ") {
					t.Errorf("env options = %+v, want %+v", o, tt.env)
				}
			}
			if ok && !IsCommand(tt.args[0]) {
				t.Errorf("Parse takes %q but IsCommand does not", tt.args)
			}
		})
	}
}

// Run answers as cudaenv does: one line on stderr, "cudaenv: " first,
// and the command's exit status.
func TestRunReportsErrorsAsCudaenvDoes(t *testing.T) {
	root := t.TempDir()
	tool := filepath.Join(root, "cuda", "12.4.1")
	os.MkdirAll(filepath.Join(tool, "bin"), 0o755)
	os.WriteFile(filepath.Join(tool, "receipt.json"), []byte(`{"kind":"cuda","source":"test"}`), 0o644)
	environ := []string{"CUDAENV_ROOT=" + root, "CUDAENV_CONFIG_DIR=" + t.TempDir(), "CUDAENV_VERSION=12.4"}
	var out, errb bytes.Buffer
	code, ok := Run([]string{"cudaenv", "which", "nvcc"}, environ, "linux", &out, &errb)
	if !ok || code != 127 || out.Len() != 0 || errb.String() != "cudaenv: nvcc: not in CUDA 12.4.1 (selected by CUDAENV_VERSION)\n" {
		t.Errorf("which nvcc: ok %v, exit %d, stdout %q, stderr %q", ok, code, out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	code, ok = Run([]string{"cudaenv", "current"}, append(environ, "CUDAENV_ROOT=relative"), "linux", &out, &errb)
	if !ok || code != 1 || !strings.HasPrefix(errb.String(), `cudaenv: CUDAENV_ROOT="relative" is not an absolute path`) {
		t.Errorf("a relative store: ok %v, exit %d, stderr %q", ok, code, errb.String())
	}
	if _, ok := Run([]string{"cudaenv", "current", "--help"}, environ, "linux", &out, &errb); ok {
		t.Error("Run answered current --help, which is cudaenv's CLI's")
	}
}

// The read-only commands resolve as the prompt hook and the shims do
// (activate.ResolveFast, which decodes only the receipts it needs); they
// must pick what activate.Resolve picks, and fail as it fails, in every
// store: broken receipts, a link whose target is gone, cuDNN builds for
// two CUDA majors, names that are not versions.
func TestResolveHereAgreesWithResolve(t *testing.T) {
	root := t.TempDir()
	linked := t.TempDir()
	receipt := func(extra string) string { return `{"kind":"cuda","source":"test"` + extra + `}` }
	files := map[string]string{
		"cuda/12.4.1/receipt.json":        receipt(""),
		"cuda/12.6.0/receipt.json":        `{"kind":"cuda",`, // broken
		"cuda/11.8.0/receipt.json":        receipt(`,"source":"link","target":"` + linked + `"`),
		"cuda/11.7.0/receipt.json":        receipt(`,"source":"link","target":"` + filepath.Join(root, "gone") + `"`),
		"cuda/13.0.1/bin/nvcc":            "no receipt: being installed",
		"cuda/not-a-version/receipt.json": receipt(""),
		"cuda/.staging/12.9.0/x":          "",
		"cudnn/9.5.1-cuda12/receipt.json": `{"kind":"cudnn","source":"test"}`,
		"cudnn/9.5.1-cuda11/receipt.json": `{"kind":"cudnn","source":"test"}`,
		"cudnn/9.1.0-cuda11/receipt.json": `{"kind":"cudnn","source":"test"}`,
		"cudnn/8.9.7-cuda12/receipt.json": `[]`,
		"cudnn/9.9.9-cudaX/receipt.json":  `{"kind":"cudnn","source":"test"}`,
	}
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(body), 0o644)
	}
	for _, spec := range []string{"12.4", "12", "12.6", "11.8", "11.7", "11", "13", "13.0.1", "system", "cudnn@9", "cudnn@8",
		"12 cudnn@9", "12.4 cudnn@8", "11.8 cudnn@9", "11.8 cudnn@9.1", "13 cudnn@9", "cudnn@9.9"} {
		t.Run(spec, func(t *testing.T) {
			var errb bytes.Buffer
			in, err := NewIn([]string{"CUDAENV_ROOT=" + root, "CUDAENV_CONFIG_DIR=" + root, "CUDAENV_VERSION=" + spec}, "linux", io.Discard, &errb)
			if err != nil {
				t.Fatal(err)
			}
			got, gotErr := ResolveHere(in)
			sel, _, _ := resolve.Find(in.Cwd, in.lookup, in.Dirs.GlobalFile())
			want, wantErr := activate.Resolve(in.Store(), sel)
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
				t.Fatalf("error %v; activate.Resolve's is %v", gotErr, wantErr)
			}
			dirOf := func(e *store.Entry) string {
				if e == nil {
					return ""
				}
				return e.Dir + " " + e.Path + " " + e.Version.String()
			}
			if dirOf(got.CUDA) != dirOf(want.CUDA) || dirOf(got.Cudnn) != dirOf(want.Cudnn) || got.Label() != want.Label() {
				t.Errorf("picked %q, %q; activate.Resolve picks %q, %q", dirOf(got.CUDA), dirOf(got.Cudnn), dirOf(want.CUDA), dirOf(want.Cudnn))
			}
		})
	}
}

// list shows the size the receipt recorded, without walking the tree; an
// entry whose receipt predates that is measured.
func TestListTakesTheSizeFromTheReceipt(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "bin"), 0o755)
	os.WriteFile(filepath.Join(dir, "bin", "nvcc"), make([]byte, 4096), 0o755)
	ent := store.Entry{Kind: store.CUDA, Dir: dir, Path: dir,
		Receipt: store.Receipt{Source: "nvidia", InstalledBytes: 5 << 30}}
	if r := describe(ent, activate.Resolved{}); r.SizeBytes == nil || *r.SizeBytes != 5<<30 || !strings.Contains(r.details(), "5.0 GiB") {
		t.Errorf("with installed_bytes: %+v, %q", r.SizeBytes, r.details())
	}
	ent.Receipt.InstalledBytes = 0
	if r := describe(ent, activate.Resolved{}); r.SizeBytes == nil || *r.SizeBytes != 4096 {
		t.Errorf("an older receipt: %+v", r.SizeBytes)
	}
}
