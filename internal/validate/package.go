package validate

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/opmkit/opm/internal/bundle"
)

// Member is what the package rules keep of one bundle once its own checks
// are done: the few fields they compare, and where those fields are, so that
// a finding can still name file and line. The parsed bundle is released as
// soon as its Member is made, which is what keeps a validation run's memory
// bounded by the bundles being loaded rather than by the whole catalog.
type Member struct {
	// Path is what the user gave for the bundle (BundleReport.Path).
	Path string
	// Name, Version and Release are the CSV's metadata.name, spec.version
	// and spec.release.
	Name, Version, Release string
	// Channels and DefaultChannel come from the annotations (nil and "" when
	// the bundle has none).
	Channels       []string
	DefaultChannel string
	// CRDs are the names of the CRDs the bundle ships.
	CRDs []string
	// CSVFile is the CSV's file, relative to the bundle.
	CSVFile string
	// Replaces, Skips and SkipRange are the CSV's upgrade edges.
	Replaces  string
	Skips     []string
	SkipRange string

	index int            // the input's index, for ordering
	lines map[string]int // line of each of memberFields in CSVFile
}

// memberFields are the CSV fields package rules report on; Member keeps
// their lines. A package rule citing another field must add it here.
var memberFields = []string{"metadata.name", "spec.version", "spec.release", "spec.replaces", "spec.skips", `metadata.annotations["olm.skipRange"]`}

// newMember summarizes b, whose CSV is known, for the package rules.
func newMember(index int, path string, b *bundle.Bundle) *Member {
	m := &Member{
		Path: path, Name: b.CSV.Metadata.Name, Version: b.CSV.Spec.Version, Release: b.CSV.Spec.Release,
		Replaces: b.CSV.Spec.Replaces, Skips: b.CSV.Spec.Skips, SkipRange: b.CSV.Metadata.Annotations[bundle.AnnotationSkipRange],
		index: index, lines: map[string]int{},
	}
	if b.Annotations != nil {
		m.Channels, m.DefaultChannel = b.Annotations.Channels(), b.Annotations.DefaultChannel()
	}
	for _, c := range b.CRDs {
		m.CRDs = append(m.CRDs, c.Name)
	}
	if obj := b.CSV.Object; obj != nil {
		m.CSVFile = obj.File
		for _, f := range memberFields {
			if l := obj.Line(f); l > 0 {
				m.lines[f] = l
			}
		}
	}
	return m
}

// PackageContext is what a package rule sees: the bundles of one package
// given in the same run, in the order they were given, and where to report.
type PackageContext struct {
	Package string
	Members []*Member
	Opts    Options
	// CI is the operator's ci.yaml, read when a community rule runs.
	CI *CIConfig

	rule    *Rule
	reports map[*Member]*BundleReport
}

// Report records a finding against m's CSV, at field (one of memberFields).
func (c *PackageContext) Report(m *Member, field, msg, hint string) {
	f := Finding{Rule: c.rule.ID, Severity: c.rule.Severity, Field: field, Message: msg, Hint: hint}
	if m.CSVFile != "" {
		f.File, f.Line = m.CSVFile, m.lines[field]
	}
	rep := c.reports[m]
	rep.Findings = append(rep.Findings, f)
}

// ReportCI records a finding about the operator's ci.yaml, once, in the
// report of the package's first member.
func (c *PackageContext) ReportCI(msg, hint string) {
	m := c.Members[0]
	for _, o := range c.Members {
		if o.index < m.index {
			m = o
		}
	}
	f := Finding{Rule: c.rule.ID, Severity: c.rule.Severity, File: c.CI.File, Message: msg, Hint: hint}
	if rel, err := filepath.Rel(m.Path, c.CI.File); err == nil {
		f.File = filepath.ToSlash(rel)
	}
	rep := c.reports[m]
	rep.Findings = append(rep.Findings, f)
}

// checkPackage runs the package rules over the members of one package, when
// there is more than one, adding their findings to reports.
func checkPackage(pkg string, members []*Member, reports map[*Member]*BundleReport, opts Options) {
	if len(members) < 2 {
		return
	}
	var ci *CIConfig
	if opts.EnabledSet(SetCommunity) {
		ci = ciConfigFor(opts.CIYAML, members)
	}
	for _, r := range Rules() {
		if r.checkPackage == nil || !opts.enabled(r.ID) {
			continue
		}
		r.checkPackage(&PackageContext{Package: pkg, Members: members, Opts: opts, CI: ci, rule: r, reports: reports})
	}
}

func init() {
	register(&Rule{ID: "package-duplicate-csv", Severity: Error, Scope: ScopePackage,
		What: "Bundles of one package validated together have distinct CSV names and distinct versions.",
		Why:  "An index keys bundles by CSV name and version: a second bundle with the same name or version is refused (upstream silently kept the first one).",
		Fix:  "Give each bundle its own version and CSV name (<operator>.v<version>).",
		checkPackage: func(c *PackageContext) {
			byName := map[string][]*Member{}
			byVersion := map[string][]*Member{}
			for _, m := range c.Members {
				byName[m.Name] = append(byName[m.Name], m)
				key := m.Version + "-" + m.Release
				byVersion[key] = append(byVersion[key], m)
			}
			for _, m := range c.Members {
				others := func(list []*Member) string {
					var paths []string
					for _, o := range list {
						if o != m {
							paths = append(paths, o.Path)
						}
					}
					return strings.Join(paths, ", ")
				}
				if same := byName[m.Name]; len(same) > 1 {
					c.Report(m, "metadata.name", fmt.Sprintf("CSV name %q is also used by %s in package %s", m.Name, others(same), c.Package),
						"give each bundle its own CSV name, matching its version")
				} else if same := byVersion[m.Version+"-"+m.Release]; len(same) > 1 && m.Version != "" {
					c.Report(m, "spec.version", fmt.Sprintf("version %s is also used by %s in package %s", m.Version, others(same), c.Package),
						"give each bundle its own version")
				}
			}
		}})
}
