package graph

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/internal/fbc"
)

// Document is a catalog's upgrade graph as data: what `alpha render-graph
// -o json` prints and `-o dot` draws.
type Document struct {
	Packages []DocPackage `json:"packages"`
}

// DocPackage is one package of a Document.
type DocPackage struct {
	Name           string       `json:"name"`
	DefaultChannel string       `json:"defaultChannel"`
	Deprecated     bool         `json:"deprecated"`
	Channels       []DocChannel `json:"channels"`
}

// DocChannel is one channel: its heads, its bundles (highest version
// first) and its edges. A skipRange gives one edge from every other
// bundle of the channel whose version it covers.
type DocChannel struct {
	Name       string      `json:"name"`
	Deprecated bool        `json:"deprecated"`
	Heads      []string    `json:"heads"`
	Bundles    []DocBundle `json:"bundles"`
	Edges      []DocEdge   `json:"edges"`
}

// DocBundle is a bundle of a channel. Skipped: an entry of the channel
// skips it (OLM v0 never installs it from there).
type DocBundle struct {
	Name       string `json:"name"`
	Version    string `json:"version"`
	Deprecated bool   `json:"deprecated"`
	Skipped    bool   `json:"skipped"`
}

// DocEdge is an upgrade edge: OLM may go from From to To.
type DocEdge struct {
	From      string `json:"from"`
	To        string `json:"to"`
	Kind      string `json:"kind"`
	SkipRange string `json:"skipRange,omitempty"`
}

// GraphOptions choose what a Document holds.
type GraphOptions struct {
	// Package keeps only this package.
	Package string
	// Channel keeps only channels of this name.
	Channel string
	// MinimumEdge is a bundle name: edges from bundles below its version
	// are left out, as render-graph's mermaid does.
	MinimumEdge string
	// MaximumEdge is a bundle name: bundles above its version, and their
	// edges, are left out.
	MaximumEdge string
}

// NewDocument reads the upgrade graphs of c into a Document: packages by
// name, channels by name. The warnings name skipRanges that do not parse.
func NewDocument(c *fbc.Catalog, opts GraphOptions) (*Document, []string, error) {
	versions, err := Versions(c)
	if err != nil {
		return nil, nil, err
	}
	mopts := MermaidOptions{Package: opts.Package, MinimumEdge: opts.MinimumEdge}
	floor, floorPkg, err := minimumEdge(c, versions, opts.MinimumEdge)
	if err != nil {
		return nil, nil, err
	}
	ceil, err := newCeiling(c, versions, opts.MaximumEdge)
	if err != nil {
		return nil, nil, err
	}
	deps, err := Deprecations(c)
	if err != nil {
		return nil, nil, err
	}
	defaults := map[string]string{}
	for _, p := range c.Packages {
		if _, ok := defaults[p.Name]; !ok {
			defaults[p.Name] = p.DefaultChannel
		}
	}
	byPkg := map[string]*DocPackage{}
	var warnings []string
	for i := range c.Channels {
		ch := &c.Channels[i]
		if opts.Channel != "" && ch.Name != opts.Channel {
			continue
		}
		entries := ceil.apply(ch.Package, filterChannel(ch, versions, mopts, floor, floorPkg), versions)
		if entries == nil {
			continue
		}
		dp := byPkg[ch.Package]
		if dp == nil {
			dp = &DocPackage{Name: ch.Package, DefaultChannel: defaults[ch.Package]}
			byPkg[ch.Package] = dp
		}
		depCh, depBundle := map[string]bool{}, map[string]bool{}
		for _, d := range deps[ch.Package] {
			switch d.Schema {
			case fbc.SchemaPackage:
				dp.Deprecated = true
			case fbc.SchemaChannel:
				depCh[d.Name] = true
			case fbc.SchemaBundle:
				depBundle[d.Name] = true
			}
		}
		dc, warns := NewDocChannel(&fbc.Channel{Name: ch.Name, Package: ch.Package, Entries: entries}, versions, depBundle)
		dc.Deprecated = depCh[ch.Name]
		warnings = append(warnings, warns...)
		dp.Channels = append(dp.Channels, dc)
	}
	doc := &Document{}
	for _, dp := range byPkg {
		sort.SliceStable(dp.Channels, func(i, j int) bool { return dp.Channels[i].Name < dp.Channels[j].Name })
		doc.Packages = append(doc.Packages, *dp)
	}
	sort.Slice(doc.Packages, func(i, j int) bool { return doc.Packages[i].Name < doc.Packages[j].Name })
	return doc, warnings, nil
}

