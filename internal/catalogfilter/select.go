package catalogfilter

import (
	"sort"

	"github.com/opmkit/opm/internal/fbc"
)

// Selection takes a catalog in parts (as a reader hands it over a
// directory or a package at a time) and holds only the blobs of the
// packages a configuration names, so that filtering a few packages out of
// a large catalog holds those packages in memory rather than the catalog.
// Of the other packages it keeps the names of their bundles, for the
// report. A configuration that names no package (oc-mirror's full
// catalog) keeps everything.
type Selection struct {
	cfg  *Config
	want map[string]bool
	c    fbc.Catalog
	// Bundles of packages not selected, and the packages whose olm.package
	// blob was seen: Filter reports a bundle as "package not selected"
	// only when its package has a blob.
	dropped     []Removal
	droppedPkgs map[string]bool
}

// NewSelection is an empty selection for cfg.
func NewSelection(cfg *Config) *Selection {
	s := &Selection{cfg: cfg, droppedPkgs: map[string]bool{}}
	if len(cfg.Packages) > 0 {
		s.want = map[string]bool{}
		for _, p := range cfg.Packages {
			s.want[p.Name] = true
		}
	}
	return s
}

// keeps says whether blobs of package pkg are held ("" is no package's:
// kept, as Filter keeps them).
func (s *Selection) keeps(pkg string) bool {
	return s.want == nil || pkg == "" || s.want[pkg]
}

// Add takes in one part of the catalog (a package may be spread over
// parts). It never fails; its error is for readers that take a func(part)
// error.
func (s *Selection) Add(part *fbc.Catalog) error {
	for _, p := range part.Packages {
		if s.keeps(p.Name) {
			s.c.Packages = append(s.c.Packages, p)
		} else {
			s.droppedPkgs[p.Name] = true
		}
	}
	for _, ch := range part.Channels {
		if s.keeps(ch.Package) {
			s.c.Channels = append(s.c.Channels, ch)
		}
	}
	for _, b := range part.Bundles {
		if s.keeps(b.Package) {
			s.c.Bundles = append(s.c.Bundles, b)
		} else {
			s.dropped = append(s.dropped, Removal{Package: b.Package, Bundle: b.Name, Why: "package not selected"})
		}
	}
	for _, m := range part.Others {
		if s.keeps(m.Package) {
			s.c.Others = append(s.c.Others, m)
		}
	}
	return nil
}

// Filter is Filter over the whole catalog the parts made.
func (s *Selection) Filter() (*fbc.Catalog, *Report, error) {
	// A missing package is said naming every package seen, the dropped
	// ones too, as Filter of the whole catalog says it.
	seen := &fbc.Catalog{Packages: append([]fbc.Package(nil), s.c.Packages...)}
	for name := range s.droppedPkgs {
		seen.Packages = append(seen.Packages, fbc.Package{Name: name})
	}
	for _, p := range s.cfg.Packages {
		if err := seen.CheckPackage(p.Name); err != nil {
			return nil, nil, err
		}
	}
	out, rep, err := Filter(&s.c, s.cfg)
	if err != nil {
		return nil, nil, err
	}
	for _, r := range s.dropped {
		if s.droppedPkgs[r.Package] {
			rep.Removed = append(rep.Removed, r)
		}
	}
	sortRemoved(rep.Removed)
	return out, rep, nil
}

func sortRemoved(rs []Removal) {
	sort.SliceStable(rs, func(i, j int) bool {
		a, b := rs[i], rs[j]
		if a.Package != b.Package {
			return a.Package < b.Package
		}
		return a.Bundle < b.Bundle
	})
}
