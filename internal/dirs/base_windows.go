package dirs

import "github.com/adrg/xdg"

// baseDirs are the XDG data, config and cache homes; on Windows xdg asks
// the system for the known folders (%LOCALAPPDATA%).
func baseDirs(Lookup) (data, config, cache string) {
	return xdg.DataHome, xdg.ConfigHome, xdg.CacheHome
}
