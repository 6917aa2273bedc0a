package index

// An oracle for the tests, not the product: the render-graph mermaid drawn
// straight from the tables, which internal/fbc/graph must equal from a
// rendered catalog (graph_oracle_test.go).

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
)

// GraphOptions are the flags of upstream `opm alpha render-graph`.
type GraphOptions struct {
	// Package keeps only this package (upstream -p/--package-name).
	Package string
	// MinimumEdge is a bundle name: edges from bundles below its version are
	// left out (upstream --minimum-edge).
	MinimumEdge string
}

// GraphResult is what RenderGraph wrote, and what it could not draw.
type GraphResult struct {
	// Warnings name entries whose skipRange does not parse (upstream printed
	// these on stderr and drew the rest).
	Warnings []string
}

// graphEntry is one bundle of one channel, with its upgrade edges.
type graphEntry struct {
	name, replaces, skipRange string
	skips                     []string
}

type graphChannel struct {
	pkg, name string
	entries   []graphEntry // sorted by name
}

// RenderGraph writes the upgrade graphs of the index as a mermaid flowchart,
// in the form upstream opm v1.73.0 `alpha render-graph` printed for a sqlite
// index: packages in name order, each a subgraph of its channels, each
// channel listing its bundles from the highest version down with their
// skip, skipRange and replace edges, then the class and link styles that
// mark bundles skipped over and the edges into them.
func (d *DB) RenderGraph(ctx context.Context, w io.Writer, opts GraphOptions) (*GraphResult, error) {
	rows, err := d.ListBundles(ctx, "")
	if err != nil {
		return nil, err
	}
	versions := map[string]semver.Version{}
	byChannel := map[[2]string]*graphChannel{}
	var channels []*graphChannel
	for _, r := range rows {
		if _, ok := versions[r.Bundle]; !ok {
			v, err := semver.Parse(r.Version)
			if err != nil {
				return nil, fmt.Errorf("render graph of %s: bundle %q has version %q, which is not semver: %w", d.path, r.Bundle, r.Version, err)
			}
			versions[r.Bundle] = v
		}
		k := [2]string{r.Package, r.Channel}
		c := byChannel[k]
		if c == nil {
			c = &graphChannel{pkg: r.Package, name: r.Channel}
			byChannel[k] = c
			channels = append(channels, c)
		}
		c.entries = append(c.entries, graphEntry{name: r.Bundle, replaces: r.Replaces, skips: r.Skips, skipRange: r.SkipRange})
	}
	res := &GraphResult{}
	if err := writeMermaid(w, channels, versions, opts, res); err != nil {
		return nil, fmt.Errorf("render graph of %s: %w", d.path, err)
	}
	return res, nil
}

