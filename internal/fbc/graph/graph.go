// Package graph reads the upgrade graph out of a file-based catalog: bundle
// versions, channel heads, deprecations, what a channel's head can be reached
// from. The alpha list and render-graph commands and catalog diffs read
// catalogs through it, whatever the catalog was opened from (a sqlite index,
// an FBC directory, an image of either).
package graph

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/internal/fbc"
)

// Deprecation is one entry of an olm.deprecations blob: what is deprecated
// (Schema olm.package, olm.channel or olm.bundle, and Name for the latter
// two) and the message OLM shows.
type Deprecation struct {
	Schema  string `json:"schema"`
	Name    string `json:"name,omitempty"`
	Message string `json:"message"`
}

// deprecationsBlob is the olm.deprecations schema.
type deprecationsBlob struct {
	Package string `json:"package"`
	Entries []struct {
		Reference struct {
			Schema string `json:"schema"`
			Name   string `json:"name"`
		} `json:"reference"`
		Message string `json:"message"`
	} `json:"entries"`
}

// Deprecations reads the olm.deprecations blobs of c, by package. A blob
// that does not decode is an error naming its file and line.
func Deprecations(c *fbc.Catalog) (map[string][]Deprecation, error) {
	out := map[string][]Deprecation{}
	for _, m := range c.Others {
		if m.Schema != fbc.SchemaDeprecations {
			continue
		}
		var d deprecationsBlob
		if err := json.Unmarshal(m.Blob, &d); err != nil {
			return nil, fmt.Errorf("%s: olm.deprecations blob of package %q: %w", where(m.Pos), m.Package, err)
		}
		for _, e := range d.Entries {
			out[d.Package] = append(out[d.Package], Deprecation{Schema: e.Reference.Schema, Name: e.Reference.Name, Message: e.Message})
		}
	}
	return out, nil
}

func where(p fbc.Position) string {
	if p.File == "" {
		return "catalog"
	}
	return fmt.Sprintf("%s:%d", p.File, p.Line)
}

// Version is a bundle's version from its olm.package property.
func Version(b *fbc.Bundle) (semver.Version, error) {
	n := 0
	var v fbc.PackageValue
	for _, p := range b.Properties {
		if p.Type != fbc.PropertyPackage {
			continue
		}
		n++
		if err := json.Unmarshal(p.Value, &v); err != nil {
			return semver.Version{}, fmt.Errorf("bundle %q: olm.package property %s: %w", b.Name, p.Value, err)
		}
	}
	if n != 1 {
		return semver.Version{}, fmt.Errorf("bundle %q has %d olm.package properties; it needs exactly one (with its version)", b.Name, n)
	}
	sv, err := semver.Parse(v.Version)
	if err != nil {
		return semver.Version{}, fmt.Errorf("bundle %q has version %q, which is not semver: %w", b.Name, v.Version, err)
	}
	return sv, nil
}

// Versions maps every bundle of c to its version. The first bundle of a
// name wins, as upstream's graph writer read them.
func Versions(c *fbc.Catalog) (map[string]semver.Version, error) {
	out := make(map[string]semver.Version, len(c.Bundles))
	for i := range c.Bundles {
		b := &c.Bundles[i]
		if _, ok := out[b.Name]; ok {
			continue
		}
		v, err := Version(b)
		if err != nil {
			return nil, err
		}
		out[b.Name] = v
	}
	return out, nil
}

// Heads lists the entries of ch that no other entry replaces or skips, in
// entry order: one in a sound channel.
func Heads(ch *fbc.Channel) []string {
	incoming := map[string]bool{}
	for _, e := range ch.Entries {
		if e.Replaces != "" {
			incoming[e.Replaces] = true
		}
		for _, s := range e.Skips {
			incoming[s] = true
		}
	}
	var heads []string
	seen := map[string]bool{}
	for _, e := range ch.Entries {
		if !incoming[e.Name] && !seen[e.Name] {
			seen[e.Name] = true
			heads = append(heads, e.Name)
		}
	}
	return heads
}

// Head is the one entry of ch that no other entry replaces or skips. A
// channel with none (a cycle) or several heads is an error naming them.
func Head(ch *fbc.Channel) (string, error) {
	heads := Heads(ch)
	switch len(heads) {
	case 0:
		return "", fmt.Errorf("no channel head found in graph")
	case 1:
		return heads[0], nil
	}
	sort.Strings(heads)
	return "", fmt.Errorf("multiple channel heads found in graph: %s", strings.Join(heads, ", "))
}

// Reachable lists the entries of ch from which an upgrade path leads to
// head: head itself, and every bundle a reachable entry replaces, skips or
// covers by skipRange (versions gives the skipRange its bundles). Bundles of
// the channel outside the set are stranded: OLM never upgrades out of them.
func Reachable(ch *fbc.Channel, head string, versions map[string]semver.Version) map[string]bool {
	return ReachableFrom(ch, []string{head}, versions)
}

// ReachableFrom is Reachable from several heads (a channel that has more
// than one): the entries from which an upgrade path leads to any of them.
func ReachableFrom(ch *fbc.Channel, heads []string, versions map[string]semver.Version) map[string]bool {
	return walkBack(heads, []*ChannelGraph{newChannelGraph(ch, versions)})
}

// walkBack is the set of bundles from which a chain of edges of chans
// leads to one of starts (starts included): from each bundle reached, what
// its entries replace, skip or cover by skipRange. A skipRange's runs are
// walked over the bundles not reached yet only, so each bundle is visited
// once however many ranges cover it.
func walkBack(starts []string, chans []*ChannelGraph) map[string]bool {
	out := map[string]bool{}
	free := make([]*unvisited, len(chans))
	for k, g := range chans {
		free[k] = newUnvisited(len(g.ord.names))
	}
	var stack []string
	visit := func(n string) {
		if n == "" || out[n] {
			return
		}
		out[n] = true
		for k, g := range chans {
			if p, ok := g.ord.pos[n]; ok {
				free[k].take(p)
			}
		}
		stack = append(stack, n)
	}
	for _, s := range starts {
		visit(s)
	}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for k, g := range chans {
			i, ok := g.byName[n]
			if !ok {
				continue
			}
			e := g.Entries[i]
			visit(e.Replaces)
			for _, s := range e.Skips {
				visit(s)
			}
			for _, s := range g.covers[i] {
				for q := free[k].find(s.lo); q < s.hi; q = free[k].find(q + 1) {
					visit(g.ord.names[q])
				}
			}
		}
	}
	return out
}

// CSVDisplayName is spec.displayName of the CSV among b's olm.bundle.object
// properties ("" when there is none): what upstream's list shows.
func CSVDisplayName(b *fbc.Bundle) string {
	for _, p := range b.Properties {
		if p.Type != fbc.PropertyBundleObject {
			continue
		}
		var v fbc.BundleObjectValue
		if err := json.Unmarshal(p.Value, &v); err != nil || len(v.Data) == 0 {
			continue
		}
		var obj struct {
			Kind string `json:"kind"`
			Spec struct {
				DisplayName string `json:"displayName"`
			} `json:"spec"`
		}
		if err := json.Unmarshal(v.Data, &obj); err == nil && obj.Kind == "ClusterServiceVersion" {
			return obj.Spec.DisplayName
		}
	}
	return ""
}
