package graph

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/internal/fbc"
)

// MermaidOptions are the flags of upstream `opm alpha render-graph`;
// `alpha render-template -o mermaid` draws with V0Semantics alone.
type MermaidOptions struct {
	// Package keeps only this package (-p/--package-name).
	Package string
	// Channel keeps only channels of this name (--channel; opm's own).
	Channel string
	// MinimumEdge is a bundle name: edges from bundles below its version are
	// left out (--minimum-edge).
	MinimumEdge string
	// MaximumEdge is a bundle name: bundles above its version, and their
	// edges, are left out (--maximum-edge; opm's own).
	MaximumEdge string
	// V0Semantics marks bundles OLM v0 skips over, and the edges into them
	// (--draw-v0-semantics).
	V0Semantics bool
	// CatalogOrder draws channels of one name in catalog order instead of
	// by package. It only moves linkStyle numbers; render-template keeps
	// the order its template gave (upstream's writer sorts by channel name
	// alone, so ties stay as they came).
	CatalogOrder bool
}

// WriteMermaid writes the upgrade graphs of c as a mermaid flowchart, in
// the form upstream opm's one catalog graph writer prints for both
// `alpha render-graph` and `alpha render-template -o mermaid`: packages by
// name, each a subgraph of its channels, each channel's bundles from the
// highest version down with their skip, skipRange and replace edges; then
// styles for deprecated packages and channels and classes for deprecated
// and skipped bundles. The returned warnings name skipRanges that do not
// parse (their edges are left out, as upstream).
func WriteMermaid(w io.Writer, c *fbc.Catalog, opts MermaidOptions) ([]string, error) {
	versions, err := Versions(c)
	if err != nil {
		return nil, err
	}
	floor, floorPkg, err := minimumEdge(c, versions, opts.MinimumEdge)
	if err != nil {
		return nil, err
	}
	ceil, err := newCeiling(c, versions, opts.MaximumEdge)
	if err != nil {
		return nil, err
	}
	deps, err := Deprecations(c)
	if err != nil {
		return nil, err
	}
	// Deprecated channels and bundles are matched by name across packages,
	// as upstream does.
	depPkg, depCh, depBundle := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for pkg, ds := range deps {
		for _, d := range ds {
			switch d.Schema {
			case fbc.SchemaPackage:
				depPkg[pkg] = true
			case fbc.SchemaChannel:
				depCh[d.Name] = true
			case fbc.SchemaBundle:
				depBundle[d.Name] = true
			}
		}
	}

	channels := make([]*fbc.Channel, len(c.Channels))
	for i := range c.Channels {
		channels[i] = &c.Channels[i]
	}
	// Edge numbers (for linkStyle) run over channels in name order across
	// packages, although the text is grouped by package.
	sort.SliceStable(channels, func(i, j int) bool {
		if channels[i].Name != channels[j].Name || opts.CatalogOrder {
			return channels[i].Name < channels[j].Name
		}
		return channels[i].Package < channels[j].Package
	})

	var warnings []string
	pkgText := map[string]*strings.Builder{}
	var deprecatedPackages, deprecatedChannels []string
	classes := map[string][]string{}
	var skippedLinks []string
	link := 0
	// Ids are generated (n1, n2, … for bundles and ranges, c1… for
	// channels, p1… for packages): names appear only in escaped labels, so
	// no name can add a statement.
	ids := 0
	newID := func(prefix string) string {
		ids++
		return fmt.Sprintf("%s%d", prefix, ids)
	}
	pkgID := map[string]string{}
	for _, ch := range channels {
		if opts.Channel != "" && ch.Name != opts.Channel {
			continue
		}
		entries := ceil.apply(ch.Package, filterChannel(ch, versions, opts, floor, floorPkg), versions)
		if entries == nil {
			continue
		}
		b := pkgText[ch.Package]
		if b == nil {
			b = &strings.Builder{}
			pkgText[ch.Package] = b
			pkgID[ch.Package] = newID("p")
			if depPkg[ch.Package] {
				deprecatedPackages = append(deprecatedPackages, pkgID[ch.Package])
			}
		}
		chID := newID("c")
		fmt.Fprintf(b, "    %%%% channel \"%s\"\n", mermaidText(ch.Name))
		fmt.Fprintf(b, "    subgraph %s[\"%s\"]\n", chID, mermaidText(ch.Name))
		if depCh[ch.Name] {
			deprecatedChannels = append(deprecatedChannels, chID)
		}
		node := map[string]string{}
		ref := func(name string) string {
			id, ok := node[name]
			if !ok {
				id = newID("n")
				node[name] = id
			}
			return fmt.Sprintf("%s[\"%s\"]", id, mermaidText(name))
		}

		ordered := append([]fbc.ChannelEntry(nil), entries...)
		sort.SliceStable(ordered, func(i, j int) bool { return versions[ordered[i].Name].GT(versions[ordered[j].Name]) })
		names := make([]string, len(entries))
		for i, e := range entries {
			names[i] = e.Name
		}
		ord := newVersionOrder(names, versions)
		// Walking down from the head, the first skip of a bundle marks it
		// skipped; a later edge into a skipped bundle is a skipped link.
		skipped := map[string]bool{}
		mark := func(name string, capture bool) {
			if !opts.V0Semantics {
				return
			}
			switch {
			case skipped[name]:
				skippedLinks = append(skippedLinks, fmt.Sprint(link))
			case capture:
				skipped[name] = true
			}
		}
		for _, e := range ordered {
			to := ref(e.Name)
			id := node[e.Name]
			fmt.Fprintf(b, "      %s\n", to)
			switch {
			case depBundle[e.Name] && skipped[e.Name]:
				classes["deprecatedskipped"] = append(classes["deprecatedskipped"], id)
			case depBundle[e.Name]:
				classes["deprecated"] = append(classes["deprecated"], id)
			case skipped[e.Name]:
				classes["skipped"] = append(classes["skipped"], id)
			}
			for _, s := range e.Skips {
				fmt.Fprintf(b, "      %s-- skip --> %s\n", ref(s), to)
				mark(s, true)
				link++
			}
			if e.SkipRange != "" {
				inRange, err := semver.ParseRange(e.SkipRange)
				if err != nil {
					warnings = append(warnings, fmt.Sprintf("ignoring invalid skipRange %q of %s/%s: %v", e.SkipRange, ch.Package, e.Name, err))
				} else if runs := rangeRuns(ord, inRange, e); len(runs) > 0 {
					// One node stands for every bundle the range covers
					// (named by its runs, lowest first): an edge per
					// covered bundle costs n² on a channel whose every
					// entry skips all before it.
					fmt.Fprintf(b, "      %s{{\"%s\"}}-- \"skipRange(%s)\" --> %s\n", newID("n"), mermaidText(runs), mermaidText(e.SkipRange), to)
					mark(e.Name, false)
					link++
				}
			}
			if e.Replaces != "" {
				fmt.Fprintf(b, "      %s-- replace --> %s\n", ref(e.Replaces), to)
				mark(e.Name, false)
				link++
			}
		}
		b.WriteString("    end\n")
	}

	// Whole, then written once: nothing reaches w on an error above.
	var bw strings.Builder
	bw.WriteString("graph LR\n")
	bw.WriteString("  classDef deprecated fill:#E8960F\n")
	bw.WriteString("  classDef skipped stroke:#FF0000,stroke-width:4px\n")
	bw.WriteString("  classDef deprecatedskipped fill:#E8960F,stroke:#FF0000,stroke-width:4px\n")
	pkgs := make([]string, 0, len(pkgText))
	for p := range pkgText {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, p := range pkgs {
		fmt.Fprintf(&bw, "  %%%% package \"%s\"\n", mermaidText(p))
		fmt.Fprintf(&bw, "  subgraph %s[\"%s\"]\n", pkgID[p], mermaidText(p))
		bw.WriteString(pkgText[p].String())
		bw.WriteString("  end\n")
	}
	sort.Strings(deprecatedPackages)
	for _, id := range deprecatedPackages {
		fmt.Fprintf(&bw, "style %s fill:#989695\n", id)
	}
	for _, id := range deprecatedChannels {
		fmt.Fprintf(&bw, "style %s fill:#DCD0FF\n", id)
	}
	for _, class := range []string{"deprecated", "deprecatedskipped", "skipped"} {
		if ids := classes[class]; len(ids) > 0 {
			fmt.Fprintf(&bw, "class %s %s\n", strings.Join(ids, ","), class)
		}
	}
	if len(skippedLinks) > 0 {
		fmt.Fprintf(&bw, "linkStyle %s stroke:#FF0000,stroke-width:3px,stroke-dasharray:5;\n", strings.Join(skippedLinks, ","))
	}
	_, err = io.WriteString(w, bw.String())
	return warnings, err
}

// rangeRuns names what the skipRange of e covers among the channel's
// bundles (e itself left out) by runs of versions, lowest first: "a.v1 …
// a.v4 (4 bundles)", runs joined by ", "; "" when it covers none.
func rangeRuns(ord *versionOrder, r semver.Range, e fbc.ChannelEntry) string {
	runs := ord.covered(r, e.SkipRange)
	if p, ok := ord.pos[e.Name]; ok {
		runs = without(runs, p)
	}
	var parts []string
	total := 0
	for _, s := range runs {
		total += s.hi - s.lo
		switch s.hi - s.lo {
		case 1:
			parts = append(parts, ord.names[s.lo])
		case 2:
			parts = append(parts, ord.names[s.lo]+", "+ord.names[s.lo+1])
		default:
			parts = append(parts, ord.names[s.lo]+" … "+ord.names[s.hi-1])
		}
	}
	if total == 0 {
		return ""
	}
	unit := "bundles"
	if total == 1 {
		unit = "bundle"
	}
	return fmt.Sprintf("%s (%d %s)", strings.Join(parts, ", "), total, unit)
}

// mermaidText escapes s for a quoted mermaid label or a comment: quotes,
// #, <, >, & and backquotes as mermaid entity codes, line breaks and other
// control characters as spaces, so a name can neither end its label nor
// start a statement.
func mermaidText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '#':
			b.WriteString("#35;")
		case r == '"':
			b.WriteString("#quot;")
		case r == '<':
			b.WriteString("#lt;")
		case r == '>':
			b.WriteString("#gt;")
		case r == '&':
			b.WriteString("#amp;")
		case r == '`':
			b.WriteString("#96;")
		case r < 0x20 || r == 0x7f || r == 0x2028 || r == 0x2029 || r == 0x85:
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// minimumEdge is the version of the --minimum-edge bundle and the package
// of the first channel holding it; zero without one.
func minimumEdge(c *fbc.Catalog, versions map[string]semver.Version, name string) (semver.Version, string, error) {
	if name == "" {
		return semver.Version{}, "", nil
	}
	v, ok := versions[name]
	if !ok {
		return semver.Version{}, "", fmt.Errorf("unknown minimum edge name: %q", name)
	}
	for _, ch := range c.Channels {
		for _, e := range ch.Entries {
			if e.Name == name {
				return v, ch.Package, nil
			}
		}
	}
	return v, "", nil
}

// ceiling is --maximum-edge: a version and the package of the first
// channel holding the bundle named.
type ceiling struct {
	set     bool
	version semver.Version
	pkg     string
}

func newCeiling(c *fbc.Catalog, versions map[string]semver.Version, name string) (ceiling, error) {
	if name == "" {
		return ceiling{}, nil
	}
	v, ok := versions[name]
	if !ok {
		return ceiling{}, fmt.Errorf("unknown maximum edge name: %q", name)
	}
	out := ceiling{set: true, version: v}
	for _, ch := range c.Channels {
		for _, e := range ch.Entries {
			if e.Name == name && out.pkg == "" {
				out.pkg = ch.Package
			}
		}
	}
	return out, nil
}

// apply drops the entries above the ceiling, and the channels of other
// packages (nil), as --minimum-edge does.
func (c ceiling) apply(pkg string, entries []fbc.ChannelEntry, versions map[string]semver.Version) []fbc.ChannelEntry {
	if !c.set || entries == nil {
		return entries
	}
	if c.pkg != "" && pkg != c.pkg {
		return nil
	}
	var out []fbc.ChannelEntry
	for _, e := range entries {
		if v, ok := versions[e.Name]; !ok || v.LTE(c.version) {
			out = append(out, e)
		}
	}
	return out
}

// filterChannel applies --package-name and --minimum-edge; nil drops the
// channel. Edges from below the floor go; the floor bundle keeps none.
func filterChannel(ch *fbc.Channel, versions map[string]semver.Version, opts MermaidOptions, floor semver.Version, floorPkg string) []fbc.ChannelEntry {
	if opts.Package == "" && opts.MinimumEdge == "" {
		return ch.Entries
	}
	if opts.Package != "" && ch.Package != opts.Package {
		return nil
	}
	if floorPkg != "" && ch.Package != floorPkg {
		return nil
	}
	var out []fbc.ChannelEntry
	for _, e := range ch.Entries {
		had := e.Replaces != "" || len(e.Skips) > 0 || e.SkipRange != ""
		if opts.MinimumEdge == "" {
			out = append(out, e)
			continue
		}
		if e.Name == opts.MinimumEdge {
			out = append(out, fbc.ChannelEntry{Name: e.Name})
			continue
		}
		f := fbc.ChannelEntry{Name: e.Name}
		if e.Replaces != "" && versions[e.Replaces].GTE(floor) {
			f.Replaces = e.Replaces
		}
		for _, s := range e.Skips {
			if versions[s].GTE(floor) {
				f.Skips = append(f.Skips, s)
			}
		}
		if e.SkipRange != "" {
			if r, err := semver.ParseRange(e.SkipRange); err == nil && r(floor) {
				f.SkipRange = e.SkipRange
			}
		}
		if f.Replaces != "" || len(f.Skips) > 0 || f.SkipRange != "" || (!had && versions[e.Name].GTE(floor)) {
			out = append(out, f)
		}
	}
	return out
}