// writeMermaid draws channels. Edge numbering (for linkStyle) runs over the
// channels in name order across all packages, as upstream's does, although
// the text is grouped by package.
func writeMermaid(w io.Writer, channels []*graphChannel, versions map[string]semver.Version, opts GraphOptions, res *GraphResult) error {
	sort.SliceStable(channels, func(i, j int) bool {
		if channels[i].name != channels[j].name {
			return channels[i].name < channels[j].name
		}
		return channels[i].pkg < channels[j].pkg
	})
	var floor semver.Version
	floorPkg := ""
	if opts.MinimumEdge != "" {
		v, ok := versions[opts.MinimumEdge]
		if !ok {
			return fmt.Errorf("unknown minimum edge name: %q", opts.MinimumEdge)
		}
		floor = v
		for _, c := range channels {
			if floorPkg != "" {
				break
			}
			for _, e := range c.entries {
				if e.name == opts.MinimumEdge {
					floorPkg = c.pkg
					break
				}
			}
		}
	}

	pkgText := map[string]*strings.Builder{}
	skippedBundles := map[string]bool{} // entry ids drawn as skipped
	var skippedLinks []string
	link := 0
	for _, c := range channels {
		entries := filterGraphChannel(c, versions, opts, floor, floorPkg)
		if entries == nil {
			continue
		}
		b := pkgText[c.pkg]
		if b == nil {
			b = &strings.Builder{}
			pkgText[c.pkg] = b
		}
		chID := c.pkg + "-" + c.name
		fmt.Fprintf(b, "    %%%% channel %q\n", c.name)
		fmt.Fprintf(b, "    subgraph %s[%q]\n", chID, c.name)

		ordered := append([]graphEntry(nil), entries...)
		sort.SliceStable(ordered, func(i, j int) bool { return versions[ordered[i].name].GT(versions[ordered[j].name]) })
		// A bundle named by a skip is "skipped"; an edge into a bundle that
		// is skipped elsewhere is drawn as a skipped link.
		skipped := map[string]bool{}
		for _, e := range ordered {
			id := chID + "-" + e.name
			fmt.Fprintf(b, "      %s[%q]\n", id, e.name)
			if skipped[e.name] {
				skippedBundles[id] = true
			}
			for _, s := range e.skips {
				fmt.Fprintf(b, "      %s[%q]-- skip --> %s[%q]\n", chID+"-"+s, s, id, e.name)
				if skipped[s] {
					skippedLinks = append(skippedLinks, fmt.Sprint(link))
				} else {
					skipped[s] = true
				}
				link++
			}
			if e.skipRange != "" {
				inRange, err := semver.ParseRange(e.skipRange)
				if err != nil {
					res.Warnings = append(res.Warnings, fmt.Sprintf("ignoring invalid skipRange %q of %s/%s: %v", e.skipRange, c.pkg, e.name, err))
				} else {
					for _, o := range entries {
						if !inRange(versions[o.name]) {
							continue
						}
						fmt.Fprintf(b, "      %s[%q]-- \"skipRange(%s)\" --> %s[%q]\n", chID+"-"+o.name, o.name, e.skipRange, id, e.name)
						if skipped[e.name] {
							skippedLinks = append(skippedLinks, fmt.Sprint(link))
						}
						link++
					}
				}
			}
			if e.replaces != "" {
				fmt.Fprintf(b, "      %s[%q]-- replace --> %s[%q]\n", chID+"-"+e.replaces, e.replaces, id, e.name)
				if skipped[e.name] {
					skippedLinks = append(skippedLinks, fmt.Sprint(link))
				}
				link++
			}
		}
		b.WriteString("    end\n")
	}

	var out strings.Builder
	out.WriteString("graph LR\n")
	out.WriteString("  classDef deprecated fill:#E8960F\n")
	out.WriteString("  classDef skipped stroke:#FF0000,stroke-width:4px\n")
	out.WriteString("  classDef deprecatedskipped fill:#E8960F,stroke:#FF0000,stroke-width:4px\n")
	pkgs := make([]string, 0, len(pkgText))
	for p := range pkgText {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, p := range pkgs {
		fmt.Fprintf(&out, "  %%%% package %q\n", p)
		fmt.Fprintf(&out, "  subgraph %q\n", p)
		out.WriteString(pkgText[p].String())
		out.WriteString("  end\n")
	}
	// A sqlite index has no deprecation schema, so only "skipped" can occur.
	if len(skippedBundles) > 0 {
		ids := make([]string, 0, len(skippedBundles))
		for id := range skippedBundles {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		fmt.Fprintf(&out, "class %s skipped\n", strings.Join(ids, ","))
	}
	if len(skippedLinks) > 0 {
		fmt.Fprintf(&out, "linkStyle %s stroke:#FF0000,stroke-width:3px,stroke-dasharray:5;\n", strings.Join(skippedLinks, ","))
	}
	_, err := io.WriteString(w, out.String())
	return err
}

// filterGraphChannel applies --package-name and --minimum-edge: nil drops
// the channel. Below the floor an edge goes; the floor bundle keeps no edges.
func filterGraphChannel(c *graphChannel, versions map[string]semver.Version, opts GraphOptions, floor semver.Version, floorPkg string) []graphEntry {
	if opts.Package == "" && opts.MinimumEdge == "" {
		return c.entries
	}
	if opts.Package != "" && c.pkg != opts.Package {
		return nil
	}
	if floorPkg != "" && c.pkg != floorPkg {
		return nil
	}
	var out []graphEntry
	for _, e := range c.entries {
		had := e.replaces != "" || len(e.skips) > 0 || e.skipRange != ""
		if opts.MinimumEdge == "" {
			out = append(out, e)
			continue
		}
		if e.name == opts.MinimumEdge {
			out = append(out, graphEntry{name: e.name})
			continue
		}
		f := graphEntry{name: e.name}
		if e.replaces != "" && versions[e.replaces].GTE(floor) {
			f.replaces = e.replaces
		}
		for _, s := range e.skips {
			if versions[s].GTE(floor) {
				f.skips = append(f.skips, s)
			}
		}
		if e.skipRange != "" {
			if r, err := semver.ParseRange(e.skipRange); err == nil && r(floor) {
				f.skipRange = e.skipRange
			}
		}
		if f.replaces != "" || len(f.skips) > 0 || f.skipRange != "" || (!had && versions[e.name].GTE(floor)) {
			out = append(out, f)
		}
	}
	return out
}
