package validate

import (
	"fmt"
	"sort"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/spelling"
)

// Scope says what a rule needs to run.
type Scope int

const (
	// ScopeCSV rules read only the CSV: they run on a lone CSV file too.
	ScopeCSV Scope = iota
	// ScopeBundle rules need the whole bundle (CRDs, annotations, ...).
	ScopeBundle
	// ScopePackage rules compare the bundles of one package given together.
	ScopePackage
	// ScopeCatalog rules check a file-based catalog; internal/fbc runs them.
	ScopeCatalog
)

func (s Scope) String() string {
	return [...]string{"csv", "bundle", "package", "catalog"}[s]
}

// Rule is one named check.
type Rule struct {
	ID       string
	Severity Severity // the usual severity; a finding may say otherwise
	Scope    Scope
	// NoCSV marks rules that still run when the CSV could not be read.
	NoCSV bool
	// RootCause marks rules whose findings explain others (a file that does
	// not parse hides what it holds, which other rules then miss): reports
	// list them first.
	RootCause bool
	// Set names the opt-in rule set the rule belongs to (SetOLMv1,
	// SetSupplyChain); such rules run only when --select names them or
	// their set. "" is the default set, run unless --select says otherwise.
	Set string
	// AlsoIn names opt-in sets that run this rule too: a default rule that
	// a publishing gate also checks (csv-version is part of operatorhub),
	// so that selecting the gate alone runs it, and selecting both runs it
	// once.
	AlsoIn []string
	// What the rule checks, why it matters and how to fix a finding: the
	// rule catalog in docs/validation.md is written from these.
	What string
	Why  string
	Fix  string

	check func(*Context)
	// checkPackage is set instead of check for ScopePackage rules.
	checkPackage func(*PackageContext)
}

var registry = map[string]*Rule{}

func register(r *Rule) *Rule {
	if _, dup := registry[r.ID]; dup {
		panic("validate: rule registered twice: " + r.ID)
	}
	registry[r.ID] = r
	return r
}

