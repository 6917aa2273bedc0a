package mirror

import (
	"context"
	"errors"
	"fmt"

	"github.com/opmkit/opm/internal/catalogimages"
	"github.com/opmkit/opm/internal/cmd/catalogsource"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/index/indexio"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/indeximage"
	"github.com/opmkit/opm/internal/mirror"
)

// planConfig plans the mirror of the ImageSetConfiguration opts.Config
// (mirror.PlanImageSet), its catalogs rebuilt under work.
func planConfig(ctx context.Context, f *factory.Factory, opts *Options, cl *image.Client, work string) ([]mirror.Item, []mirror.Blocked, error) {
	items, blocked, err := mirror.PlanImageSet(ctx, mirror.ImageSetRequest{
		Path: opts.Config, Client: cl, Work: work, Cache: indeximage.CacheIn(f.LookupEnv),
		Warn: func(w string) { fmt.Fprintf(f.IO.ErrOut, "warning: %s\n", w) },
		Say:  func(s string) { fmt.Fprintln(f.IO.ErrOut, s) },
		Images: func(ctx context.Context, catalog, source string) ([]catalogimages.Image, error) {
			images, refused, err := listImages(ctx, f, opts, catalog)
			if err != nil {
				return nil, fmt.Errorf("read the filtered catalog of %s: %w", source, err)
			}
			if len(refused) > 0 {
				return nil, catalogimages.RefusedError(source, refused)
			}
			return images, nil
		},
	})
	var bad *mirror.ConfigError
	if errors.As(err, &bad) {
		return nil, nil, exit.With(exit.Usage, err)
	}
	if err != nil {
		return nil, nil, indexio.Interrupted(ctx, err)
	}
	return items, blocked, nil
}

// listImages lists the images the catalog at ref needs, read part by part
// (the images of a large catalog, not the catalog), and those it names
// outside a registry.
func listImages(ctx context.Context, f *factory.Factory, opts *Options, ref string) ([]catalogimages.Image, []catalogimages.Refused, error) {
	l := catalogimages.NewLister("")
	add := func(c *fbc.Catalog) error { l.Add(c); return nil }
	if _, err := catalogsource.NewOpener(f, opts.Image, fbc.RenderOptions{}).OpenEach(ctx, ref, add, catalogsource.DatabaseImage, catalogsource.CatalogImage); err != nil {
		return nil, nil, err
	}
	return l.Images(), l.Refused(), nil
}
