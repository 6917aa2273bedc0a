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
// first, bundles without a version last) and its edges. Ranges lists each
// skipRange once, with the runs of Bundles it covers; Edges holds an edge
// from every bundle a skipRange covers as well, unless the document was
// built with GraphOptions.CompactRanges (an edge per covered bundle is n²
// on a channel whose every entry skips all before it).
type DocChannel struct {
	Name       string      `json:"name"`
	Deprecated bool        `json:"deprecated"`
	Heads      []string    `json:"heads"`
	Bundles    []DocBundle `json:"bundles"`
	Edges      []DocEdge   `json:"edges"`
	Ranges     []DocRange  `json:"ranges,omitempty"`
}

// DocRange is the skipRange of entry To: OLM may upgrade to To from every
// bundle of the runs Covers (To itself never).
type DocRange struct {
	To        string    `json:"to"`
	SkipRange string    `json:"skipRange"`
	Covers    []DocSpan `json:"covers"`
	// Count is how many bundles the runs hold.
	Count int `json:"count"`
}

// DocSpan is a run of a channel's Bundles: High, Low and every bundle
// listed between them.
type DocSpan struct {
	High  string `json:"high"`
	Low   string `json:"low"`
	Count int    `json:"count"`
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
	// CompactRanges leaves skipRange edges out of DocChannel.Edges: each
	// skipRange is then only in DocChannel.Ranges, and the document grows
	// with the catalog, not with the square of a channel.
	CompactRanges bool
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
		dc, warns := newDocChannel(&fbc.Channel{Name: ch.Name, Package: ch.Package, Entries: entries}, versions, depBundle, !opts.CompactRanges)
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

// NewDocChannel reads one channel as a Document holds it, skipRange
// edges expanded into Edges (as before Ranges existed; see
// NewDocChannelRanges); deprecated names the deprecated bundles. The
// warnings name skipRanges that do not parse.
func NewDocChannel(ch *fbc.Channel, versions map[string]semver.Version, deprecated map[string]bool) (DocChannel, []string) {
	return newDocChannel(ch, versions, deprecated, true)
}

// NewDocChannelRanges is NewDocChannel with each skipRange only in
// Ranges, not expanded into Edges: its size grows with the channel.
func NewDocChannelRanges(ch *fbc.Channel, versions map[string]semver.Version, deprecated map[string]bool) (DocChannel, []string) {
	return newDocChannel(ch, versions, deprecated, false)
}

func newDocChannel(ch *fbc.Channel, versions map[string]semver.Version, deprecated map[string]bool, expand bool) (DocChannel, []string) {
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
		a, b := dc.Bundles[i], dc.Bundles[j]
		if (a.Version == "") != (b.Version == "") {
			return b.Version == ""
		}
		return versions[a.Name].GT(versions[b.Name])
	})
	for _, e := range g.Entries {
		if e.Replaces != "" {
			dc.Edges = append(dc.Edges, DocEdge{From: e.Replaces, To: e.Name, Kind: EdgeReplaces})
		}
		for _, s := range e.Skips {
			dc.Edges = append(dc.Edges, DocEdge{From: s, To: e.Name, Kind: EdgeSkips})
		}
		if expand {
			for _, from := range g.Covered(e.Name) {
				dc.Edges = append(dc.Edges, DocEdge{From: from, To: e.Name, Kind: EdgeSkipRange, SkipRange: e.SkipRange})
			}
		}
	}
	// Runs over Bundles: the versioned ones, lowest first, are the
	// reverse of Bundles' head.
	var asc []string
	for i := len(dc.Bundles) - 1; i >= 0; i-- {
		if dc.Bundles[i].Version != "" {
			asc = append(asc, dc.Bundles[i].Name)
		}
	}
	ord := newVersionOrder(asc, versions)
	for i, e := range g.Entries {
		if g.ranges[i] == nil {
			continue
		}
		runs := ord.covered(g.ranges[i], e.SkipRange)
		if p, ok := ord.pos[e.Name]; ok {
			runs = without(runs, p)
		}
		if len(runs) == 0 {
			continue
		}
		r := DocRange{To: e.Name, SkipRange: e.SkipRange}
		for k := len(runs) - 1; k >= 0; k-- {
			s := runs[k]
			r.Covers = append(r.Covers, DocSpan{High: ord.names[s.hi-1], Low: ord.names[s.lo], Count: s.hi - s.lo})
			r.Count += s.hi - s.lo
		}
		dc.Ranges = append(dc.Ranges, r)
	}
	return dc, g.Warnings
}

// ChannelEdges lists the edges of ch (see AllEdges); versions are the
// bundles' versions, for its skipRanges.
func ChannelEdges(ch *fbc.Channel, versions map[string]semver.Version) []DocEdge {
	return newChannelGraph(ch, versions).AllEdges()
}

