package query

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
