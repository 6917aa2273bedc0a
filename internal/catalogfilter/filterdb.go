package catalogfilter

import (
	"context"
	"sort"

	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/index"
)

// FilterDB replaces the packages of db by what the filter keeps of them
// (opm index filter, and opm alpha mirror --config rebuilding catalogs).
func FilterDB(ctx context.Context, db *index.DB, cfg *Config) (*Report, error) {
	// A package at a time, holding only the packages cfg names (not the
	// whole database rendered), and the names of all, to replace them.
	sel := NewSelection(cfg)
	seen := map[string]bool{}
	var names []string
	err := fbc.EachIndexFile(ctx, db.Path(), fbc.RenderOptions{}, func(part *fbc.Catalog, _ []string) error {
		for _, n := range part.PackageNames() {
			if !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
		return sel.Add(part)
	})
	if err != nil {
		return nil, err
	}
	out, rep, err := sel.Filter()
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	if len(names) > 0 {
		if _, err := db.RemovePackages(ctx, names); err != nil {
			return nil, err
		}
	}
	if err := fbc.ImportCatalog(ctx, db, out); err != nil {
		return nil, err
	}
	return rep, nil
}
