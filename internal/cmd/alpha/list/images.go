package list

import (
	"github.com/opmkit/opm/internal/catalogimages"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/output"
	"github.com/opmkit/opm/internal/fbc"
)

// writeImages lists the images the catalog needs; images it names by
// another transport than a registry (files of this machine) are not
// listed but refused, each with the bundle naming it.
func writeImages(f *factory.Factory, opts *Options, c *fbc.Catalog) error {
	if err := c.CheckPackage(opts.Package); err != nil {
		return err
	}
	l := catalogimages.NewLister(opts.Package)
	l.Add(c)
	images := l.Images()
	var err error
	if opts.Output == output.JSON {
		err = output.WriteJSON(f.IO.Out, images)
	} else {
		err = catalogimages.WriteTable(f.IO.Out, images)
	}
	if err != nil {
		return err
	}
	return l.RefusedError()
}
