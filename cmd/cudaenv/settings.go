package main

import "github.com/cudaenv/cudaenv/internal/config"

// setting returns a setting: its environment variable, else the config
// file (~/.config/cudaenv/config), else "".
func (e *env) setting(key string) (string, error) {
	if v := e.vars[config.Keys[key]]; v != "" {
		return v, nil
	}
	if e.config == nil {
		data, err := config.Read(e.dirs.Config)
		if err != nil {
			return "", err
		}
		if e.config, err = config.Parse(e.configPath(), data); err != nil {
			return "", withFix(err)
		}
	}
	return e.config[key], nil
}
