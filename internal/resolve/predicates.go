package resolve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/internal/fbc"
)

// predicate is a requirement a bundle states on another: OLM tests every
// entry of every catalog against it.
type predicate interface {
	test(e *entry) bool
	// words describe what the predicate asks for, for reasons.
	words() string
	// packages narrows the entries worth testing: the packages that can
	// match, or all=true when any package can.
	packages(s *catalogIndex) (names []string, all bool)
}

// packagePred is olm.package.required, or an olm.constraint's package.
type packagePred struct {
	name string
	rng  semver.Range
	text string
}

func (p packagePred) test(e *entry) bool {
	if !entryInPackage(e, p.name) {
		return false
	}
	// OLM tries each olm.package version that parses strictly, then the
	// entry's version read tolerantly.
	for _, v := range e.strict {
		if p.rng(v) {
			return true
		}
	}
	return e.version != nil && p.rng(*e.version)
}

func (p packagePred) words() string { return p.name + " " + p.text }

func (p packagePred) packages(*catalogIndex) ([]string, bool) { return []string{p.name}, false }

// entryInPackage is OLM's package test: any olm.package property naming
// the package, or the entry's own package.
func entryInPackage(e *entry, name string) bool {
	if e.pkg == name {
		return true
	}
	for _, p := range e.packages {
		if p == name {
			return true
		}
	}
	return false
}

// gvkPred is olm.gvk.required, or an olm.constraint's gvk: an entry that
// provides the API.
type gvkPred struct{ gvk GVK }

func (p gvkPred) test(e *entry) bool {
	for _, g := range e.provides {
		if g == p.gvk {
			return true
		}
	}
	return false
}

func (p gvkPred) words() string {
	return fmt.Sprintf("an operator providing %s (%s/%s)", p.gvk.Kind, p.gvk.Group, p.gvk.Version)
}

func (p gvkPred) packages(s *catalogIndex) ([]string, bool) {
	seen := map[string]bool{}
	var out []string
	for _, e := range s.byGVK[p.gvk] {
		if !seen[e.pkg] {
			seen[e.pkg] = true
			out = append(out, e.pkg)
		}
	}
	return out, false
}

// labelPred is olm.label.required: an entry with the olm.label.
type labelPred struct{ label string }

func (p labelPred) test(e *entry) bool {
	for i := range e.props {
		if e.props[i].typ != fbc.PropertyLabel {
			continue
		}
		var v fbc.LabelValue
		if json.Unmarshal(e.props[i].raw, &v) == nil && v.Label == p.label {
			return true
		}
	}
	return false
}

func (p labelPred) words() string { return fmt.Sprintf("an operator labelled %q", p.label) }

func (p labelPred) packages(*catalogIndex) ([]string, bool) { return nil, true }

// compoundPred is an olm.constraint's all, any or not.
type compoundPred struct {
	op    string // "all", "any", "not"
	parts []predicate
	fail  string
}

func (p compoundPred) test(e *entry) bool {
	switch p.op {
	case "all":
		for _, q := range p.parts {
			if !q.test(e) {
				return false
			}
		}
		return true
	case "any":
		for _, q := range p.parts {
			if q.test(e) {
				return true
			}
		}
		return false
	default: // not: none of the parts
		for _, q := range p.parts {
			if q.test(e) {
				return false
			}
		}
		return true
	}
}

func (p compoundPred) words() string {
	if p.fail != "" {
		return fmt.Sprintf("%q", p.fail)
	}
	w := make([]string, len(p.parts))
	for i, q := range p.parts {
		w[i] = q.words()
	}
	switch p.op {
	case "all":
		return "(" + strings.Join(w, " and ") + ")"
	case "any":
		return "(" + strings.Join(w, " or ") + ")"
	}
	return "(none of " + strings.Join(w, ", ") + ")"
}

func (p compoundPred) packages(s *catalogIndex) ([]string, bool) {
	switch p.op {
	case "all":
		for _, q := range p.parts {
			if names, all := q.packages(s); !all {
				return names, false
			}
		}
		return nil, true
	case "any":
		var out []string
		for _, q := range p.parts {
			names, all := q.packages(s)
			if all {
				return nil, true
			}
			out = append(out, names...)
		}
		return out, false
	}
	return nil, true
}

// celPred is an olm.constraint's cel rule over the entry's properties.
type celPred struct {
	prog *celProgram
	rule string
	fail string
	// hint is a packageName every match carries on a property, if the
	// rule says so (see packageHint).
	hint string
}

func (p celPred) test(e *entry) bool { return p.prog.matches(e.celProperties()) }

func (p celPred) words() string {
	if p.fail != "" {
		return fmt.Sprintf("%q (cel: %s)", p.fail, p.rule)
	}
	return "an operator matching cel rule " + p.rule
}

func (p celPred) packages(*catalogIndex) ([]string, bool) { return nil, true }

