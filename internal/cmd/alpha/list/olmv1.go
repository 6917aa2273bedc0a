package list

import (
	"context"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/catalogimages"
	"github.com/opmkit/opm/internal/cmd/bundlesource"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/output"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/olmv1"
)

func runOLMv1(ctx context.Context, f *factory.Factory, opts *Options, c *fbc.Catalog) error {
	jo := olmv1.Options{Package: opts.Package}
	if opts.Pull {
		opener := bundlesource.NewOpener(opts.Image, f.ImageClient)
		jo.Pull = func(ctx context.Context, image string) (*bundle.Bundle, error) {
			// The catalog names the image: a registry's, never a file here.
			image, err := catalogimages.RegistryRef(image)
			if err != nil {
				return nil, err
			}
			o, err := opener.Open(ctx, image)
			if o == nil {
				return nil, err
			}
			return o.Bundle, err
		}
	}
	verdicts, err := olmv1.Judge(ctx, c, jo)
	if err != nil {
		return err
	}
	if opts.What == Packages {
		rows := olmv1.Packages(c, verdicts)
		if opts.Output == output.JSON {
			return output.WriteJSON(f.IO.Out, rows)
		}
		return olmv1.WritePackageTable(f.IO.Out, rows)
	}
	if opts.Output == output.JSON {
		return output.WriteJSON(f.IO.Out, verdicts)
	}
	return olmv1.WriteTable(f.IO.Out, verdicts)
}
