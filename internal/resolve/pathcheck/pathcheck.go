// Package pathcheck asks OLM v0's resolver about each step of an upgrade
// path (internal/fbc/graph): whether OLM takes it once dependencies are
// counted, what it brings in, and why not when it does not.
package pathcheck

import (
	"context"
	"fmt"
	"strings"

	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbc/graph"
	"github.com/opmkit/opm/internal/printable"
	"github.com/opmkit/opm/internal/resolve"
)

// Step is what the resolver does at one step of the path, with From
// installed and subscribed to on the step's channel.
type Step struct {
	From string `json:"from"`
	To   string `json:"to"`
	// Installs is the bundle OLM moves to from From: To when it takes the
	// step; nil when it does nothing.
	Installs *string `json:"installs"`
	// Refused is set when OLM does not install To from From.
	Refused bool `json:"refused"`
	// Dependencies are the operators the step brings in.
	Dependencies []Dependency `json:"dependencies"`
	Reasons      []string     `json:"reasons"`
	// NotAsked says why the resolver was not asked: a start that is a
	// version no bundle of the catalog has (the resolver reads the
	// installed bundle's properties from the catalog).
	NotAsked string `json:"notAsked,omitempty"`
}

// Dependency is an operator a step brings in.
type Dependency struct {
	Package string `json:"package"`
	Bundle  string `json:"bundle"`
	Catalog string `json:"catalog"`
}

// Check is the resolver's view of every step of a path.
type Check struct {
	// Catalogs are the names of the catalogs asked, the path's first.
	Catalogs []string `json:"catalogs"`
	Steps    []Step   `json:"steps"`
	// Refused is the number of steps OLM does not take.
	Refused int `json:"refused"`
}

// Path asks the resolver about each step of path (of package pkg, whose
// channel, when a step names none, is channel), against catalogs: the
// first is the one the path was read from, which the Subscription names.
func Path(ctx context.Context, catalogs []resolve.Catalog, pkg, channel string, path *graph.Path) (*Check, error) {
	if len(catalogs) == 0 {
		return nil, fmt.Errorf("no catalog to resolve against")
	}
	c := &Check{Steps: []Step{}}
	for _, cat := range catalogs {
		c.Catalogs = append(c.Catalogs, cat.Name)
	}
	// The dependencies earlier steps brought in are installed, each
	// with the Subscription OLM made for it.
	var carried []Dependency
	names := map[string]bool{}
	for _, b := range catalogs[0].Catalog.Bundles {
		names[b.Name] = true
	}
	for _, st := range path.Steps {
		if !names[st.From] {
			c.Steps = append(c.Steps, Step{From: st.From, To: st.To, Dependencies: []Dependency{}, Reasons: []string{},
				NotAsked: fmt.Sprintf("%s is not a bundle of catalog %s: the resolver needs the installed bundle's properties", st.From, catalogs[0].Name)})
			continue
		}
		ch := st.Channel
		if ch == "" {
			ch = channel
		}
		q := resolve.Question{
			Catalogs:      catalogs,
			Subscriptions: []resolve.Subscription{{Package: pkg, Channel: ch, Catalog: catalogs[0].Name, CatalogNamespace: catalogs[0].Namespace, InstalledCSV: st.From}},
			Installed:     []resolve.Installed{{Package: pkg, CSV: st.From}},
		}
		for _, d := range carried {
			q.Subscriptions = append(q.Subscriptions, resolve.Subscription{Package: d.Package, Catalog: d.Catalog, InstalledCSV: d.Bundle})
			q.Installed = append(q.Installed, resolve.Installed{Package: d.Package, CSV: d.Bundle})
		}
		a, err := resolve.Resolve(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("resolve step %s -> %s: %w", st.From, st.To, err)
		}
		s := Step{From: st.From, To: st.To, Dependencies: []Dependency{}, Reasons: []string{}}
		for _, op := range a.Operators {
			switch {
			case op.Package == pkg && !op.Dependency:
				s.Installs = op.Bundle
				s.Reasons = append(s.Reasons, op.Reasons...)
			case op.Bundle != nil && op.Dependency:
				s.Dependencies = append(s.Dependencies, Dependency{Package: op.Package, Bundle: *op.Bundle, Catalog: op.Catalog})
			case a.Unsatisfiable:
				// What blocks the namespace may be said of another
				// operator.
				s.Reasons = append(s.Reasons, op.Reasons...)
			}
		}
		if a.Unsatisfiable {
			s.Installs = nil
		}
		s.Refused = s.Installs == nil || *s.Installs != st.To
		if s.Refused {
			c.Refused++
		} else {
			carried = append(carried, s.Dependencies...)
		}
		c.Steps = append(c.Steps, s)
	}
	return c, nil
}

// requirementTypes are the bundle properties that make OLM v0 look for
// another operator.
var requirementTypes = map[string]bool{
	"olm.package.required": true, "olm.gvk.required": true, "olm.constraint": true, "olm.label.required": true,
}

// DeclaresDependencies is whether a bundle of pkg in c requires another
// operator (a package, an API, a constraint or a label).
func DeclaresDependencies(c *fbc.Catalog, pkg string) bool {
	for _, b := range c.Bundles {
		if b.Package != pkg {
			continue
		}
		for _, p := range b.Properties {
			if requirementTypes[p.Type] {
				return true
			}
		}
	}
	return false
}

// Text is the check for people: a heading naming the catalogs, then a
// line per step (taken, with what it brings in; or refused, with what OLM
// does instead) and the reasons of a refused step, indented.
func (c *Check) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "OLM v0's resolver, dependencies included (%s %s):\n", plural(len(c.Catalogs), "catalog", "catalogs"), printable.Name(strings.Join(c.Catalogs, ", ")))
	for i, s := range c.Steps {
		fmt.Fprintf(&b, "%2d. %s -> %s: ", i+1, printable.Name(s.From), printable.Name(s.To))
		switch {
		case s.NotAsked != "":
			b.WriteString("not asked: " + printable.Text(s.NotAsked))
		case !s.Refused:
			b.WriteString("taken")
		case s.Installs == nil:
			fmt.Fprintf(&b, "refused: OLM installs nothing from %s", printable.Name(s.From))
		default:
			fmt.Fprintf(&b, "refused: OLM installs %s instead", printable.Name(*s.Installs))
		}
		if len(s.Dependencies) > 0 && (!s.Refused || s.Installs != nil) {
			var deps []string
			for _, d := range s.Dependencies {
				deps = append(deps, fmt.Sprintf("%s (catalog %s)", printable.Name(d.Bundle), printable.Name(d.Catalog)))
			}
			fmt.Fprintf(&b, ", bringing in %s", strings.Join(deps, ", "))
		}
		b.WriteString("\n")
		if s.Refused {
			for _, r := range s.Reasons {
				fmt.Fprintf(&b, "      %s\n", printable.Text(r))
			}
		}
	}
	if c.Refused > 0 {
		fmt.Fprintf(&b, "OLM refuses %s of the path.\n", printable.Count(c.Refused, "step", "steps"))
	}
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