// requirements lists the requirements OLM reads from an entry's
// properties, in property order: olm.gvk.required, olm.package.required,
// olm.label.required and olm.constraint; other types are ignored. An error
// is what OLM fails the whole resolution with. The caller holds the
// entry's index lock.
func requirements(e *entry) ([]requirement, error) {
	if e.reqsDone {
		return e.reqs, e.reqsErr
	}
	e.reqsDone = true
	for i := range e.props {
		typ, raw := e.props[i].typ, e.props[i].raw
		switch typ {
		case fbc.PropertyGVKRequired, fbc.PropertyPackageRequired, fbc.PropertyLabelRequired, fbc.PropertyConstraint:
		default:
			continue
		}
		key := typ + "\x00" + string(raw)
		r, ok := e.idx.preds[key]
		if !ok {
			r.pred, r.err = predicateFor(typ, raw)
			e.idx.preds[key] = r
		}
		if r.err != nil {
			e.reqs, e.reqsErr = nil, fmt.Errorf("bundle %s: %s property %s: %w", e.name, typ, raw, r.err)
			return nil, e.reqsErr
		}
		e.reqs = append(e.reqs, requirement{pred: r.pred, key: key})
	}
	return e.reqs, nil
}

func predicateFor(typ string, raw json.RawMessage) (predicate, error) {
	switch typ {
	case fbc.PropertyGVKRequired:
		var v fbc.GVKValue
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, err
		}
		return gvkPred{GVK{Group: v.Group, Version: v.Version, Kind: v.Kind}}, nil
	case fbc.PropertyPackageRequired:
		var v fbc.PackageRequiredValue
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, err
		}
		return newPackagePred(v.PackageName, v.VersionRange)
	case fbc.PropertyLabelRequired:
		var v fbc.LabelValue
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, err
		}
		return labelPred{v.Label}, nil
	case fbc.PropertyConstraint:
		c, err := parseConstraint(raw)
		if err != nil {
			return nil, err
		}
		return constraintPredicate(c)
	}
	return nil, nil
}

func newPackagePred(name, rng string) (predicate, error) {
	r, err := semver.ParseRange(rng)
	if err != nil {
		return nil, fmt.Errorf("versionRange %q of package %q: %w", rng, name, err)
	}
	return packagePred{name: name, rng: r, text: rng}, nil
}

// constraint is an olm.constraint value: exactly one of its kinds is set.
type constraint struct {
	FailureMessage string           `json:"failureMessage,omitempty"`
	Cel            *celRule         `json:"cel,omitempty"`
	Package        *packageRequired `json:"package,omitempty"`
	GVK            *GVK             `json:"gvk,omitempty"`
	All            *compound        `json:"all,omitempty"`
	Any            *compound        `json:"any,omitempty"`
	Not            *compound        `json:"not,omitempty"`
}

type celRule struct {
	Rule string `json:"rule"`
}

type packageRequired struct {
	PackageName  string `json:"packageName"`
	VersionRange string `json:"versionRange"`
}

type compound struct {
	Constraints []constraint `json:"constraints"`
}

// maxConstraintBytes bounds an olm.constraint value, as OLM does.
const maxConstraintBytes = 2 << 16

// parseConstraint decodes an olm.constraint value strictly: unknown
// fields are an error, as in OLM.
func parseConstraint(raw json.RawMessage) (constraint, error) {
	var c constraint
	if len(raw) > maxConstraintBytes {
		return c, fmt.Errorf("olm.constraint value is %d bytes, more than the %d OLM accepts", len(raw), maxConstraintBytes)
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(&c); err != nil {
		return c, fmt.Errorf("parse olm.constraint: %w", err)
	}
	return c, nil
}

var errEmptyConstraint = errors.New("olm.constraint sets none of cel, package, gvk, all, any, not")

func constraintPredicate(c constraint) (predicate, error) {
	switch {
	case c.GVK != nil:
		return gvkPred{*c.GVK}, nil
	case c.Package != nil:
		return newPackagePred(c.Package.PackageName, c.Package.VersionRange)
	case c.All != nil, c.Any != nil, c.Not != nil:
		op, cc := "all", c.All
		if c.All == nil && c.Any != nil {
			op, cc = "any", c.Any
		} else if c.All == nil {
			op, cc = "not", c.Not
		}
		parts := make([]predicate, 0, len(cc.Constraints))
		for _, sub := range cc.Constraints {
			p, err := constraintPredicate(sub)
			if err != nil {
				return nil, err
			}
			parts = append(parts, p)
		}
		return compoundPred{op: op, parts: parts, fail: c.FailureMessage}, nil
	case c.Cel != nil:
		prog, err := compileCEL(c.Cel.Rule)
		if err != nil {
			return nil, fmt.Errorf("cel rule %q: %w", c.Cel.Rule, err)
		}
		return celPred{prog: prog, rule: c.Cel.Rule, fail: c.FailureMessage, hint: prog.packageHint()}, nil
	}
	return nil, errEmptyConstraint
}
