package list

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/cmd/bundlesource"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/output"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/olmv1"
	"github.com/opmkit/opm/internal/printable"
)

func runOLMv1(ctx context.Context, f *factory.Factory, opts *Options, c *fbc.Catalog) error {
	jo := olmv1.Options{Package: opts.Package}
	if opts.Pull {
		opener := bundlesource.NewOpener(opts.Image, f.ImageClient)
		jo.Pull = func(ctx context.Context, image string) (*bundle.Bundle, error) {
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
		return writePackageVerdicts(f.IO.Out, rows)
	}
	if opts.Output == output.JSON {
		return output.WriteJSON(f.IO.Out, verdicts)
	}
	return writeVerdicts(f.IO.Out, verdicts)
}

func yesNo(ok, complete bool) string {
	switch {
	case !ok:
		return "no"
	case !complete:
		return "yes?"
	}
	return "yes"
}

func writeVerdicts(w io.Writer, verdicts []olmv1.Verdict) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PACKAGE\tBUNDLE\tVERSION\tINSTALLABLE\tWHY")
	for _, v := range verdicts {
		var why []string
		for _, r := range v.Reasons {
			why = append(why, r.Severity+": "+r.Message)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", printable.Name(v.Package), printable.Name(v.Name), printable.Name(v.Version),
			yesNo(v.Installable, v.Complete), printable.Text(strings.Join(why, "; ")))
	}
	return tw.Flush()
}

func writePackageVerdicts(w io.Writer, rows []olmv1.PackageVerdict) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tDEFAULT CHANNEL\tHEAD\tHEAD INSTALLABLE\tINSTALLABLE BUNDLES")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d/%d\n", printable.Name(r.Name), printable.Name(r.DefaultChannel), printable.Name(r.Head),
			yesNo(r.HeadInstallable, r.HeadComplete), r.Installable, r.Bundles)
	}
	return tw.Flush()
}
