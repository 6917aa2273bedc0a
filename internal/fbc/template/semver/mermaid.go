package semver

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/internal/fbc"
)

// Mermaid writes the channels of a catalog as a mermaid flowchart, line for
// line as upstream's `alpha render-template -o mermaid` (its catalog graph
// writer, drawing v0 semantics) prints them: packages in name order, each a
// subgraph of its channels (in name order); each channel lists its bundles
// from the highest version down with their skip, skipRange and replace
// edges; then the class definitions and styles that mark deprecated and
// skipped bundles. Every bundle needs an olm.package property with a semver
// version. Unparseable skipRanges are left out and reported in warn (which
// may be nil).
func Mermaid(w io.Writer, c *fbc.Catalog, warn io.Writer) error {
	versions := map[string]semver.Version{}
	for _, b := range c.Bundles {
		if _, ok := versions[b.Name]; ok {
			continue
		}
		pv, err := packageOf(&b)
		if err != nil {
			return fmt.Errorf("mermaid: bundle %q %v", b.Name, err)
		}
		v, err := semver.Parse(pv.Version)
		if err != nil {
			return fmt.Errorf("mermaid: bundle %q has version %q, which is not semver: %w", b.Name, pv.Version, err)
		}
		versions[b.Name] = v
	}
	channels := append([]fbc.Channel(nil), c.Channels...)
	sort.SliceStable(channels, func(i, j int) bool { return channels[i].Name < channels[j].Name })

	dep := deprecatedRefs(c)
	pkgText := map[string]*strings.Builder{}
	var deprecatedPackage string
	var deprecatedChannels []string
	classes := map[string][]string{}
	var skippedLinks []string
	link := 0
	for _, ch := range channels {
		b := pkgText[ch.Package]
		if b == nil {
			b = &strings.Builder{}
			pkgText[ch.Package] = b
		}
		chID := ch.Package + "-" + ch.Name
		fmt.Fprintf(b, "    %%%% channel %q\n", ch.Name)
		fmt.Fprintf(b, "    subgraph %s[%q]\n", chID, ch.Name)
		if dep.pkgs[ch.Package] {
			deprecatedPackage = ch.Package
		}
		if dep.channels[ch.Name] {
			deprecatedChannels = append(deprecatedChannels, chID)
		}
		order := make([]int, len(ch.Entries))
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(i, j int) bool {
			return versions[ch.Entries[order[i]].Name].GT(versions[ch.Entries[order[j]].Name])
		})
		// A bundle named by a skip is drawn as skipped; a later edge into a
		// bundle already skipped is drawn as a skipped link.
		skipped := map[string]bool{}
		for _, i := range order {
			e := ch.Entries[i]
			id := chID + "-" + e.Name
			fmt.Fprintf(b, "      %s[%q]\n", id, e.Name)
			switch {
			case dep.bundles[e.Name] && skipped[e.Name]:
				classes["deprecatedskipped"] = append(classes["deprecatedskipped"], id)
			case dep.bundles[e.Name]:
				classes["deprecated"] = append(classes["deprecated"], id)
			case skipped[e.Name]:
				classes["skipped"] = append(classes["skipped"], id)
			}
			for _, s := range e.Skips {
				fmt.Fprintf(b, "      %s[%q]-- %s --> %s[%q]\n", chID+"-"+s, s, "skip", id, e.Name)
				if skipped[s] {
					skippedLinks = append(skippedLinks, fmt.Sprint(link))
				} else {
					skipped[s] = true
				}
				link++
			}
			if e.SkipRange != "" {
				inRange, err := semver.ParseRange(e.SkipRange)
				if err != nil {
					if warn != nil {
						fmt.Fprintf(warn, "warning: ignoring invalid skipRange %q of %s/%s: %v\n", e.SkipRange, ch.Package, e.Name, err)
					}
				} else {
					for _, o := range ch.Entries {
						if !inRange(versions[o.Name]) {
							continue
						}
						fmt.Fprintf(b, "      %s[%q]-- \"%s(%s)\" --> %s[%q]\n", chID+"-"+o.Name, o.Name, "skipRange", e.SkipRange, id, e.Name)
						if skipped[e.Name] {
							skippedLinks = append(skippedLinks, fmt.Sprint(link))
						}
						link++
					}
				}
			}
			if e.Replaces != "" {
				fmt.Fprintf(b, "      %s[%q]-- %s --> %s[%q]\n", chID+"-"+e.Replaces, e.Replaces, "replace", id, e.Name)
				if skipped[e.Name] {
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
	if deprecatedPackage != "" {
		fmt.Fprintf(&out, "style %s fill:#989695\n", deprecatedPackage)
	}
	for _, id := range deprecatedChannels {
		fmt.Fprintf(&out, "style %s fill:#DCD0FF\n", id)
	}
	for _, class := range []string{"deprecated", "deprecatedskipped", "skipped"} {
		if ids := classes[class]; len(ids) > 0 {
			sort.Strings(ids)
			fmt.Fprintf(&out, "class %s %s\n", strings.Join(ids, ","), class)
		}
	}
	if len(skippedLinks) > 0 {
		fmt.Fprintf(&out, "linkStyle %s %s\n", strings.Join(skippedLinks, ","), "stroke:#FF0000,stroke-width:3px,stroke-dasharray:5;")
	}
	_, err := io.WriteString(w, out.String())
	return err
}

// deprecated names what a catalog's olm.deprecations blobs deprecate; like
// upstream's graph, channel and bundle names are matched across packages.
type deprecated struct {
	pkgs, channels, bundles map[string]bool
}

func deprecatedRefs(c *fbc.Catalog) deprecated {
	d := deprecated{pkgs: map[string]bool{}, channels: map[string]bool{}, bundles: map[string]bool{}}
	for _, o := range c.Others {
		if o.Schema != fbc.SchemaDeprecations {
			continue
		}
		var blob struct {
			Entries []struct {
				Reference struct {
					Schema string `json:"schema"`
					Name   string `json:"name"`
				} `json:"reference"`
			} `json:"entries"`
		}
		if err := json.Unmarshal(o.Blob, &blob); err != nil {
			continue
		}
		for _, e := range blob.Entries {
			switch e.Reference.Schema {
			case fbc.SchemaPackage:
				d.pkgs[o.Package] = true
			case fbc.SchemaChannel:
				d.channels[e.Reference.Name] = true
			case fbc.SchemaBundle:
				d.bundles[e.Reference.Name] = true
			}
		}
	}
	return d
}
