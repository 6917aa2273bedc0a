package validate

import (
	"context"
	"errors"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/yamldoc"
)

// Input is one thing to validate: where it came from, and how to load it.
type Input struct {
	// Path is what the user gave (a directory, a CSV file, an image
	// reference); reports carry it as is.
	Path string
	// Load returns the bundle, with an error for what could not be read
	// (see bundle.Load: a bundle and an error may both be returned).
	Load func(ctx context.Context) (*bundle.Bundle, error)
	// Package, when set, names the input's package cheaply, before Load
	// (for a directory, from its annotations alone: see DirInput), so that
	// Stream can finish that package before every input is loaded. It must
	// name the package that Load's bundle will have (bundle.Package), or
	// return "" when it cannot tell.
	Package func(ctx context.Context) string
}

// Run loads and checks every input, several at once, then runs the package
// rules across the bundles of each package. Reports keep the inputs' order.
// It is Stream with every package's reports gathered into one Result.
func Run(ctx context.Context, inputs []Input, opts Options) *Result {
	reports := make([]BundleReport, len(inputs))
	Stream(ctx, inputs, opts, func(p PackageReport) {
		for k, i := range p.Inputs {
			reports[i] = p.Bundles[k]
		}
	})
	res := &Result{Passed: true, Bundles: reports}
	for _, br := range res.Bundles {
		for _, f := range br.Findings {
			if Fails(f.Severity, opts.FailOn) {
				res.Passed = false
			}
		}
	}
	return res
}

// Check runs the CSV and bundle rules over one loaded bundle. loadErr is what
// loading it returned; its problems become findings too.
func Check(path string, b *bundle.Bundle, loadErr error, opts Options) BundleReport {
	rep := BundleReport{Path: path, Findings: []Finding{}}
	for _, p := range bundle.Problems(loadErr) {
		f := loadFinding(p)
		if opts.enabled(f.Rule) {
			rep.Findings = append(rep.Findings, f)
		}
	}
	if b == nil {
		return rep
	}
	if b.CSV != nil {
		rep.Name = b.CSV.Metadata.Name
	}
	for _, r := range Rules() {
		if r.check == nil || !opts.enabled(r.ID) {
			continue
		}
		if r.Scope == ScopeBundle && b.Standalone() {
			continue
		}
		if b.CSV == nil && !r.runsWithoutCSV() {
			continue
		}
		c := &Context{Path: path, Bundle: b, CSV: b.CSV, Opts: opts, rule: r}
		r.check(c)
		rep.Findings = append(rep.Findings, c.findings...)
	}
	sayUnreadable(rep.Findings)
	return rep
}

// sayUnreadable rewords a finding that calls annotations.yaml missing when
// the file is there but does not parse: its syntax error, listed first, is
// the cause.
func sayUnreadable(fs []Finding) {
	broken := map[string]bool{}
	for _, f := range fs {
		if f.Rule == ruleYAMLSyntax.ID {
			broken[f.File] = true
		}
	}
	for i, f := range fs {
		if f.Rule == "annotations-missing" && broken[f.File] {
			fs[i].Message = f.File + " cannot be read: it has a syntax error (see its yaml-syntax finding)"
			fs[i].Hint = "fix the syntax error; the annotations in the file are not read until then"
		}
	}
}

// runsWithoutCSV reports whether a bundle rule still makes sense when the
// bundle has no readable CSV (annotations, CRDs on their own, file layout).
func (r *Rule) runsWithoutCSV() bool { return r.NoCSV }

// Load problems become findings of these rules.
var (
	ruleYAMLSyntax = register(&Rule{ID: "yaml-syntax", Severity: Error, Scope: ScopeCSV, NoCSV: true, RootCause: true,
		What: "Every manifest and metadata file parses as YAML or JSON.",
		Why:  "A file that does not parse is skipped or refused by every OLM tool; upstream reports it as a missing CSV, which hides the real cause.",
		Fix:  "Fix the syntax at the reported line (indentation, an unclosed quote or bracket, a tab)."})
	ruleNoCSV = register(&Rule{ID: "bundle-no-csv", Severity: Error, Scope: ScopeBundle, NoCSV: true,
		What: "The bundle holds a ClusterServiceVersion in manifests/.",
		Why:  "A bundle is identified by its CSV; without one OLM cannot install anything.",
		Fix:  "Put the operator's CSV (kind: ClusterServiceVersion) in manifests/."})
	ruleMultipleCSVs = register(&Rule{ID: "bundle-multiple-csvs", Severity: Error, Scope: ScopeBundle, NoCSV: true,
		What: "manifests/ holds exactly one ClusterServiceVersion.",
		Why:  "A bundle is one operator version; with two CSVs upstream silently keeps one of them.",
		Fix:  "Move each extra CSV to a bundle directory of its own."})
	ruleLoad = register(&Rule{ID: "bundle-load", Severity: Error, Scope: ScopeBundle, NoCSV: true, RootCause: true,
		What: "The bundle can be read at all.",
		Why:  "Nothing else can be checked in a bundle that cannot be read.",
		Fix:  "Follow the message: usually a path that is not a bundle directory, or a file that cannot be read."})
)

func loadFinding(err error) Finding {
	var se *yamldoc.SyntaxError
	var tl *bundle.FileTooLargeError
	var sl *bundle.SymlinkError
	var sub *bundle.BundleSubdirError
	switch {
	case errors.As(err, &sub):
		return Finding{Rule: ruleNoCSV.ID, Severity: Error, Message: err.Error(), Hint: sub.Hint()}
	case errors.As(err, &sl):
		return Finding{Rule: ruleLoad.ID, Severity: Error, File: sl.File, Message: err.Error(),
			Hint: "copy the file into the bundle directory; links that leave it are followed only with --follow-symlinks"}
	case errors.As(err, &tl):
		return Finding{Rule: ruleLoad.ID, Severity: Error, File: tl.File, Message: err.Error(),
			Hint: "bundle files are kilobytes; remove the file or split it (the rest of the bundle was checked without it)"}
	case errors.As(err, &se):
		return Finding{Rule: ruleYAMLSyntax.ID, Severity: Error, File: se.File, Line: se.Line, Message: "syntax error: " + se.Msg,
			Hint: "fix the YAML at this line; the rest of the bundle was checked without this file"}
	case errors.Is(err, bundle.ErrMultipleCSVs):
		return Finding{Rule: ruleMultipleCSVs.ID, Severity: Error, File: bundle.ManifestsDir + "/", Message: err.Error(), Hint: ruleMultipleCSVs.Fix}
	case errors.Is(err, bundle.ErrNoCSV):
		return Finding{Rule: ruleNoCSV.ID, Severity: Error, Message: err.Error(), Hint: ruleNoCSV.Fix}
	}
	return Finding{Rule: ruleLoad.ID, Severity: Error, Message: err.Error()}
}
