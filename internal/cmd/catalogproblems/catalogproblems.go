// Package catalogproblems reports, for render and migrate, the problems of
// the catalogs their sqlite sources render to: all at once, refusing the
// run unless --permissive.
package catalogproblems

import (
	"errors"
	"fmt"

	"github.com/opmkit/opm/internal/cmd/catalogsource"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/printable"
	"github.com/opmkit/opm/internal/validate"
)

// PermissiveUsage is the help of render's and migrate's --permissive.
const PermissiveUsage = "write the catalog of a sqlite index even when it does not validate (every problem is still reported), to fix it in the catalog"

// Problems collects the problems of every source of one run, to report
// them all at once: the findings that make the catalog a sqlite source
// renders to invalid (what opm serve, opm validate and migrate --to sqlite
// refuse, and what upstream's render refuses). Other kinds of source are
// written as they are.
type Problems struct {
	reports []validate.BundleReport
	n       int
}

// Add records the problems of source src.
func (p *Problems) Add(src string, c *catalogsource.Catalog) {
	if c.Kind == catalogsource.Database || c.Kind == catalogsource.DatabaseImage {
		p.AddCheck(src, c.Kind, fbc.Check(c.Catalog))
	}
}

// AddCheck records the problems of source src of kind k from an error of
// fbc.Check (or fbc.Checks.Err): none unless k is a sqlite source.
func (p *Problems) AddCheck(src string, k catalogsource.Kind, err error) {
	var ie *fbc.InvalidError
	if (k == catalogsource.Database || k == catalogsource.DatabaseImage) && errors.As(err, &ie) && len(ie.Findings) > 0 {
		p.reports = append(p.reports, validate.BundleReport{Path: src, Findings: ie.Findings})
		p.n += len(ie.Findings)
	}
}

// Report prints every problem in one report on stderr. Without permissive
// it returns the error that refuses the run (verb names it: "render",
// "migrate"); with it, a note that the catalog is written anyway.
func (p *Problems) Report(f *factory.Factory, verb string, permissive bool) error {
	if len(p.reports) == 0 {
		return nil
	}
	t := f.IO.ErrTheme()
	res := validate.NewResult(p.reports, validate.Error)
	if err := validate.WriteText(f.IO.ErrOut, res, validate.TextOptions{Styles: t.ValidateStyles(), Noun: "index"}); err != nil {
		return exit.With(exit.Usage, err)
	}
	if permissive {
		fmt.Fprintf(f.IO.ErrOut, "%s writing the catalog anyway (--permissive): fix the %s above in it; opm validate checks it, and opm serve refuses it until then\n",
			t.NotePrefix(), printable.Count(p.n, "problem", "problems"))
		return nil
	}
	return exit.With(exit.Failed, fmt.Errorf("%s: %s above, in the index's bundles: the catalog would not validate, and opm serve would refuse it (upstream's render refuses it too). "+
		"Fix the bundles (a skipRange comes from the CSV's olm.skipRange annotation) and rebuild the index, or give --permissive to write the catalog anyway and fix it there", verb, printable.Count(p.n, "problem", "problems")))
}