// AllEdges lists every edge of the channel: by target entry in entry
// order, then replaces, skips and skipRange edges (those lowest version
// first). A skipRange gives an edge per covered bundle: a caller that
// must stay linear in the channel reads Covered or CoveredRuns.
func (g *ChannelGraph) AllEdges() []DocEdge {
	var out []DocEdge
	for _, e := range g.Entries {
		if e.Replaces != "" {
			out = append(out, DocEdge{From: e.Replaces, To: e.Name, Kind: EdgeReplaces})
		}
		for _, s := range e.Skips {
			out = append(out, DocEdge{From: s, To: e.Name, Kind: EdgeSkips})
		}
		for _, from := range g.Covered(e.Name) {
			out = append(out, DocEdge{From: from, To: e.Name, Kind: EdgeSkipRange, SkipRange: e.SkipRange})
		}
	}
	return out
}

// WriteDot draws a Document as a Graphviz digraph: a cluster per package
// and channel, bundles as boxes labelled with name and version, heads
// with a double border, deprecated bundles filled orange, skipped ones
// outlined red; replaces edges solid, skips dashed. A skipRange is one
// dotted edge, labelled with the range, from a note naming the runs of
// bundles it covers. Ids are generated (n1, n2, …; cluster1, …): names
// appear only in quoted, escaped labels.
func WriteDot(w io.Writer, doc *Document) error {
	var b strings.Builder
	b.WriteString("digraph \"upgrade graph\" {\n  rankdir=LR;\n  node [shape=box, fontname=\"Helvetica\"];\n  edge [fontname=\"Helvetica\", fontsize=10];\n")
	ids := 0
	next := func(prefix string) string {
		ids++
		return fmt.Sprintf("%s%d", prefix, ids)
	}
	for _, p := range doc.Packages {
		for _, ch := range p.Channels {
			node := map[string]string{}
			label := p.Name + " / " + ch.Name
			if ch.Name == p.DefaultChannel {
				label += " (default)"
			}
			if ch.Deprecated || p.Deprecated {
				label += " (deprecated)"
			}
			fmt.Fprintf(&b, "  subgraph %s {\n    label=%s;\n", next("cluster"), dotID(label))
			heads := map[string]bool{}
			for _, h := range ch.Heads {
				heads[h] = true
			}
			for _, bd := range ch.Bundles {
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
				node[bd.Name] = next("n")
				fmt.Fprintf(&b, "    %s [%s];\n", node[bd.Name], strings.Join(attrs, ", "))
			}
			// Ranges, when the document has them, draw the skipRanges;
			// their expanded edges are not drawn again.
			ranged := ch.Ranges != nil
			var edges []DocEdge
			for _, e := range ch.Edges {
				if ranged && e.Kind == EdgeSkipRange {
					continue
				}
				edges = append(edges, e)
				for _, end := range []string{e.From, e.To} {
					if _, ok := node[end]; !ok {
						// A replaced or skipped bundle the channel does
						// not hold: drawn plain, so the edge has an end.
						node[end] = next("n")
						fmt.Fprintf(&b, "    %s [label=%s, style=dashed];\n", node[end], dotID(end))
					}
				}
			}
			rangeNode := make([]string, len(ch.Ranges))
			for i, r := range ch.Ranges {
				rangeNode[i] = next("n")
				fmt.Fprintf(&b, "    %s [shape=note, style=dotted, label=%s];\n", rangeNode[i], dotID(spanText(r)))
			}
			b.WriteString("  }\n")
			for _, e := range edges {
				var attrs []string
				switch e.Kind {
				case EdgeSkips:
					attrs = append(attrs, "style=dashed", "label=\"skips\"")
				case EdgeSkipRange:
					attrs = append(attrs, "style=dotted", "label="+dotID(e.SkipRange))
				}
				fmt.Fprintf(&b, "  %s -> %s", node[e.From], node[e.To])
				if len(attrs) > 0 {
					fmt.Fprintf(&b, " [%s]", strings.Join(attrs, ", "))
				}
				b.WriteString(";\n")
			}
			for i, r := range ch.Ranges {
				fmt.Fprintf(&b, "  %s -> %s [style=dotted, label=%s];\n", rangeNode[i], node[r.To], dotID(r.SkipRange))
			}
		}
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// spanText names a range's runs: "a.v1 … a.v4 (4 bundles)", runs joined
// by ", ", highest first.
func spanText(r DocRange) string {
	var parts []string
	for _, s := range r.Covers {
		switch s.Count {
		case 1:
			parts = append(parts, s.High)
		case 2:
			parts = append(parts, s.High+", "+s.Low)
		default:
			parts = append(parts, s.High+" … "+s.Low)
		}
	}
	unit := "bundles"
	if r.Count == 1 {
		unit = "bundle"
	}
	return fmt.Sprintf("%s (%d %s)", strings.Join(parts, ", "), r.Count, unit)
}

// dotID quotes s as a DOT string: backslashes and quotes escaped, line
// breaks as \n, other control characters as spaces.
func dotID(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '"':
			b.WriteString(`\"`)
		case r == '\n':
			b.WriteString(`\n`)
		case r < 0x20 || r == 0x7f:
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
