package main

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/cudaenv/cudaenv/internal/config"
)

// setting returns a setting: its environment variable, else the config
// file (~/.config/cudaenv/config), else "".
func (e *env) setting(key string) (string, error) {
	if v := e.vars[config.Keys[key]]; v != "" {
		return v, nil
	}
	if e.config == nil {
		path := filepath.Join(e.dirs.Config, config.FileName)
		data, err := os.ReadFile(path)
		switch {
		case errors.Is(err, os.ErrNotExist):
			e.config = map[string]string{}
		case err != nil:
			return "", err
		default:
			if e.config, err = config.Parse(path, data); err != nil {
				return "", withFix(err)
			}
		}
	}
	return e.config[key], nil
}
