package validate

import (
	"fmt"
	"strings"

	"github.com/opmkit/opm/internal/bundle"
)

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

func init() {
	register(&Rule{ID: "package-duplicate-csv", Severity: Error, Scope: ScopePackage,
		What: "Bundles of one package validated together have distinct CSV names and distinct versions.",
		Why:  "An index keys bundles by CSV name and version: a second bundle with the same name or version is refused (upstream silently kept the first one).",
		Fix:  "Give each bundle its own version and CSV name (<operator>.v<version>).",
		checkPackage: func(c *PackageContext) {
			byName := map[string][]*bundle.Bundle{}
			byVersion := map[string][]*bundle.Bundle{}
			for _, b := range c.Bundles {
				byName[b.CSV.Metadata.Name] = append(byName[b.CSV.Metadata.Name], b)
				key := b.CSV.Spec.Version + "-" + b.CSV.Spec.Release
				byVersion[key] = append(byVersion[key], b)
			}
			for _, b := range c.Bundles {
				others := func(list []*bundle.Bundle) string {
					var paths []string
					for _, o := range list {
						if o != b {
							paths = append(paths, c.reports[o].Path)
						}
					}
					return strings.Join(paths, ", ")
				}
				if same := byName[b.CSV.Metadata.Name]; len(same) > 1 {
					c.Report(b, b.CSV.Object, "metadata.name", fmt.Sprintf("CSV name %q is also used by %s in package %s", b.CSV.Metadata.Name, others(same), c.Package),
						"give each bundle its own CSV name, matching its version")
				} else if same := byVersion[b.CSV.Spec.Version+"-"+b.CSV.Spec.Release]; len(same) > 1 && b.CSV.Spec.Version != "" {
					c.Report(b, b.CSV.Object, "spec.version", fmt.Sprintf("version %s is also used by %s in package %s", b.CSV.Spec.Version, others(same), c.Package),
						"give each bundle its own version")
				}
			}
		}})
}
