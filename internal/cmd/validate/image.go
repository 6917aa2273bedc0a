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

// isImage says whether arg names an image rather than a directory: it is
// no path on disk and reads as an image reference.
func isImage(arg string) bool {
	if _, err := os.Lstat(arg); err == nil {
		return false
	}
	return image.LooksLikeReference(arg)
}

// imageFindings opens the index image opts.Dir (a file-based catalog, the
// catalog of an image holding both, or a sqlite database rendered) and
// checks its catalog and, with the olmv1 set, its labels as catalogd does.
func imageFindings(ctx context.Context, f *factory.Factory, opts *Options, vopts validate.Options) ([]validate.Finding, error) {
	if err := opts.Image.Validate(); err != nil {
		return nil, exit.Usagef("%v", err)
	}
	o := catalogsource.NewOpener(f, opts.Image, fbc.RenderOptions{})
	// catalogd reads the file-based catalog of an image that has both.
	o.PreferCatalog = true
	c, err := o.Open(ctx, opts.Dir, catalogsource.CatalogImage, catalogsource.DatabaseImage)
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			return nil, exit.Interrupt()
		}
		return nil, exit.With(exit.Usage, fmt.Errorf("validate %s: %w", opts.Dir, err))
	}
	olmv1 := false
	for _, r := range validate.Rules() {
		olmv1 = olmv1 || (r.Set == validate.SetOLMv1 && vopts.Enabled(r.ID))
	}
	var findings []validate.Finding
	if olmv1 {
		findings = indeximage.OLMv1Findings(opts.Dir, c.Labels)
		findings = append(findings, fbc.ValidateOLMv1(c.Catalog)...)
	}
	return append(findings, fbc.Validate(c.Catalog)...), nil
}
