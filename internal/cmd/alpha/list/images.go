package list

import (
	"fmt"

	"github.com/opmkit/opm/internal/catalogimages"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/output"
	"github.com/opmkit/opm/internal/fbc"
)

func writeImages(f *factory.Factory, opts *Options, c *fbc.Catalog) error {
	if opts.Package != "" {
		found := false
		for _, p := range c.Packages {
			found = found || p.Name == opts.Package
		}
		if !found {
			return fmt.Errorf("package %q not found", opts.Package)
		}
	}
	images := catalogimages.List(c, opts.Package)
	if opts.Output == output.JSON {
		return output.WriteJSON(f.IO.Out, images)
	}
	return catalogimages.WriteTable(f.IO.Out, images)
}
