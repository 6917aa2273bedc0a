package fbc

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/index"
	"github.com/opmkit/opm/internal/rawjson"
)

// MigrateLevel says how much a rendered bundle is rewritten.
type MigrateLevel string

// Migrate levels (upstream's --migrate-level).
const (
	// MigrateNone keeps each manifest as an olm.bundle.object property.
	MigrateNone MigrateLevel = "none"
	// MigrateCSVMetadata replaces the olm.bundle.object properties by one
	// olm.csv.metadata property summarising the CSV.
	MigrateCSVMetadata MigrateLevel = "bundle-object-to-csv-metadata"
)

// ParseMigrateLevel accepts "", "none" or "bundle-object-to-csv-metadata".
func ParseMigrateLevel(s string) (MigrateLevel, error) {
	switch MigrateLevel(s) {
	case "", MigrateNone:
		return MigrateNone, nil
	case MigrateCSVMetadata:
		return MigrateCSVMetadata, nil
	}
	return "", fmt.Errorf("unknown migrate level %q: use none or %s", s, MigrateCSVMetadata)
}

// RenderOptions control how bundles become olm.bundle blobs.
type RenderOptions struct {
	Migrate MigrateLevel
	// ImageOrder, when true, orders a bundle image's blob as upstream's
	// render of a bundle image does (templates, whose output is compared
	// with upstream's byte for byte): every property sorted by type then
	// value, olm.bundle.object among them, and olm.csv.metadata last; the
	// related images are the CSV's spec.relatedImages as written, then the
	// bundle image, then the other images the bundle uses, sorted
	// (upstream's order for these is a map's, so any order is upstream's).
	// By default the blob is ordered as in a rendered index.
	ImageOrder bool
}

// RenderBundle renders one bundle to its olm.bundle blob, exactly as the
// same bundle shows in FromIndex after `index add`: image is the bundle's
// image reference (stored as its bundle path); "" for a bundle from a
// directory, which then is not listed among its related images.
func RenderBundle(b *bundle.Bundle, image string, opts RenderOptions) (*Bundle, error) {
	c, err := index.ContentOf(index.LoadedBundle{Bundle: b, BundlePath: image, Local: image == ""})
	if err != nil {
		return nil, fmt.Errorf("render bundle %s: %w", image, err)
	}
	blob, err := bundleBlob(c, opts)
	if err != nil {
		return nil, fmt.Errorf("render bundle %s: %w", image, err)
	}
	blob.CSV = c.CSV
	return blob, nil
}

