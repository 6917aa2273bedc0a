package mirror

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/opmkit/opm/internal/catalogfilter"
	"github.com/opmkit/opm/internal/catalogimages"
	"github.com/opmkit/opm/internal/cmd/catalogsource"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	indexfilter "github.com/opmkit/opm/internal/cmd/index/filter"
	"github.com/opmkit/opm/internal/cmd/index/indexio"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/index"
	"github.com/opmkit/opm/internal/indexchange"
	"github.com/opmkit/opm/internal/indeximage"
	"github.com/opmkit/opm/internal/mirror"
	"github.com/opmkit/opm/internal/printable"
)

// planConfig reads the ImageSetConfiguration opts.Config and plans its
// mirror: each catalog it names filtered as opm alpha filter does and
// rebuilt as opm index filter does (its layers, the catalog layer
// replaced, the serve cache rebuilt) into an OCI layout under work, then
// the images of what is kept; mirror.additionalImages; and what
// mirror.blockedImages leaves out.
func planConfig(ctx context.Context, f *factory.Factory, opts *Options, cl *image.Client, work string) ([]mirror.Item, []mirror.Blocked, error) {
	data, err := os.ReadFile(opts.Config)
	if err != nil {
		return nil, nil, exit.With(exit.Usage, fmt.Errorf("read --config: %w", err))
	}
	set, err := catalogfilter.ParseImageSet(opts.Config, data)
	if err != nil {
		return nil, nil, exit.With(exit.Usage, err)
	}
	blocker, err := mirror.NewBlocker(set.Blocked)
	if err != nil {
		return nil, nil, exit.With(exit.Usage, fmt.Errorf("%s: %w", opts.Config, err))
	}
	// Every reference is checked before anything is read.
	for _, c := range set.Catalogs {
		if ref, err := image.ParseReference(c.Ref); err != nil || ref.Transport != image.TransportRegistry {
			return nil, nil, exit.With(exit.Usage, fmt.Errorf("%s: mirror.operators catalog %q: give a catalog image in a registry", opts.Config, c.Ref))
		}
	}
	for _, a := range set.Additional {
		if ref, err := image.ParseReference(a); err != nil || ref.Transport != image.TransportRegistry {
			return nil, nil, exit.With(exit.Usage, fmt.Errorf("%s: mirror.additionalImages %q: give an image in a registry, by tag or digest", opts.Config, a))
		}
	}

	var items []mirror.Item
	for i, c := range set.Catalogs {
		if len(c.Ignored) > 0 {
			fmt.Fprintf(f.IO.ErrOut, "warning: %s: mirror.operators[%d] (%s): %s not applied: the filtered catalog goes under its source's repository and tag\n",
				printable.Name(opts.Config), i, printable.Name(c.Ref), strings.Join(c.Ignored, " and "))
		}
		layout := "oci:" + filepath.Join(work, fmt.Sprintf("catalog-%d", i)) + ":filtered"
		res, err := indexchange.Apply(ctx, indexchange.Request{
			Client: cl, FromIndex: c.Ref, Tag: layout,
			Cache: indeximage.CacheIn(f.LookupEnv),
			Warn:  func(w string) { fmt.Fprintf(f.IO.ErrOut, "warning: %s\n", printable.Text(w)) },
		}, func(db *index.DB) error {
			rep, err := indexfilter.FilterDB(ctx, db, c.Config)
			if err == nil {
				fmt.Fprintf(f.IO.ErrOut, "filtered %s: removed %d bundles, kept %d outside a range\n", printable.Name(c.Ref), len(rep.Removed), len(rep.Extra))
			}
			return err
		})
		if err != nil {
			return nil, nil, indexio.Interrupted(ctx, fmt.Errorf("filter %s (%s): %w\nnothing was copied", c.Ref, opts.Config, err))
		}
		if res.Image != nil {
			for _, w := range res.Image.Warnings {
				fmt.Fprintf(f.IO.ErrOut, "warning: %s: %s\n", printable.Name(c.Ref), printable.Text(w))
			}
		}
		// The images of what is kept, read from the rebuilt image.
		l := catalogimages.NewLister("")
		add := func(cat *fbc.Catalog) error { l.Add(cat); return nil }
		if _, err := catalogsource.NewOpener(f, opts.Image, fbc.RenderOptions{}).OpenEach(ctx, layout, add, catalogsource.DatabaseImage, catalogsource.CatalogImage); err != nil {
			return nil, nil, indexio.Interrupted(ctx, exit.With(exit.Failed, fmt.Errorf("read the filtered catalog of %s: %w", c.Ref, err)))
		}
		if refused := l.Refused(); len(refused) > 0 {
			return nil, nil, exit.With(exit.Failed, catalogimages.RefusedError(c.Ref, refused))
		}
		plan := mirror.Plan(c.Ref, l.Images())
		plan[0].From, plan[0].Rebuilt = layout, true
		items = append(items, plan...)
	}
	for _, a := range set.Additional {
		items = append(items, mirror.Item{Source: a, Role: mirror.RoleAdditional})
	}
	items = mirror.Dedupe(items)
	kept, blocked := mirror.Block(items, blocker)
	return kept, blocked, nil
}
