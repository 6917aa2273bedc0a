package validate

import "github.com/opmkit/opm/internal/bundle"

// PackageContext is what a package rule sees: the bundles of one package
// given in the same run, and where to report.
type PackageContext struct {
	Package string
	Bundles []*bundle.Bundle
	Opts    Options

	rule    *Rule
	reports map[*bundle.Bundle]*BundleReport
}

// Report records a finding against bundle b.
func (c *PackageContext) Report(b *bundle.Bundle, obj *bundle.Object, field, msg, hint string) {
	f := Finding{Rule: c.rule.ID, Severity: c.rule.Severity, Field: field, Message: msg, Hint: hint}
	if obj != nil {
		f.File, f.Line = obj.File, obj.Line(field)
	}
	rep := c.reports[b]
	rep.Findings = append(rep.Findings, f)
}

// checkPackages groups the loaded bundles by package and runs the package
// rules over each group with more than one bundle.
func checkPackages(bundles []*bundle.Bundle, reports []BundleReport, opts Options) {
	groups := map[string][]*bundle.Bundle{}
	var order []string
	byBundle := map[*bundle.Bundle]*BundleReport{}
	for i, b := range bundles {
		if b == nil || b.CSV == nil {
			continue
		}
		pkg := b.Package()
		if _, ok := groups[pkg]; !ok {
			order = append(order, pkg)
		}
		groups[pkg] = append(groups[pkg], b)
		byBundle[b] = &reports[i]
	}
	for _, pkg := range order {
		if len(groups[pkg]) < 2 {
			continue
		}
		for _, r := range Rules() {
			if r.checkPackage == nil || !opts.enabled(r.ID) {
				continue
			}
			r.checkPackage(&PackageContext{Package: pkg, Bundles: groups[pkg], Opts: opts, rule: r, reports: byBundle})
		}
	}
}
