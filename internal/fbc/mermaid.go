package fbc

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/blang/semver/v4"
)

// WriteMermaid draws the catalog's channels as a mermaid flowchart, as
// upstream's `opm alpha render-template -o mermaid` does: packages in name
// order, each a subgraph of its channels (in name order), each channel
// listing its bundles from the highest version down with their skip,
// skipRange and replace edges. Deprecated packages, channels and bundles
// (olm.deprecations) are styled, and so are bundles that an upgrade skips
// over, with the edges into them. It returns a warning for each skipRange
// that does not parse (that entry is drawn without its range edges).
func WriteMermaid(w io.Writer, c *Catalog) ([]string, error) {
	versions := map[string]semver.Version{}
	for _, b := range c.Bundles {
		if _, ok := versions[b.Name]; ok {
			continue
		}
		v, err := mermaidVersion(b)
		if err != nil {
			return nil, err
		}
		versions[b.Name] = v
	}
	depPkg, depChannel, depBundle := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, o := range c.Others {
		if o.Schema != SchemaDeprecations {
			continue
		}
		var d struct {
			Package string `json:"package"`
			Entries []struct {
				Reference struct {
					Schema string `json:"schema"`
					Name   string `json:"name"`
				} `json:"reference"`
			} `json:"entries"`
		}
		if err := json.Unmarshal(o.Blob, &d); err != nil {
			return nil, fmt.Errorf("olm.deprecations of %s: %w", o.Package, err)
		}
		for _, e := range d.Entries {
			switch e.Reference.Schema {
			case SchemaPackage:
				depPkg[d.Package] = true
			case SchemaChannel:
				depChannel[e.Reference.Name] = true
			case SchemaBundle:
				depBundle[e.Reference.Name] = true
			}
		}
	}

	channels := append([]Channel(nil), c.Channels...)
	sort.SliceStable(channels, func(i, j int) bool { return channels[i].Name < channels[j].Name })
	var (
		warnings       []string
		pkgs           = map[string]*strings.Builder{}
		deprecatedPkg  string
		depChannelIDs  []string
		classes        = map[string][]string{}
		linkID         int
		skippedLinkIDs []string
	)
	for _, ch := range channels {
		sb := pkgs[ch.Package]
		if sb == nil {
			sb = &strings.Builder{}
			pkgs[ch.Package] = sb
		}
		chID := ch.Package + "-" + ch.Name
		fmt.Fprintf(sb, "    %%%% channel %q\n", ch.Name)
		fmt.Fprintf(sb, "    subgraph %s[%q]\n", chID, ch.Name)
		if depPkg[ch.Package] {
			deprecatedPkg = ch.Package
		}
		if depChannel[ch.Name] {
			depChannelIDs = append(depChannelIDs, chID)
		}
		entries := make([]*ChannelEntry, len(ch.Entries))
		for i := range ch.Entries {
			entries[i] = &ch.Entries[i]
		}
		sort.SliceStable(entries, func(i, j int) bool { return versions[entries[i].Name].GT(versions[entries[j].Name]) })
		// skipped holds the bundles an edge of this channel skips over; an
		// edge into one is drawn as a dead end.
		skipped := map[string]bool{}
		for _, e := range entries {
			id := chID + "-" + e.Name
			fmt.Fprintf(sb, "      %s[%q]\n", id, e.Name)
			switch {
			case depBundle[e.Name] && skipped[e.Name]:
				classes["deprecatedskipped"] = append(classes["deprecatedskipped"], id)
			case depBundle[e.Name]:
				classes["deprecated"] = append(classes["deprecated"], id)
			case skipped[e.Name]:
				classes["skipped"] = append(classes["skipped"], id)
			}
			for _, s := range e.Skips {
				fmt.Fprintf(sb, "      %s-%s[%q]-- skip --> %s[%q]\n", chID, s, s, id, e.Name)
				if skipped[s] {
					skippedLinkIDs = append(skippedLinkIDs, strconv.Itoa(linkID))
				} else {
					skipped[s] = true
				}
				linkID++
			}
			if e.SkipRange != "" {
				r, err := semver.ParseRange(e.SkipRange)
				if err != nil {
					warnings = append(warnings, fmt.Sprintf("ignoring invalid skipRange of package %q, entry %q: %v", ch.Package, e.Name, err))
				} else {
					for _, other := range ch.Entries {
						if !r(versions[other.Name]) {
							continue
						}
						fmt.Fprintf(sb, "      %s-%s[%q]-- \"skipRange(%s)\" --> %s[%q]\n", chID, other.Name, other.Name, e.SkipRange, id, e.Name)
						if skipped[e.Name] {
							skippedLinkIDs = append(skippedLinkIDs, strconv.Itoa(linkID))
						}
						linkID++
					}
				}
			}
			if e.Replaces != "" {
				fmt.Fprintf(sb, "      %s-%s[%q]-- replace --> %s[%q]\n", chID, e.Replaces, e.Replaces, id, e.Name)
				if skipped[e.Name] {
					skippedLinkIDs = append(skippedLinkIDs, strconv.Itoa(linkID))
				}
				linkID++
			}
		}
		sb.WriteString("    end\n")
	}

	var b strings.Builder
	b.WriteString("graph LR\n")
	b.WriteString("  classDef deprecated fill:#E8960F\n")
	b.WriteString("  classDef skipped stroke:#FF0000,stroke-width:4px\n")
	b.WriteString("  classDef deprecatedskipped fill:#E8960F,stroke:#FF0000,stroke-width:4px\n")
	names := make([]string, 0, len(pkgs))
	for n := range pkgs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "  %%%% package %q\n", n)
		fmt.Fprintf(&b, "  subgraph %q\n", n)
		b.WriteString(pkgs[n].String())
		b.WriteString("  end\n")
	}
	if deprecatedPkg != "" {
		fmt.Fprintf(&b, "style %s fill:#989695\n", deprecatedPkg)
	}
	for _, id := range depChannelIDs {
		fmt.Fprintf(&b, "style %s fill:#DCD0FF\n", id)
	}
	for _, k := range []string{"deprecated", "deprecatedskipped", "skipped"} {
		if ids := classes[k]; len(ids) > 0 {
			sort.Strings(ids)
			fmt.Fprintf(&b, "class %s %s\n", strings.Join(ids, ","), k)
		}
	}
	if len(skippedLinkIDs) > 0 {
		fmt.Fprintf(&b, "linkStyle %s stroke:#FF0000,stroke-width:3px,stroke-dasharray:5;\n", strings.Join(skippedLinkIDs, ","))
	}
	_, err := io.WriteString(w, b.String())
	return warnings, err
}

// mermaidVersion is a bundle's version from its one olm.package property.
func mermaidVersion(b Bundle) (semver.Version, error) {
	var found []PackageValue
	for _, p := range b.Properties {
		if p.Type != PropertyPackage {
			continue
		}
		var v PackageValue
		if err := json.Unmarshal(p.Value, &v); err != nil {
			return semver.Version{}, fmt.Errorf("bundle %q: olm.package property: %w", b.Name, err)
		}
		found = append(found, v)
	}
	if len(found) != 1 {
		return semver.Version{}, fmt.Errorf("bundle %q has %d olm.package properties, expected exactly 1", b.Name, len(found))
	}
	v, err := semver.Parse(found[0].Version)
	if err != nil {
		return semver.Version{}, fmt.Errorf("bundle %q has invalid version %q: %w", b.Name, found[0].Version, err)
	}
	return v, nil
}
