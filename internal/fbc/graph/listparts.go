package graph

import (
	"slices"
	"strings"

	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/index"
)

// Rows gathers the rows of ListPackages, ListChannels and ListBundles of
// a catalog handed over a package at a time (each package whole, in any
// order): Done then holds what those give for the catalog whole. Package,
// when set, keeps that package's channels and bundles only.
type Rows struct {
	Package  string
	Packages []index.PackageRow
	Channels []index.ChannelRow
	Bundles  []index.BundleRow
	found    bool
}

// Add lists the packages, channels and bundles of c, one package's blobs.
func (r *Rows) Add(c *fbc.Catalog) error {
	if r.Package != "" {
		if c.CheckPackage(r.Package) != nil {
			return nil // another package
		}
		r.found = true
	}
	r.Packages = append(r.Packages, ListPackages(c)...)
	chans, err := ListChannels(c, r.Package)
	if err != nil {
		return err
	}
	r.Channels = append(r.Channels, chans...)
	bundles, err := ListBundles(c, r.Package)
	if err != nil {
		return err
	}
	r.Bundles = append(r.Bundles, bundles...)
	return nil
}

// Done sorts the rows as the lists of the whole catalog are (each
// package's rows are in that order already: a stable sort by package puts
// the packages in it too), and fails as they do when Package is not in
// the catalog.
func (r *Rows) Done() error {
	if r.Package != "" && !r.found {
		return (&fbc.Catalog{}).CheckPackage(r.Package)
	}
	slices.SortStableFunc(r.Packages, func(a, b index.PackageRow) int { return strings.Compare(a.Name, b.Name) })
	slices.SortStableFunc(r.Channels, func(a, b index.ChannelRow) int { return strings.Compare(a.Package, b.Package) })
	slices.SortStableFunc(r.Bundles, func(a, b index.BundleRow) int { return strings.Compare(a.Package, b.Package) })
	return nil
}

// RowsOf lists a whole catalog as Rows; a package it lacks is an error
// naming the packages it has.
func RowsOf(c *fbc.Catalog, pkg string) (*Rows, error) {
	if pkg != "" {
		if err := c.CheckPackage(pkg); err != nil {
			return nil, err
		}
	}
	r := &Rows{Package: pkg}
	return r, r.Add(c)
}
