package catalogdiff

import (
	"fmt"
	"strings"

	"github.com/blang/semver/v4"
)

// Release gates: what `opm diff --fail-on` fails on. A release may add to a
// catalog; what clusters already run or upgrade through must stay.
const (
	// GateRemoved trips when anything of OLD that clusters may have
	// installed or upgrade through is missing from NEW: a package, a
	// channel, a bundle, a channel entry or an upgrade edge.
	GateRemoved = "removed"
	// GateHeadsMovedBack trips when a channel's head in NEW has a lower
	// version than in OLD: clusters on the old head cannot upgrade to it.
	GateHeadsMovedBack = "heads-moved-back"
	// GateAny trips on any difference (as --exit-code).
	GateAny = "any"
)

// Gates lists the gate names --fail-on takes.
var Gates = []string{GateRemoved, GateHeadsMovedBack, GateAny}

// Violation is one thing a gate trips on.
type Violation struct {
	Gate    string `json:"gate"`
	Package string `json:"package"`
	Channel string `json:"channel,omitempty"`
	What    string `json:"what"`
}

// CheckGates returns what the diff trips of gates, in package order, and
// records gates and violations in the result (FailOn, Violations). An
// unknown gate name is an error.
func (r *Result) CheckGates(gates []string) ([]Violation, error) {
	on := map[string]bool{}
	for _, g := range gates {
		known := false
		for _, k := range Gates {
			known = known || g == k
		}
		if !known {
			return nil, fmt.Errorf("unknown gate %q: want one of %s", g, strings.Join(Gates, ", "))
		}
		on[g] = true
	}
	var out []Violation
	add := func(gate, pkg, ch, what string) {
		out = append(out, Violation{Gate: gate, Package: pkg, Channel: ch, What: what})
	}
	if on[GateAny] && !r.Equal {
		add(GateAny, "", "", "the catalogs differ: "+SummaryLine(r))
	}
	for _, p := range r.Packages {
		if on[GateRemoved] {
			removedIn(p, add)
		}
		if on[GateHeadsMovedBack] {
			for _, c := range p.Channels {
				if c.Status != Changed || c.HeadVersion == nil {
					continue
				}
				ov, oerr := semver.Parse(c.HeadVersion.Old)
				nv, nerr := semver.Parse(c.HeadVersion.New)
				if oerr == nil && nerr == nil && nv.LT(ov) {
					add(GateHeadsMovedBack, p.Name, c.Name, fmt.Sprintf("head moved back from %s (%s) to %s (%s)", c.Head.Old, ov, c.Head.New, nv))
				}
			}
		}
	}
	r.FailOn, r.Violations = gates, out
	return out, nil
}

// removedIn reports what of package p's OLD side NEW lacks.
func removedIn(p Package, add func(gate, pkg, ch, what string)) {
	if p.Status == Removed {
		add(GateRemoved, p.Name, "", fmt.Sprintf("package removed, with its %s", plural(len(p.BundlesRemoved), "bundle", "bundles")))
		return
	}
	for _, b := range p.BundlesRemoved {
		add(GateRemoved, p.Name, "", fmt.Sprintf("bundle %s (%s) removed", b.Name, orNone(b.Version)))
	}
	for _, c := range p.Channels {
		switch c.Status {
		case Removed:
			add(GateRemoved, p.Name, c.Name, fmt.Sprintf("channel removed (head was %s)", orNone(c.Head.Old)))
		case Changed:
			for _, e := range c.EntriesRemoved {
				add(GateRemoved, p.Name, c.Name, fmt.Sprintf("entry %s removed from the channel", e))
			}
			for _, e := range c.EdgesRemoved {
				add(GateRemoved, p.Name, c.Name, "upgrade edge lost: "+edge(e))
			}
		}
	}
}
