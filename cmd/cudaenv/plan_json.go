package main

import (
	"encoding/json"
	"io"
	"slices"
	"strings"

	"github.com/cudaenv/cudaenv/internal/install"
)

// repeated is a flag value that keeps each use whole: requirements carry
// commas (jax[cuda12,cuda13], nvidia-cublas>=13.1,<13.2) that a string
// slice flag would split.
type repeated []string

func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }
func (r *repeated) String() string     { return strings.Join(*r, " ") }

// jsonPlan is what install --dry-run --json prints: each product the
// install would put in the store, with every component's id, wheel
// project (empty for NVIDIA's archives) and exact version; a version
// answered from cudaenv's tables whose files cannot be listed (offline)
// has no components and says why in unlisted. Its keys are sorted and its
// lists ordered, so the same plan prints the same bytes.
type jsonPlan struct {
	Products []jsonProduct `json:"products"`
}

type jsonProduct struct {
	Components []jsonComponent `json:"components"`
	Product    string          `json:"product"`
	Source     string          `json:"source"`
	Unlisted   string          `json:"unlisted,omitempty"`
	Version    string          `json:"version"`
}

type jsonComponent struct {
	ID      string `json:"id"`
	Project string `json:"project"`
	Version string `json:"version"`
}

func (p *jsonPlan) add(ev install.WouldInstall) {
	prod := jsonProduct{Product: ev.Product, Source: ev.From, Unlisted: ev.Unlisted, Version: ev.Version, Components: []jsonComponent{}}
	for _, f := range ev.Entries {
		prod.Components = append(prod.Components, jsonComponent{ID: f.Component, Project: f.Project, Version: f.Version})
	}
	slices.SortFunc(prod.Components, func(a, b jsonComponent) int { return strings.Compare(a.ID, b.ID) })
	p.Products = append(p.Products, prod)
}

func (p *jsonPlan) write(w io.Writer) error {
	if p.Products == nil {
		p.Products = []jsonProduct{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(p)
}