// bundleBlob turns a bundle's index content into its olm.bundle blob, with
// upstream's rules for rendering a sqlite index: properties deduplicated and
// sorted by type then value, olm.gvk rebuilt for every provided API,
// dependencies as olm.gvk.required / olm.package.required, an olm.package
// when none is stored; then one olm.bundle.object per manifest, sorted by
// value; related images sorted by image, named after the CSV's relatedImages.
func bundleBlob(c *index.BundleContent, opts RenderOptions) (*Bundle, error) {
	b := &Bundle{Schema: SchemaBundle, Name: c.Name, Package: c.Package, Image: c.BundlePath}
	set := propSet{semantic: true}
	gvks := map[GVKValue]bool{}
	gvksReq := map[GVKValue]bool{}
	hasPackage := false
	for _, p := range c.Properties {
		switch p.Type {
		case PropertyGVK:
			var v GVKValue
			if err := json.Unmarshal(p.Value, &v); err != nil {
				return nil, fmt.Errorf("bundle %s: property olm.gvk %s: %w", c.Name, p.Value, err)
			}
			gvks[v] = true
		case PropertyPackage:
			hasPackage = true
			set.add(p.Type, withRelease(p.Value, c.Release))
		default:
			set.add(p.Type, p.Value)
		}
	}
	for _, d := range c.Dependencies {
		switch d.Type {
		case PropertyGVK:
			var v GVKValue
			if err := json.Unmarshal(d.Value, &v); err != nil {
				return nil, fmt.Errorf("bundle %s: dependency olm.gvk %s: %w", c.Name, d.Value, err)
			}
			gvksReq[v] = true
		case PropertyPackage:
			var v PackageValue
			if err := json.Unmarshal(d.Value, &v); err != nil {
				return nil, fmt.Errorf("bundle %s: dependency olm.package %s: %w", c.Name, d.Value, err)
			}
			set.addValue(PropertyPackageRequired, PackageRequiredValue{PackageName: v.PackageName, VersionRange: v.Version})
		case PropertyLabel:
			var v LabelValue
			if err := json.Unmarshal(d.Value, &v); err != nil {
				return nil, fmt.Errorf("bundle %s: dependency olm.label %s: %w", c.Name, d.Value, err)
			}
			set.addValue(PropertyLabelRequired, v)
		default:
			set.add(d.Type, d.Value)
		}
	}
	if !hasPackage {
		// The release (CSV spec.release) is part of the bundle's version,
		// as upstream renders it.
		set.addValue(PropertyPackage, PackageValue{PackageName: c.Package, Version: c.Version, Release: c.Release})
	}
	for _, a := range c.Provided {
		gvks[GVKValue{Group: a.Group, Kind: a.Kind, Version: a.Version}] = true
	}
	for _, a := range c.Required {
		gvksReq[GVKValue{Group: a.Group, Kind: a.Kind, Version: a.Version}] = true
	}
	for v := range gvks {
		set.addValue(PropertyGVK, v)
	}
	for v := range gvksReq {
		set.addValue(PropertyGVKRequired, v)
	}
	if opts.Migrate == MigrateCSVMetadata {
		if len(c.CSV) > 0 {
			m, err := csvMetadata(c.CSV)
			if err != nil {
				return nil, fmt.Errorf("bundle %s: %w", c.Name, err)
			}
			set.add(PropertyCSVMetadata, m)
		}
	}
	b.Properties = set.sorted()
	if opts.Migrate != MigrateCSVMetadata {
		objs := propSet{}
		for _, o := range c.Objects {
			objs.addCompact(PropertyBundleObject, bundleObjectValue(o))
		}
		b.Properties = append(b.Properties, objs.sorted()...)
	}

	if opts.ImageOrder {
		b.Properties = upstreamPropertyOrder(b.Properties)
		b.RelatedImages = upstreamImageOrder(csvRelatedImages(c.CSV), c.BundlePath, c.Images)
		return b, nil
	}
	b.RelatedImages = relatedImagesOf(c.CSV, c.Images)
	return b, nil
}

// relatedImagesOf are a bundle's related images as a render of the index
// gives them: its images once each, sorted by image, named after the CSV's
// relatedImages (unnamed when the CSV does not name them).
func relatedImagesOf(csvJSON []byte, images []string) []RelatedImage {
	return namedImages(csvRelatedImages(csvJSON), images)
}

// csvRelatedImages is the CSV's spec.relatedImages as written.
func csvRelatedImages(csvJSON []byte) []RelatedImage {
	if ri, ok := csvRelatedImagesFast(csvJSON); ok {
		return ri
	}
	var csv struct {
		Spec struct {
			RelatedImages []RelatedImage `json:"relatedImages"`
		} `json:"spec"`
	}
	if len(csvJSON) > 0 {
		_ = json.Unmarshal(csvJSON, &csv) // a CSV that is not JSON names nothing
	}
	return csv.Spec.RelatedImages
}

// namedImages is relatedImagesOf given the CSV's relatedImages.
func namedImages(csvImages []RelatedImage, images []string) []RelatedImage {
	names := map[string]string{}
	for _, ri := range csvImages {
		if _, ok := names[ri.Image]; !ok {
			names[ri.Image] = ri.Name
		}
	}
	var out []RelatedImage
	seen := map[string]bool{}
	for _, img := range images {
		if img == "" || seen[img] {
			continue
		}
		seen[img] = true
		out = append(out, RelatedImage{Name: names[img], Image: img})
	}
	sort.Slice(out, func(i, j int) bool {
		x, y := out[i], out[j]
		if x.Image != y.Image {
			return x.Image < y.Image
		}
		return x.Name < y.Name
	})
	return out
}

