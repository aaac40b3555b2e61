package main

import (
	"fmt"
	"strings"

	"github.com/cudaenv/cudaenv/internal/doctor"
	"github.com/cudaenv/cudaenv/internal/install"
	"github.com/cudaenv/cudaenv/internal/query"
	"github.com/cudaenv/cudaenv/internal/termsafe"
)

// leftoversCheck is doctor's line about disk space that interrupted
// installs and uninstalls left in the store and killed bundle imports and
// wheel unpackings left in the cache (as list says for the store); ok is false when there
// is none, and doctor prints nothing then. It only reads folder sizes.
func leftoversCheck(e *env) (doctor.Check, bool) {
	var parts, hints []string
	if left := e.store().Leftovers(); len(left) > 0 {
		var n int64
		for _, l := range left {
			n += l.Bytes
		}
		parts = append(parts, fmt.Sprintf("%s in %s that an interrupted install or uninstall left (%s)",
			query.HumanBytes(n), query.Plural(len(left), "folder"), termsafe.Escape(left[0].Path)))
		hints = append(hints, "the next cudaenv install, uninstall or link frees the store's")
	}
	if paths, n := install.AbandonedImports(e.dirs.Cache); len(paths) > 0 {
		parts = append(parts, fmt.Sprintf("%s in %s that a killed bundle import or install left (%s)",
			query.HumanBytes(n), query.Plural(len(paths), "folder"), termsafe.Escape(paths[0])))
		hints = append(hints, "the next cudaenv install frees the cache's, and so does cudaenv cache prune (which also drops cached downloads)")
	}
	if len(parts) == 0 {
		return doctor.Check{}, false
	}
	return doctor.Check{ID: "leftovers", Status: doctor.Warn, Message: strings.Join(parts, "; "), Hint: strings.Join(hints, "; ")}, true
}
