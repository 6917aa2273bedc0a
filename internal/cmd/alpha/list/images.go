package list

import (
	"github.com/opmkit/opm/internal/catalogimages"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/output"
	"github.com/opmkit/opm/internal/fbc"
)

func writeImages(f *factory.Factory, opts *Options, c *fbc.Catalog) error {
	if err := c.CheckPackage(opts.Package); err != nil {
		return err
	}
	images := catalogimages.List(c, opts.Package)
	if opts.Output == output.JSON {
		return output.WriteJSON(f.IO.Out, images)
	}
	return catalogimages.WriteTable(f.IO.Out, images)
}
