// Package basic is the basic catalog template (schema olm.template.basic):
// a file-based catalog whose olm.bundle blobs give only the bundle's image,
// rendered by pulling each image. Convert goes the other way, from a
// catalog to the template that renders it.
package basic

import (
	"context"
	"errors"
	"fmt"

	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbc/template"
)

// Options control Render.
type Options struct {
	// RenderBundle renders each bundle image the template names.
	RenderBundle template.RenderBundle
	// Source names the template file in errors.
	Source string
}

// Template is a parsed basic template: its catalog blobs other than
// bundles, and the bundles by image.
type Template struct {
	doc     *template.Document
	catalog *fbc.Catalog
	bundles []bundleEntry
}

type bundleEntry struct {
	path  string // entries[i]
	image string
}

// Parse reads a basic template, refusing unknown fields: the top level has
// schema and entries; each entry is a catalog blob; an olm.bundle entry
// gives its image and nothing the image provides (package, properties,
// related images).
func Parse(source string, data []byte) (*Template, error) {
	d, err := template.Parse(source, data)
	if err != nil {
		return nil, err
	}
	if err := d.CheckSchema(template.SchemaBasic); err != nil {
		return nil, err
	}
	if err := d.CheckFields("", d.Value, "schema", "entries"); err != nil {
		return nil, err
	}
	entries, err := d.List("", d.Value, "entries")
	if err != nil {
		return nil, err
	}
	t := &Template{doc: d, catalog: &fbc.Catalog{}}
	for i, e := range entries {
		path := template.Index("entries", i)
		m, err := d.Object(path, e)
		if err != nil {
			return nil, err
		}
		if m["schema"] != fbc.SchemaBundle {
			if err := d.Blob(t.catalog, path, e); err != nil {
				return nil, err
			}
			continue
		}
		// name is accepted, as upstream accepts it; the image's bundle
		// name replaces it.
		for _, f := range []string{"package", "properties", "relatedImages"} {
			if _, ok := m[f]; ok {
				return nil, d.Errorf(template.Join(path, f), "a basic template's olm.bundle entry gives only its image; the image provides %s (remove it)", f)
			}
		}
		if err := d.CheckFields(path, m, "schema", "image", "name"); err != nil {
			return nil, err
		}
		image, err := d.String(path, m, "image")
		if err != nil {
			return nil, err
		}
		if image == "" {
			return nil, d.Errorf(template.Join(path, "image"), "missing: an olm.bundle entry names its bundle image (image: quay.io/me/op-bundle:v1.0.0)")
		}
		t.bundles = append(t.bundles, bundleEntry{path: path, image: image})
	}
	return t, nil
}

// Images are the bundle images the template names, in order.
func (t *Template) Images() []string {
	out := make([]string, len(t.bundles))
	for i, b := range t.bundles {
		out[i] = b.image
	}
	return out
}

// Render expands a basic template into a catalog: its blobs as given, each
// olm.bundle entry replaced by the blob of the bundle its image holds. A
// bundle that cannot be rendered is an error naming its entry; every such
// entry is reported.
func Render(ctx context.Context, data []byte, opts Options) (*fbc.Catalog, error) {
	t, err := Parse(opts.Source, data)
	if err != nil {
		return nil, err
	}
	return t.Render(ctx, opts.RenderBundle)
}

// Render expands the parsed template (see the function Render).
func (t *Template) Render(ctx context.Context, render template.RenderBundle) (*fbc.Catalog, error) {
	out := &fbc.Catalog{}
	out.Merge(t.catalog)
	var errs []error
	type origin struct {
		line  int
		image string
	}
	seen := map[[2]string]origin{}
	for _, b := range t.bundles {
		blob, err := render(ctx, b.image)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err != nil {
			errs = append(errs, t.doc.Errorf(template.Join(b.path, "image"), "bundle image %s: %v", b.image, err))
			continue
		}
		bb := *blob
		bb.Pos = fbc.Position{File: t.doc.Source, Line: t.doc.Line(b.path)}
		// The same bundle twice (one image listed twice, or two tags of
		// it) would make a catalog that does not validate.
		key := [2]string{bb.Package, bb.Name}
		if first, dup := seen[key]; dup {
			errs = append(errs, t.doc.Errorf(template.Join(b.path, "image"), "bundle image %s: holds bundle %s of package %s, which line %d (%s) gives already; keep one of the entries", b.image, bb.Name, bb.Package, first.line, first.image))
			continue
		}
		seen[key] = origin{line: bb.Pos.Line, image: b.image}
		out.Bundles = append(out.Bundles, bb)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// Convert is the basic template of a catalog: every blob as it is, but
// each olm.bundle blob cut to its schema and image. blobs is the catalog's
// blobs in file order, each compact JSON with its schema.
func Convert(blobs []Blob) (*Data, error) {
	d := &Data{Schema: template.SchemaBasic, Entries: []any{}}
	for _, b := range blobs {
		if b.Schema != fbc.SchemaBundle {
			d.Entries = append(d.Entries, b.Value)
			continue
		}
		m, ok := b.Value.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("an olm.bundle blob is not an object")
		}
		img, _ := m["image"].(string)
		// upstream keeps the image field even when it is empty.
		d.Entries = append(d.Entries, bundleRef{Schema: fbc.SchemaBundle, Image: img})
	}
	return d, nil
}

// Blob is one catalog blob read for conversion.
type Blob struct {
	Schema string
	// Value is the blob as JSON values (objects as map[string]any).
	Value any
}

// Data is a basic template as written: schema, then entries.
type Data struct {
	Schema  string `json:"schema"`
	Entries []any  `json:"entries"`
}

type bundleRef struct {
	Schema string `json:"schema"`
	Image  string `json:"image"`
}
