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
	"github.com/opmkit/opm/internal/fbc/graph"
	"github.com/opmkit/opm/internal/olmv1"
	"github.com/opmkit/opm/internal/printable"
)

// PackageVerdict is a package's line of `list packages --olmv1`.
type PackageVerdict struct {
	Name           string `json:"name"`
	DefaultChannel string `json:"defaultChannel"`
	Head           string `json:"head"`
	// HeadInstallable says whether the default channel's head is
	// installable: what a ClusterExtension naming only the package gets.
	HeadInstallable bool `json:"headInstallable"`
	headComplete    bool
	Bundles         int  `json:"bundles"`
	Installable     int  `json:"installable"`
	// Complete is false when some verdict could not read everything.
	Complete bool `json:"complete"`
}

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
		rows := packageVerdicts(c, verdicts)
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

func packageVerdicts(c *fbc.Catalog, verdicts []olmv1.Verdict) []PackageVerdict {
	by := map[[2]string]olmv1.Verdict{}
	for _, v := range verdicts {
		by[[2]string{v.Package, v.Name}] = v
	}
	heads := map[[2]string]string{}
	for i := range c.Channels {
		ch := &c.Channels[i]
		if h := graph.Heads(ch); len(h) == 1 {
			heads[[2]string{ch.Package, ch.Name}] = h[0]
		}
	}
	rows := []PackageVerdict{}
	for _, p := range c.Packages {
		r := PackageVerdict{Name: p.Name, DefaultChannel: p.DefaultChannel, Complete: true}
		r.Head = heads[[2]string{p.Name, p.DefaultChannel}]
		for _, v := range verdicts {
			if v.Package != p.Name {
				continue
			}
			r.Bundles++
			if v.Installable {
				r.Installable++
			}
			r.Complete = r.Complete && v.Complete
		}
		if v, ok := by[[2]string{p.Name, r.Head}]; ok {
			r.HeadInstallable, r.headComplete = v.Installable, v.Complete
		}
		rows = append(rows, r)
	}
	return rows
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

func writePackageVerdicts(w io.Writer, rows []PackageVerdict) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tDEFAULT CHANNEL\tHEAD\tHEAD INSTALLABLE\tINSTALLABLE BUNDLES")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d/%d\n", printable.Name(r.Name), printable.Name(r.DefaultChannel), printable.Name(r.Head),
			yesNo(r.HeadInstallable, r.headComplete), r.Installable, r.Bundles)
	}
	return tw.Flush()
}