// upstreamPropertyOrder sorts properties by type then value, but for an
// olm.csv.metadata property, which upstream's migration appends last.
func upstreamPropertyOrder(ps []Property) []Property {
	out := make([]Property, 0, len(ps))
	var meta []Property
	for _, p := range ps {
		if p.Type == PropertyCSVMetadata {
			meta = append(meta, p)
			continue
		}
		out = append(out, p)
	}
	sortProperties(out)
	return append(out, meta...)
}

// upstreamImageOrder lists related images as upstream renders a bundle
// image: the CSV's list as written (repeats kept), the bundle image, then
// the rest of images (sorted) that neither names.
func upstreamImageOrder(listed []RelatedImage, bundleImage string, images []string) []RelatedImage {
	out := append([]RelatedImage(nil), listed...)
	seen := map[string]bool{}
	for _, ri := range listed {
		seen[ri.Image] = true
	}
	if bundleImage != "" && !seen[bundleImage] {
		out = append(out, RelatedImage{Image: bundleImage})
	}
	seen[bundleImage] = true
	rest := make([]string, 0, len(images))
	for _, img := range images {
		if img != "" && !seen[img] {
			seen[img] = true
			rest = append(rest, img)
		}
	}
	sort.Strings(rest)
	for _, img := range rest {
		out = append(out, RelatedImage{Image: img})
	}
	return out
}

// withRelease adds release (CSV spec.release) to an olm.package value that
// has none: the release is part of the bundle's version, as upstream
// renders it.
func withRelease(value []byte, release string) []byte {
	if release == "" {
		return value
	}
	var v PackageValue
	if err := json.Unmarshal(value, &v); err != nil || v.Release != "" {
		return value
	}
	v.Release = release
	return mustProperty(PropertyPackage, v).Value
}

// propSet collects properties once each, by type and value: by compact
// value, or with semantic, a requirement by the value's meaning (object
// keys in any order), so that a requirement stored both as a property and
// as a dependency shows once, as the property says it.
type propSet struct {
	list     []Property
	seen     map[string]bool
	semantic bool
}

func (s *propSet) add(typ string, value []byte) {
	if bytes.ContainsAny(value, " \t\r\n") {
		if c, err := rawjson.Compact(value); err == nil {
			value = c
		}
	}
	// The value is kept as the database holds it (as `index add` stores
	// it, for a bundle rendered on its own), escapes included: upstream
	// writes such values verbatim, and json.Marshal stored <, > and & in
	// them as \u003c, \u003e and \u0026 (the values opm builds itself,
	// as upstream builds them, have no such escapes).
	s.addCompact(typ, value)
}

// addCompact is add for a value known to be compact JSON.
func (s *propSet) addCompact(typ string, value []byte) {
	k := typ + "\x00" + string(value)
	if s.semantic && requirement(typ) {
		k = typ + "\x00" + sameValue(value)
	}
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	if s.seen[k] {
		return
	}
	s.seen[k] = true
	s.list = append(s.list, Property{Type: typ, Value: value})
}

// requirement says whether a property type is one a database holds both
// as a property and as a dependency (and so may meet twice in a render).
func requirement(typ string) bool {
	switch typ {
	case PropertyGVKRequired, PropertyPackageRequired, PropertyLabelRequired, PropertyConstraint:
		return true
	}
	return false
}

// sameValue is the key under which value counts once in a semantic
// propSet: its canonical form (keys sorted, escapes normalized), or value
// itself when it is not JSON.
func sameValue(value []byte) string {
	c, err := rawjson.Canonical(value)
	if err != nil {
		return string(value)
	}
	return string(c)
}

func (s *propSet) addValue(typ string, v any) {
	p := mustProperty(typ, v)
	s.addCompact(p.Type, p.Value)
}

