// Package substitutes is the substitutes catalog template (schema
// olm.template.substitutes): a file-based catalog plus substitutions, each
// a bundle image (name) that takes the place of a bundle of the catalog
// (base) in every channel's upgrade graph, as upstream's template does.
package substitutes

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbc/template"
	"github.com/opmkit/opm/internal/index"
	"github.com/opmkit/opm/internal/validate"
)

// Options control Render.
type Options struct {
	// RenderBundle renders each substitution's bundle image.
	RenderBundle template.RenderBundle
	// Source names the template file in errors.
	Source string
}

// Substitution is one item of substitutions.
type Substitution struct {
	// Name is the bundle image that substitutes.
	Name string `json:"name"`
	// Base is the name of the bundle it substitutes for.
	Base string `json:"base"`
	path string
}

// Template is a parsed substitutes template.
type Template struct {
	doc           *template.Document
	catalog       *fbc.Catalog
	substitutions []Substitution
}

// Parse reads a substitutes template, refusing unknown fields: schema,
// entries (catalog blobs, bundles whole) and substitutions ({name, base}).
func Parse(source string, data []byte) (*Template, error) {
	d, err := template.Parse(source, data)
	if err != nil {
		return nil, err
	}
	if err := d.CheckSchema(template.SchemaSubstitutes); err != nil {
		return nil, err
	}
	if err := d.CheckFields("", d.Value, "schema", "entries", "substitutions"); err != nil {
		return nil, err
	}
	entries, err := d.List("", d.Value, "entries")
	if err != nil {
		return nil, err
	}
	t := &Template{doc: d, catalog: &fbc.Catalog{}}
	for i, e := range entries {
		if err := d.Blob(t.catalog, template.Index("entries", i), e); err != nil {
			return nil, err
		}
	}
	subs, err := d.List("", d.Value, "substitutions")
	if err != nil {
		return nil, err
	}
	for i, s := range subs {
		path := template.Index("substitutions", i)
		m, err := d.Object(path, s)
		if err != nil {
			return nil, err
		}
		if err := d.CheckFields(path, m, "name", "base"); err != nil {
			return nil, err
		}
		var sub Substitution
		if sub.Name, err = d.String(path, m, "name"); err != nil {
			return nil, err
		}
		if sub.Base, err = d.String(path, m, "base"); err != nil {
			return nil, err
		}
		sub.path = path
		t.substitutions = append(t.substitutions, sub)
	}
	return t, nil
}

// Images are the substitutions' bundle images, in order.
func (t *Template) Images() []string {
	var out []string
	for _, s := range t.substitutions {
		if s.Name != "" {
			out = append(out, s.Name)
		}
	}
	return out
}

// Render expands a substitutes template into a catalog.
func Render(ctx context.Context, data []byte, opts Options) (*fbc.Catalog, error) {
	t, err := Parse(opts.Source, data)
	if err != nil {
		return nil, err
	}
	return t.Render(ctx, opts.RenderBundle)
}

