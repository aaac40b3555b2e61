package resolve

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestParseOptionsReadsTheLibrariesSetting(t *testing.T) {
	tests := []struct {
		desc, text, want string
		noLibs           bool
		err              string
	}{
		{desc: "libraries=off after the version", text: "12.4 libraries=off\n", want: "12.4", noLibs: true},
		{desc: "libraries=off on its own line, before the version", text: "libraries=off\n12.4 cudnn@9.5\n", want: "12.4 cudnn@9.5", noLibs: true},
		{desc: "the key and value in any case", text: "12.4 LIBRARIES=Off", want: "12.4", noLibs: true},
		{desc: "libraries=on is the default, written out", text: "12.4 libraries=on", want: "12.4"},
		{desc: "a commented-out setting is not one", text: "12.4 # libraries=off", want: "12.4"},
		{desc: "another value is refused", text: "12.4 libraries=no", err: `f:1: libraries takes on or off (libraries=off leaves LD_LIBRARY_PATH to the framework)`},
		{desc: "an empty value is refused", text: "12.4 libraries=", err: `f:1: libraries takes on or off (libraries=off leaves LD_LIBRARY_PATH to the framework)`},
		{desc: "the setting twice is refused", text: "12.4 libraries=off\nlibraries=on", err: `f:2: "libraries=off" and "libraries=on" both set libraries; keep one`},
		{desc: "the setting alone is refused", text: "libraries=off", err: `f:1: libraries=off goes with a CUDA version, e.g. 12.4 libraries=off`},
		{desc: "the setting with cuDNN alone is refused", text: "cudnn@9 libraries=off", err: `f:1: libraries=off goes with a CUDA version, e.g. 12.4 libraries=off`},
		{desc: "the setting with system is refused", text: "system\nlibraries=off", err: `f:2: libraries=off cannot be combined with system`},
		{desc: "an unknown key is an invalid version", text: "12.4 ld_library_path=/tmp", err: `f:1: invalid version "ld_library_path=/tmp"`},
		{desc: "a shell word in the value is refused, quoted", text: "12.4 libraries=$(id)\x07", err: `f:1: libraries takes on or off (libraries=off leaves LD_LIBRARY_PATH to the framework)`},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			specs, opts, err := ParseOptions("f", []byte(tt.text))
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("err = %v, want %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var words []string
			for _, s := range specs {
				words = append(words, s.String())
			}
			if got := strings.Join(words, " "); got != tt.want || opts.NoLibraries != tt.noLibs {
				t.Errorf("got %q %+v, want %q NoLibraries=%v", got, opts, tt.want, tt.noLibs)
			}
		})
	}
}

func TestFindCarriesTheLibrariesSettingFromEachSource(t *testing.T) {
	root := t.TempDir()
	proj := filepath.Join(root, "pro ject $x")
	write(t, filepath.Join(proj, FileName), "12.4 libraries=off\n")
	global := filepath.Join(root, "global")
	write(t, global, "12.1\n")
	env := func(m map[string]string) Lookup {
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	for _, tt := range []struct {
		desc, dir string
		env       map[string]string
		noLibs    bool
	}{
		{desc: "a .cuda-version with libraries=off", dir: proj, noLibs: true},
		{desc: "the global default without it", dir: root},
		{desc: "CUDAENV_VERSION with it, outranking the file", dir: root, env: map[string]string{EnvVar: "12.1 libraries=off"}, noLibs: true},
		{desc: "CUDAENV_VERSION without it, outranking the file's", dir: proj, env: map[string]string{EnvVar: "12.4"}},
	} {
		t.Run(tt.desc, func(t *testing.T) {
			sel, _, err := Find(tt.dir, env(tt.env), global)
			if err != nil {
				t.Fatal(err)
			}
			if sel.Options.NoLibraries != tt.noLibs {
				t.Errorf("NoLibraries = %v, want %v (from %s)", sel.Options.NoLibraries, tt.noLibs, sel.Source)
			}
		})
	}
}