// Rules returns every rule, ordered by id.
func Rules() []*Rule {
	out := make([]*Rule, 0, len(registry))
	for _, r := range registry {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Lookup returns the rule with the given id.
func Lookup(id string) (*Rule, bool) {
	r, ok := registry[id]
	return r, ok
}

// Rule sets. A --select entry may name a set instead of a rule id.
const (
	// SetDefault is the rules that run when nothing is selected.
	SetDefault = "default"
	// SetOLMv1 is what OLM v1's operator-controller refuses or limits.
	SetOLMv1 = "olmv1"
	// SetSupplyChain is pinned pull specs and allowed registries.
	SetSupplyChain = "supply-chain"
	// SetOperatorHub is what operator-sdk's OperatorHub validators
	// (suite=operatorframework, name=operatorhub) check before a bundle
	// is published on OperatorHub.io or in the community catalogs.
	SetOperatorHub = "operatorhub"
	// SetOpenShift is what a bundle shipped in OpenShift's catalogs
	// declares about the OpenShift releases it supports.
	SetOpenShift = "openshift"
	// SetPreflight is preflight's static bundle checks (every Red Hat
	// certified operator submission runs them).
	SetPreflight = "preflight"
	// SetCommunity is the static tests of the community operator
	// pipelines (operator-pipelines) that need no network.
	SetCommunity = "community"
	// SetConforma is Conforma's olm release policy (Konflux), the rules
	// that need no snapshot.
	SetConforma = "conforma"
)

// GateSets are the sets that reproduce a publishing gate: a bundle that
// cannot be read fails each.
var GateSets = []string{SetOperatorHub, SetOpenShift, SetPreflight, SetCommunity, SetConforma}

// Sets lists the rule set names --select takes.
var Sets = []string{SetDefault, SetOLMv1, SetSupplyChain, SetOperatorHub, SetOpenShift, SetPreflight, SetCommunity, SetConforma}

func isSet(s string) bool {
	for _, n := range Sets {
		if n == s {
			return true
		}
	}
	return false
}

// Options tune a validation run.
type Options struct {
	// Select, when not empty, runs only these rule ids and the rules of
	// these sets (Sets); when empty, the default set runs.
	Select []string
	// Skip never runs these rule ids.
	Skip []string
	// FailOn is the least severe finding that fails the run (Error by default).
	FailOn Severity
	// K8sVersion is the Kubernetes version the bundle targets, for the
	// deprecated API rule ("1.25" or "1.25.0"); empty uses minKubeVersion.
	K8sVersion string
	// Concurrency bounds how many bundles are loaded and checked at once;
	// 0 means the number of CPUs.
	Concurrency int
	// AllowedRegistries, when not empty, are the registries (host[:port],
	// or host/path prefixes) that pull specs may name; setting it runs the
	// image-registry-allowed rule even when it is not selected.
	AllowedRegistries []string
	// Categories, when not nil, replaces the standard OperatorHub
	// categories that operatorhub-categories accepts (--categories, or
	// the file OPERATOR_BUNDLE_CATEGORIES names).
	Categories []string
	// OCPVersion is the OpenShift release the bundles target ("4.16"),
	// for the openshift rules; empty uses each bundle's
	// com.redhat.openshift.versions range.
	OCPVersion string
	// CIYAML is a community operator's ci.yaml for the community package
	// rules (--ci-yaml); empty reads operators/<name>/ci.yaml beside the
	// bundle directories.
	CIYAML string
}

// CheckRuleIDs reports unknown ids in Select and Skip, naming the closest.
func (o Options) CheckRuleIDs() error {
	var ids []string
	for id := range registry {
		ids = append(ids, id)
	}
	ids = append(ids, Sets...)
	for _, list := range [][]string{o.Select, o.Skip} {
		for _, id := range list {
			if _, ok := registry[id]; !ok && !isSet(id) {
				msg := fmt.Sprintf("unknown rule %q", id)
				if c := closest(id, ids); c != "" {
					msg += fmt.Sprintf(" (did you mean %q?)", c)
				}
				return fmt.Errorf("%s; `opm bundle validate --list-rules` lists them", msg)
			}
		}
	}
	return nil
}

// EnabledSet says whether any rule of set (SetOLMv1, ...) is enabled.
func (o Options) EnabledSet(set string) bool {
	for _, r := range Rules() {
		if r.Set == set && o.Enabled(r.ID) {
			return true
		}
	}
	return false
}

// Enabled reports whether the rule with this id runs: not skipped (by id
// or set), and selected by id or set, or in the default set when nothing
// is selected.

func (o Options) Enabled(id string) bool {
	set := SetDefault
	if r, ok := registry[id]; ok && r.Set != "" {
		set = r.Set
	}
	for _, s := range o.Skip {
		if s == id || s == set {
			return false
		}
	}
	// A flag that gives these rules something to check against runs them.
	if (id == ruleRegistryAllowed.ID || id == RuleCatalogRegistryAllowed.ID) && len(o.AllowedRegistries) > 0 {
		return true
	}
	if id == RuleCatalogCSVMetadata.ID && o.OCPVersion != "" {
		return true
	}
	var also []string
	if r, ok := registry[id]; ok {
		also = r.AlsoIn
	}
	if len(o.Select) == 0 {
		return set == SetDefault
	}
	for _, s := range o.Select {
		if s == id || s == set || contains(also, s) {
			return true
		}
	}
	return false
}

func (o Options) enabled(id string) bool { return o.Enabled(id) }

// Context is what a rule sees of one bundle, and where it reports.
type Context struct {
	// Path is what the user gave for the bundle ("" for a lone CSV or a
	// bundle read from an image).
	Path   string
	Bundle *bundle.Bundle
	CSV    *bundle.CSV // never nil inside a CSV or bundle rule
	Opts   Options

	rule     *Rule
	findings []Finding
}

// Report records a finding of the running rule's severity against obj's file.
// field is a path such as spec.installModes[1].type; hint says how to fix it.
func (c *Context) Report(obj *bundle.Object, field, msg, hint string) {
	c.ReportAs(c.rule.Severity, obj, field, msg, hint)
}

// ReportAs is Report with another severity.
func (c *Context) ReportAs(sev Severity, obj *bundle.Object, field, msg, hint string) {
	f := Finding{Rule: c.rule.ID, Severity: sev, Field: field, Message: msg, Hint: hint}
	if obj != nil {
		f.File = obj.File
		f.Line = obj.Line(field)
	}
	c.findings = append(c.findings, f)
}

// ReportFile records a finding against a file that is not an object
// (annotations.yaml, a file that did not parse, ...).
func (c *Context) ReportFile(file string, line int, field, msg, hint string) {
	c.ReportFileAs(c.rule.Severity, file, line, field, msg, hint)
}

// ReportFileAs is ReportFile with another severity.
func (c *Context) ReportFileAs(sev Severity, file string, line int, field, msg, hint string) {
	c.findings = append(c.findings, Finding{Rule: c.rule.ID, Severity: sev, File: file, Line: line, Field: field, Message: msg, Hint: hint})
}

// csvObj is the CSV's object, for Report.
func (c *Context) csvObj() *bundle.Object { return c.CSV.Object }

// kubeTarget is the Kubernetes version findings are judged against: the
// --k8s-version option, else the CSV's minKubeVersion, else none.
func (c *Context) kubeTarget() (semver.Version, bool) {
	for _, s := range []string{c.Opts.K8sVersion, c.CSV.Spec.MinKubeVersion} {
		if s == "" {
			continue
		}
		if v, err := semver.ParseTolerant(strings.TrimPrefix(s, "v")); err == nil {
			return v, true
		}
	}
	return semver.Version{}, false
}

// closest returns the candidate nearest to s by edit distance (ignoring
// case), or "" when none is near enough to be a likely typo.
func closest(s string, candidates []string) string {
	best, bestD := "", -1
	for _, c := range candidates {
		d := spelling.Distance(strings.ToLower(s), strings.ToLower(c))
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	limit := len(s)/2 + 1
	if limit < 3 {
		limit = 3
	}
	if bestD < 0 || bestD > limit {
		return ""
	}
	return best
}
