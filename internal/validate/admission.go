package validate

import (
	"fmt"
	"strings"

	"github.com/opmkit/opm/internal/bundle"
)

// IndexRules are the rules whose errors keep a bundle out of an index. Each
// is something upstream opm or OLM refuses too, so that opm never keeps a
// bundle out of a catalog that the rest of the ecosystem takes:
//   - unreadable YAML, no CSV, two CSVs, a bundle that does not load: OLM's
//     unpacker fails on them (upstream's index add drops unreadable files
//     and so stores a bundle that cannot install);
//   - csv-field-type, csv-name: the API server refuses such a CSV (names
//     over 63 characters break OLM's olm.owner labels);
//   - csv-version: OLM cannot decode a CSV whose version does not parse, and
//     upstream's semver modes and render refuse a missing one;
//   - annotations-*: upstream's index add refuses a bundle without its
//     package and channels.
//
// Not here, though bundle validate reports them: csv-api-version (OLM finds
// the CSV by kind and reads it as v1alpha1 whatever its apiVersion, and
// upstream adds such bundles) and yaml-duplicate-key (Kubernetes, OLM and
// upstream all keep the last value). opm index add runs these rules on
// every bundle before writing, so that it refuses with the same rule ids as
// opm bundle validate.
var IndexRules = []string{
	ruleYAMLSyntax.ID,
	ruleNoCSV.ID, ruleMultipleCSVs.ID, ruleLoad.ID,
	"csv-field-type", "csv-name", "csv-version",
	"annotations-missing", "annotations-required", "annotations-mediatype", "annotations-package", "annotations-channels",
}

// CheckForIndex runs IndexRules over one loaded bundle (loadErr is what
// loading returned) and keeps only their errors: an empty report admits
// the bundle.
func CheckForIndex(path string, b *bundle.Bundle, loadErr error) BundleReport {
	rep := Check(path, b, loadErr, Options{Select: IndexRules})
	kept := rep.Findings[:0]
	for _, f := range rep.Findings {
		if f.Severity == Error {
			kept = append(kept, f)
		}
	}
	rep.Findings = kept
	sortFindings(rep.Findings)
	return rep
}

// RefusedError says why a bundle cannot go into an index: the findings of
// CheckForIndex, each with its rule id.
type RefusedError struct {
	Report BundleReport
}

// Err returns a *RefusedError when the report holds a finding, else nil.
func (r BundleReport) Err() error {
	if len(r.Findings) == 0 {
		return nil
	}
	return &RefusedError{Report: r}
}

func (e *RefusedError) Error() string {
	var b strings.Builder
	who := e.Report.Path
	if e.Report.Name != "" && e.Report.Name != who {
		who = fmt.Sprintf("%s (%s)", e.Report.Name, who)
	}
	fmt.Fprintf(&b, "bundle %s cannot go into an index:", who)
	for _, f := range e.Report.Findings {
		b.WriteString("\n  ")
		b.WriteString(f.Rule)
		b.WriteString(": ")
		if f.File != "" {
			b.WriteString(f.File)
			if f.Line > 0 {
				fmt.Fprintf(&b, ":%d", f.Line)
			}
			b.WriteString(": ")
		}
		b.WriteString(f.Message)
		if f.Hint != "" {
			b.WriteString(" (fix: " + f.Hint + ")")
		}
	}
	return b.String()
}

// Rules returns the rule ids of the refusal, each once, in order.
func (e *RefusedError) Rules() []string {
	var out []string
	for _, f := range e.Report.Findings {
		if !contains(out, f.Rule) {
			out = append(out, f.Rule)
		}
	}
	return out
}
