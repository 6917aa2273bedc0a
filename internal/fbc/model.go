// Package fbc holds file-based catalogs (FBC, what OLM v1 reads): the model,
// loading a catalog directory, writing it the way upstream opm prints it,
// converting sqlite index databases to it and back, rendering a bundle to a
// catalog blob, and validating a catalog.
package fbc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
)

// Schemas of the blobs opm reads.
const (
	SchemaPackage      = "olm.package"
	SchemaChannel      = "olm.channel"
	SchemaBundle       = "olm.bundle"
	SchemaDeprecations = "olm.deprecations"
)

// Property types.
const (
	PropertyPackage         = "olm.package"
	PropertyGVK             = "olm.gvk"
	PropertyGVKRequired     = "olm.gvk.required"
	PropertyPackageRequired = "olm.package.required"
	PropertyLabel           = "olm.label"
	PropertyLabelRequired   = "olm.label.required"
	PropertyConstraint      = "olm.constraint"
	PropertyBundleObject    = "olm.bundle.object"
	PropertyCSVMetadata     = "olm.csv.metadata"
)

// Catalog is a file-based catalog: its blobs by schema. Blobs of other
// schemas are kept as they are in Others.
type Catalog struct {
	Packages []Package
	Channels []Channel
	Bundles  []Bundle
	Others   []Meta
	// Ignored lists files Load skipped because they are neither JSON nor
	// YAML (by extension); .indexignore'd files are not listed.
	Ignored []string `json:"-"`
}

// Position is where a blob starts: its file (slash-separated, relative to
// the catalog root) and line. Zero for blobs that were not loaded.
type Position struct {
	File string
	Line int
}

// Package is an olm.package blob.
type Package struct {
	Schema         string     `json:"schema"`
	Name           string     `json:"name"`
	DefaultChannel string     `json:"defaultChannel"`
	Icon           *Icon      `json:"icon,omitempty"`
	Description    string     `json:"description,omitempty"`
	Properties     []Property `json:"properties,omitempty"`
	Pos            Position   `json:"-"`
}

// Icon is a package icon; Data is the image itself (base64 in JSON).
type Icon struct {
	Data      []byte `json:"base64data"`
	MediaType string `json:"mediatype"`
}

// Channel is an olm.channel blob.
type Channel struct {
	Schema     string         `json:"schema"`
	Name       string         `json:"name"`
	Package    string         `json:"package"`
	Entries    []ChannelEntry `json:"entries"`
	Properties []Property     `json:"properties,omitempty"`
	Pos        Position       `json:"-"`
}

// ChannelEntry is one bundle of a channel and its upgrade edges.
type ChannelEntry struct {
	Name      string   `json:"name"`
	Replaces  string   `json:"replaces,omitempty"`
	Skips     []string `json:"skips,omitempty"`
	SkipRange string   `json:"skipRange,omitempty"`
}

// Bundle is an olm.bundle blob.
type Bundle struct {
	Schema        string         `json:"schema"`
	Name          string         `json:"name"`
	Package       string         `json:"package"`
	Image         string         `json:"image"`
	Properties    []Property     `json:"properties,omitempty"`
	RelatedImages []RelatedImage `json:"relatedImages,omitempty"`
	Pos           Position       `json:"-"`
	// CSV is the bundle's ClusterServiceVersion as JSON when the blob was
	// rendered from a bundle (RenderBundle), whatever the migrate level;
	// templates read the package's description and icon from it. Never
	// written: it is not part of the blob.
	CSV json.RawMessage `json:"-"`
}

// Property is a typed value of a bundle (or package, channel). Value is
// JSON, kept as given (compacted) so that key order survives a round trip.
type Property struct {
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
}

// RelatedImage is an image a bundle uses.
type RelatedImage struct {
	Name  string `json:"name"`
	Image string `json:"image"`
}

// Meta is a blob of another schema (olm.deprecations, or one opm does not
// know), kept verbatim.
type Meta struct {
	Schema  string
	Package string
	Name    string
	Blob    json.RawMessage
	Pos     Position
}