// Render checks that the entries are a valid catalog, then applies each
// substitution in order: its image's bundle takes over the base's place
// in every channel (the base's upgrade edges, plus a skip of the base),
// and every entry that replaced or skipped the base now does so to the
// substitute. The checks are upstream's: a base is used once, an image
// substitutes for one base only, name and base are given and differ, the
// base is in the catalog, and the substitute's version (then release) is
// above the base's. The result must be a valid catalog too.
func (t *Template) Render(ctx context.Context, render template.RenderBundle) (*fbc.Catalog, error) {
	d := t.doc
	c := t.catalog
	if err := invalid(c); err != nil {
		return nil, d.Errorf("entries", "the entries are not a valid catalog: %v", err)
	}
	seenBase := map[string]string{}
	seenName := map[string]string{}
	for _, s := range t.substitutions {
		if prev, ok := seenBase[s.Base]; ok && s.Base != "" {
			return nil, d.Errorf(template.Join(s.path, "base"), "%s is already substituted (by %s in %s); a bundle is substituted once", s.Base, t.nameOf(prev), prev)
		}
		seenBase[s.Base] = s.path
		if prev, ok := seenName[s.Name]; ok && s.Name != "" {
			return nil, d.Errorf(template.Join(s.path, "name"), "%s already substitutes for %s (in %s); an image substitutes for one bundle", s.Name, t.baseOf(prev), prev)
		}
		seenName[s.Name] = s.path
		if err := t.apply(ctx, c, s, render); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (t *Template) nameOf(path string) string {
	for _, s := range t.substitutions {
		if s.path == path {
			return s.Name
		}
	}
	return ""
}

func (t *Template) baseOf(path string) string {
	for _, s := range t.substitutions {
		if s.path == path {
			return s.Base
		}
	}
	return ""
}

func (t *Template) apply(ctx context.Context, c *fbc.Catalog, s Substitution, render template.RenderBundle) error {
	d := t.doc
	switch {
	case s.Name == "":
		return d.Errorf(template.Join(s.path, "name"), "missing: the bundle image that substitutes (name: quay.io/me/op-bundle:v1.0.0-1)")
	case s.Base == "":
		return d.Errorf(template.Join(s.path, "base"), "missing: the name of the bundle substituted for (base: op.v1.0.0)")
	case s.Name == s.Base:
		return d.Errorf(s.path, "name and base are both %q: a bundle cannot substitute for itself", s.Name)
	}
	sub, err := render(ctx, s.Name)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return d.Errorf(template.Join(s.path, "name"), "bundle image %s: %v", s.Name, err)
	}
	subV, err := versionOf(sub)
	if err != nil {
		return d.Errorf(template.Join(s.path, "name"), "bundle image %s: %v", s.Name, err)
	}
	var base *fbc.Bundle
	for i := range c.Bundles {
		if c.Bundles[i].Name == s.Base {
			base = &c.Bundles[i]
			break
		}
	}
	if base == nil {
		return d.Errorf(template.Join(s.path, "base"), "no bundle %q among the entries (base names a bundle of the catalog, such as %s)", s.Base, someBundle(c))
	}
	baseV, err := versionOf(base)
	if err != nil {
		return d.Errorf(template.Join(s.path, "base"), "%v", err)
	}
	if baseV.Compare(subV) >= 0 {
		return d.Errorf(s.path, "the substitute %s (%s, version %s) is not above the base %s (version %s): a substitute has a higher version or release", s.Name, sub.Name, subV, s.Base, baseV)
	}

	for ci := range c.Channels {
		ch := &c.Channels[ci]
		var at []int
		for j := range ch.Entries {
			if ch.Entries[j].Name == s.Base {
				at = append(at, j)
			}
		}
		original := len(ch.Entries)
		for i := len(at) - 1; i >= 0; i-- {
			e := &ch.Entries[at[i]]
			ne := fbc.ChannelEntry{Name: sub.Name, Replaces: e.Replaces, Skips: append(slices.Clone(e.Skips), s.Base), SkipRange: e.SkipRange}
			e.Replaces, e.Skips, e.SkipRange = "", nil, ""
			ch.Entries = append(ch.Entries, ne)
		}
		for j := 0; j < original; j++ {
			e := &ch.Entries[j]
			switch {
			case e.Replaces == s.Base:
				e.Replaces = sub.Name
				e.Skips = append(e.Skips, s.Base)
			case slices.Contains(e.Skips, s.Base):
				e.Skips = append(e.Skips, sub.Name)
				e.Skips = slices.DeleteFunc(e.Skips, func(x string) bool { return x == s.Base })
			}
		}
	}
	nb := *sub
	nb.Pos = fbc.Position{File: d.Source, Line: d.Line(s.path)}
	c.Bundles = append(c.Bundles, nb)
	if err := invalid(c); err != nil {
		return d.Errorf(s.path, "substituting %s for %s gives an invalid catalog: %v", s.Name, s.Base, err)
	}
	return nil
}

func someBundle(c *fbc.Catalog) string {
	if len(c.Bundles) == 0 {
		return "op.v1.0.0"
	}
	return c.Bundles[0].Name
}

// invalid is the catalog's validation errors, joined; nil when valid.
func invalid(c *fbc.Catalog) error {
	var msgs []string
	for _, f := range fbc.Validate(c) {
		if f.Severity != validate.Error {
			continue
		}
		m := f.Message
		if f.File != "" {
			m = fmt.Sprintf("%s:%d: %s", f.File, f.Line, m)
		}
		msgs = append(msgs, m)
	}
	if len(msgs) == 0 {
		return nil
	}
	return fmt.Errorf("%s", strings.Join(msgs, "; "))
}

// versionOf is a bundle's version and release from its olm.package
// property. A bundle without a release whose CSV names what it substitutes
// for (olm.substitutesFor), and whose version carries build metadata,
// takes the build metadata as its release: the older way of releasing.
func versionOf(b *fbc.Bundle) (index.Version, error) {
	var pv *fbc.PackageValue
	for _, p := range b.Properties {
		if p.Type != fbc.PropertyPackage {
			continue
		}
		if pv != nil {
			return index.Version{}, fmt.Errorf("bundle %s has more than one olm.package property", b.Name)
		}
		pv = &fbc.PackageValue{}
		if err := json.Unmarshal(p.Value, pv); err != nil {
			return index.Version{}, fmt.Errorf("bundle %s: olm.package property: %v", b.Name, err)
		}
	}
	if pv == nil {
		return index.Version{}, fmt.Errorf("bundle %s has no olm.package property (its version)", b.Name)
	}
	version, release := pv.Version, pv.Release
	if release == "" && strings.Contains(version, "+") && substitutesFor(b) {
		i := strings.Index(version, "+")
		version, release = version[:i], version[i+1:]
	}
	v, err := index.ParseVersion(version, release)
	if err != nil {
		return index.Version{}, fmt.Errorf("bundle %s: %v", b.Name, err)
	}
	return v, nil
}

// substitutesFor reports whether the bundle's CSV has an
// olm.substitutesFor annotation (in olm.csv.metadata or the CSV among its
// olm.bundle.object manifests).
func substitutesFor(b *fbc.Bundle) bool {
	const key = "olm.substitutesFor"
	for _, p := range b.Properties {
		switch p.Type {
		case fbc.PropertyCSVMetadata:
			var m struct {
				Annotations map[string]string `json:"annotations"`
			}
			if json.Unmarshal(p.Value, &m) == nil && m.Annotations[key] != "" {
				return true
			}
		case fbc.PropertyBundleObject:
			var o fbc.BundleObjectValue
			if json.Unmarshal(p.Value, &o) != nil {
				continue
			}
			var obj struct {
				Kind     string `json:"kind"`
				Metadata struct {
					Annotations map[string]string `json:"annotations"`
				} `json:"metadata"`
			}
			if json.Unmarshal(o.Data, &obj) == nil && obj.Kind == "ClusterServiceVersion" {
				return obj.Metadata.Annotations[key] != ""
			}
		}
	}
	return false
}

// Data is a substitutes template as written: schema, entries,
// substitutions.
type Data struct {
	Schema        string         `json:"schema"`
	Entries       []any          `json:"entries"`
	Substitutions []Substitution `json:"substitutions"`
}

// Convert is the substitutes template of a catalog: every blob as it is,
// and no substitutions yet.
func Convert(blobs []any) *Data {
	if blobs == nil {
		blobs = []any{}
	}
	return &Data{Schema: template.SchemaSubstitutes, Entries: blobs, Substitutions: []Substitution{}}
}
