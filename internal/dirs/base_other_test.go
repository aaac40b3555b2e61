//go:build !windows

package dirs

import (
	"os"
	"testing"

	"github.com/adrg/xdg"
)

// The defaults are what github.com/adrg/xdg, which cudaenv used before,
// computes from the same environment.
func TestBaseDirsAreXDGs(t *testing.T) {
	vars := []string{"HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"}
	tests := []struct {
		desc string
		env  map[string]string
	}{
		{"a plain home", map[string]string{"HOME": "/home/ann"}},
		{"a home with spaces, quotes and a dollar", map[string]string{"HOME": `/home/a "b" $c`}},
		{"no home", map[string]string{}},
		{"a relative home", map[string]string{"HOME": "rel/home"}},
		{"absolute XDG folders", map[string]string{"HOME": "/h", "XDG_DATA_HOME": "/d", "XDG_CONFIG_HOME": "/c/", "XDG_CACHE_HOME": "/x/../y"}},
		{"relative XDG folders, which do not count", map[string]string{"HOME": "/h", "XDG_DATA_HOME": "d", "XDG_CONFIG_HOME": "./c", "XDG_CACHE_HOME": "x"}},
		{"XDG folders under ~ and $HOME", map[string]string{"HOME": "/h", "XDG_DATA_HOME": "~/d", "XDG_CONFIG_HOME": "$HOME/c", "XDG_CACHE_HOME": "~"}},
		{"empty XDG folders", map[string]string{"HOME": "/h", "XDG_DATA_HOME": "", "XDG_CONFIG_HOME": "", "XDG_CACHE_HOME": ""}},
	}
	t.Cleanup(xdg.Reload)
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			for _, k := range vars {
				if v, ok := tt.env[k]; ok {
					t.Setenv(k, v)
				} else {
					t.Setenv(k, "")
					os.Unsetenv(k)
				}
			}
			xdg.Reload()
			data, config, cache := baseDirs(lookup(tt.env))
			if data != xdg.DataHome || config != xdg.ConfigHome || cache != xdg.CacheHome {
				t.Errorf("got %q, %q, %q; xdg has %q, %q, %q", data, config, cache, xdg.DataHome, xdg.ConfigHome, xdg.CacheHome)
			}
		})
	}
}