// MarshalJSON writes the blob as it was read.
func (m Meta) MarshalJSON() ([]byte, error) { return m.Blob, nil }

// Property values, as typed structs; field order is the JSON key order
// upstream writes.

// PackageValue is the value of olm.package.
type PackageValue struct {
	PackageName string `json:"packageName"`
	Version     string `json:"version"`
	Release     string `json:"release,omitempty"`
}

// GVKValue is the value of olm.gvk and olm.gvk.required.
type GVKValue struct {
	Group   string `json:"group"`
	Kind    string `json:"kind"`
	Version string `json:"version"`
}

// PackageRequiredValue is the value of olm.package.required.
type PackageRequiredValue struct {
	PackageName  string `json:"packageName"`
	VersionRange string `json:"versionRange"`
}

// LabelValue is the value of olm.label and olm.label.required.
type LabelValue struct {
	Label string `json:"label"`
}

// BundleObjectValue is the value of olm.bundle.object: one manifest.
type BundleObjectValue struct {
	Data []byte `json:"data"`
	// Ref names a file beside the catalog file instead of Data; opm does
	// not read such references (Validate and ToIndex say so).
	Ref string `json:"ref,omitempty"`
}

func mustProperty(typ string, v any) Property {
	j, err := marshal(v)
	if err != nil {
		panic("fbc: property " + typ + ": " + err.Error())
	}
	return Property{Type: typ, Value: j}
}

// marshal is json.Marshal without HTML escaping: upstream writes every
// catalog value with `<`, `>` and `&` as they are (a versionRange such as
// "<=1.0" stays readable), and catalog repositories diff the bytes.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// PackageNames lists every package named by a blob, sorted.
func (c *Catalog) PackageNames() []string {
	seen := map[string]bool{}
	for _, p := range c.Packages {
		seen[p.Name] = true
	}
	for _, ch := range c.Channels {
		seen[ch.Package] = true
	}
	for _, b := range c.Bundles {
		seen[b.Package] = true
	}
	for _, o := range c.Others {
		seen[o.Package] = true
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// CheckPackage is nil when the catalog has an olm.package blob named name
// (or name is "", which asks for no package in particular): the check of
// a --package flag, its error naming the packages there are.
func (c *Catalog) CheckPackage(name string) error {
	if name == "" {
		return nil
	}
	var names []string
	for _, p := range c.Packages {
		if p.Name == name {
			return nil
		}
		names = append(names, p.Name)
	}
	sort.Strings(names)
	has := "no package"
	if len(names) > 0 {
		has = listSome(names)
	}
	return fmt.Errorf("package %q not found (the catalog has %s)", name, has)
}

// ResolvePackage is the package a --package flag names: name when the
// catalog has it, or, when name is empty, the catalog's one package (an
// error naming them when there are several).
func (c *Catalog) ResolvePackage(name string) (string, error) {
	if name != "" {
		return name, c.CheckPackage(name)
	}
	names := c.PackageNames()
	switch len(names) {
	case 1:
		return names[0], nil
	case 0:
		return "", fmt.Errorf("the catalog has no package")
	}
	return "", fmt.Errorf("the catalog has %d packages (%s): say which with --package", len(names), listSome(names))
}

// Package returns the catalog's blobs of one package.
func (c *Catalog) Package(name string) *Catalog {
	out := &Catalog{}
	for _, p := range c.Packages {
		if p.Name == name {
			out.Packages = append(out.Packages, p)
		}
	}
	for _, ch := range c.Channels {
		if ch.Package == name {
			out.Channels = append(out.Channels, ch)
		}
	}
	for _, b := range c.Bundles {
		if b.Package == name {
			out.Bundles = append(out.Bundles, b)
		}
	}
	for _, o := range c.Others {
		if o.Package == name {
			out.Others = append(out.Others, o)
		}
	}
	return out
}

// Merge appends other's blobs to c.
func (c *Catalog) Merge(other *Catalog) {
	c.Packages = append(c.Packages, other.Packages...)
	c.Channels = append(c.Channels, other.Channels...)
	c.Bundles = append(c.Bundles, other.Bundles...)
	c.Others = append(c.Others, other.Others...)
}
