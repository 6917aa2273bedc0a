package validate

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/opmkit/opm/internal/cmd/catalogsource"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/indeximage"
	"github.com/opmkit/opm/internal/validate"
)

// isImage: arg is no path on disk and reads as an image reference.
func isImage(arg string) bool {
	_, err := os.Lstat(arg)
	return err != nil && image.LooksLikeReference(arg)
}

// imageFindings checks the catalog of index image dir as catalogd
// reads it (its FBC, even beside a database; else the database rendered)
// and, with the olmv1 set, its labels.
func imageFindings(ctx context.Context, f *factory.Factory, opts *Options, vopts validate.Options, dir string) ([]validate.Finding, error) {
	if err := opts.Image.Validate(); err != nil {
		return nil, exit.Usagef("%v", err)
	}
	o := catalogsource.NewOpener(f, opts.Image, fbc.RenderOptions{})
	o.PreferCatalog, o.Limits = true, opts.Limits
	c, err := o.Open(ctx, dir, catalogsource.CatalogImage, catalogsource.DatabaseImage)
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			return nil, exit.Interrupt()
		}
		return nil, exit.With(exit.Usage, fmt.Errorf("validate %s: %w", dir, err))
	}
	findings := append(fbc.EmptyFinding(dir, c.Catalog), fbc.Validate(c.Catalog)...)
	findings = append(findings, fbc.ValidatePublishing(c.Catalog, vopts)...)
	if vopts.EnabledSet(validate.SetOLMv1) {
		findings = append(append(findings, indeximage.OLMv1Findings(dir, c.Labels)...), fbc.ValidateOLMv1(c.Catalog)...)
	}
	return findings, nil
}