// NewDocChannel reads one channel as a Document holds it; deprecated names
// the deprecated bundles. The warnings name skipRanges that do not parse.
func NewDocChannel(ch *fbc.Channel, versions map[string]semver.Version, deprecated map[string]bool) (DocChannel, []string) {
	g := newChannelGraph(ch, versions)
	dc := DocChannel{Name: ch.Name, Heads: g.Heads()}
	for _, e := range g.Entries {
		b := DocBundle{Name: e.Name, Deprecated: deprecated[e.Name], Skipped: g.Skipped(e.Name)}
		if v, ok := versions[e.Name]; ok {
			b.Version = v.String()
		}
		dc.Bundles = append(dc.Bundles, b)
	}
	sort.SliceStable(dc.Bundles, func(i, j int) bool {
		return versions[dc.Bundles[i].Name].GT(versions[dc.Bundles[j].Name])
	})
	dc.Edges = g.AllEdges()
	return dc, g.Warnings
}

// ChannelEdges lists the edges of ch (see AllEdges); versions are the
// bundles' versions, for its skipRanges.
func ChannelEdges(ch *fbc.Channel, versions map[string]semver.Version) []DocEdge {
	return newChannelGraph(ch, versions).AllEdges()
}

// AllEdges lists every edge of the channel: by target entry in entry
// order, then replaces, skips and skipRange edges (those by source entry
// order).
func (g *ChannelGraph) AllEdges() []DocEdge {
	var out []DocEdge
	for i, e := range g.Entries {
		if e.Replaces != "" {
			out = append(out, DocEdge{From: e.Replaces, To: e.Name, Kind: EdgeReplaces})
		}
		for _, s := range e.Skips {
			out = append(out, DocEdge{From: s, To: e.Name, Kind: EdgeSkips})
		}
		if g.ranges[i] == nil {
			continue
		}
		for _, o := range g.Entries {
			if v, ok := g.versions[o.Name]; ok && o.Name != e.Name && g.ranges[i](v) {
				out = append(out, DocEdge{From: o.Name, To: e.Name, Kind: EdgeSkipRange, SkipRange: e.SkipRange})
			}
		}
	}
	return out
}

// WriteDot draws a Document as a Graphviz digraph: a cluster per package
// and channel, bundles as boxes labelled with name and version, heads
// with a double border, deprecated bundles filled orange, skipped ones
// outlined red; replaces edges solid, skips dashed, skipRange edges
// dotted and labelled with the range.
func WriteDot(w io.Writer, doc *Document) error {
	var b strings.Builder
	b.WriteString("digraph \"upgrade graph\" {\n  rankdir=LR;\n  node [shape=box, fontname=\"Helvetica\"];\n  edge [fontname=\"Helvetica\", fontsize=10];\n")
	for _, p := range doc.Packages {
		for _, ch := range p.Channels {
			id := func(name string) string { return dotID(p.Name + "/" + ch.Name + "/" + name) }
			label := p.Name + " / " + ch.Name
			if ch.Name == p.DefaultChannel {
				label += " (default)"
			}
			if ch.Deprecated || p.Deprecated {
				label += " (deprecated)"
			}
			fmt.Fprintf(&b, "  subgraph %s {\n    label=%s;\n", dotID("cluster_"+p.Name+"/"+ch.Name), dotID(label))
			heads := map[string]bool{}
			for _, h := range ch.Heads {
				heads[h] = true
			}
			known := map[string]bool{}
			for _, bd := range ch.Bundles {
				known[bd.Name] = true
				var attrs []string
				nl := bd.Name
				if bd.Version != "" {
					nl += "\n" + bd.Version
				}
				attrs = append(attrs, "label="+dotID(nl))
				if heads[bd.Name] {
					attrs = append(attrs, "peripheries=2")
				}
				if bd.Deprecated {
					attrs = append(attrs, "style=filled", "fillcolor=\"#E8960F\"")
				}
				if bd.Skipped {
					attrs = append(attrs, "color=\"#FF0000\"")
				}
				fmt.Fprintf(&b, "    %s [%s];\n", id(bd.Name), strings.Join(attrs, ", "))
			}
			for _, e := range ch.Edges {
				if !known[e.From] {
					// A replaced or skipped bundle the channel does not
					// hold: drawn plain, so the edge has an end.
					known[e.From] = true
					fmt.Fprintf(&b, "    %s [label=%s, style=dashed];\n", id(e.From), dotID(e.From))
				}
			}
			b.WriteString("  }\n")
			for _, e := range ch.Edges {
				var attrs []string
				switch e.Kind {
				case EdgeSkips:
					attrs = append(attrs, "style=dashed", "label=\"skips\"")
				case EdgeSkipRange:
					attrs = append(attrs, "style=dotted", "label="+dotID(e.SkipRange))
				}
				fmt.Fprintf(&b, "  %s -> %s", id(e.From), id(e.To))
				if len(attrs) > 0 {
					fmt.Fprintf(&b, " [%s]", strings.Join(attrs, ", "))
				}
				b.WriteString(";\n")
			}
		}
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// dotID quotes s as a DOT string: backslashes and quotes escaped, line
// breaks as \n.
func dotID(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`)
	return `"` + r.Replace(s) + `"`
}