// bundleObjectValue is the olm.bundle.object value of one manifest, as
// json.Marshal(BundleObjectValue{Data: obj}) writes it, without the detour.
func bundleObjectValue(obj []byte) []byte {
	const head, tail = `{"data":"`, `"}`
	out := make([]byte, len(head)+base64.StdEncoding.EncodedLen(len(obj))+len(tail))
	copy(out, head)
	base64.StdEncoding.Encode(out[len(head):], obj)
	copy(out[len(out)-len(tail):], tail)
	return out
}

// decodeBundleObject decodes an olm.bundle.object value. The common shape,
// the one bundleObjectValue writes (and every value takes once loaded and
// compacted), is read directly: json.Unmarshal would scan the base64 twice
// before decoding it, the larger part of converting a catalog at start-up.
// Anything else (another key, an escape, a line break) takes
// json.Unmarshal, so the result and errors are the same.
func decodeBundleObject(raw []byte) (BundleObjectValue, error) {
	const head, tail = `{"data":"`, `"}`
	if len(raw) >= len(head)+len(tail) && bytes.HasPrefix(raw, []byte(head)) && bytes.HasSuffix(raw, []byte(tail)) {
		enc := raw[len(head) : len(raw)-len(tail)]
		// The decoder skips \r and \n, which in JSON would be escaped;
		// it refuses a quote or backslash (then encoding/json decides).
		if bytes.IndexByte(enc, '\n') < 0 && bytes.IndexByte(enc, '\r') < 0 {
			data := make([]byte, base64.StdEncoding.DecodedLen(len(enc)))
			n, err := base64.StdEncoding.Decode(data, enc)
			if err == nil {
				return BundleObjectValue{Data: data[:n]}, nil
			}
		}
	}
	var v BundleObjectValue
	err := json.Unmarshal(raw, &v)
	return v, err
}

// DecodeBundleObject decodes an olm.bundle.object property value: the
// manifest in Data, or a file reference in Ref.
func DecodeBundleObject(raw json.RawMessage) (BundleObjectValue, error) {
	return decodeBundleObject(raw)
}

// decodedObjects are olm.bundle.object values already decoded, by the raw
// value they were decoded from (the same bytes in memory, not equal
// ones): converting a package after validating it decodes each manifest
// once. A nil decodedObjects keeps nothing.
type decodedObjects map[rawKey]BundleObjectValue

type rawKey struct {
	first *byte
	n     int
}

// decode is decodeBundleObject, through d.
func (d decodedObjects) decode(raw []byte) (BundleObjectValue, error) {
	if d == nil || len(raw) == 0 {
		return decodeBundleObject(raw)
	}
	k := rawKey{&raw[0], len(raw)}
	if v, ok := d[k]; ok {
		return v, nil
	}
	v, err := decodeBundleObject(raw)
	if err == nil {
		d[k] = v
	}
	return v, err
}

func (s *propSet) sorted() []Property {
	sortProperties(s.list)
	return s.list
}

func sortProperties(ps []Property) {
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].Type != ps[j].Type {
			return ps[i].Type < ps[j].Type
		}
		return bytes.Compare(ps[i].Value, ps[j].Value) < 0
	})
}

// csvMetadata summarises a CSV as the olm.csv.metadata value: the CSV's
// annotations and the spec fields OLM shows before installing.
func csvMetadata(csvJSON []byte) ([]byte, error) {
	var csv map[string]any
	if err := json.Unmarshal(csvJSON, &csv); err != nil {
		return nil, fmt.Errorf("CSV is not JSON: %w", err)
	}
	spec := bundle.MapAt(csv, "spec")
	out := map[string]any{}
	if a := bundle.MapAt(csv, "metadata", "annotations"); len(a) > 0 {
		out["annotations"] = a
	}
	copyKey := func(from, to string) {
		if v, ok := spec[from]; ok && v != nil {
			out[to] = v
		}
	}
	copyKey("apiservicedefinitions", "apiServiceDefinitions")
	copyKey("customresourcedefinitions", "crdDescriptions")
	for _, k := range []string{"description", "displayName", "installModes", "keywords", "labels", "links", "maintainers", "maturity", "minKubeVersion", "nativeAPIs", "provider"} {
		copyKey(k, k)
	}
	return marshal(out)
}
