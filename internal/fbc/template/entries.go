package template

import (
	"encoding/json"
	"fmt"

	"github.com/opmkit/opm/internal/fbc"
)

// Fields of the blobs opm knows, for refusing the unknown ones in a
// template (a typo there would otherwise vanish from the rendered catalog).
var blobFields = map[string][]string{
	fbc.SchemaPackage:      {"schema", "name", "defaultChannel", "icon", "description", "properties"},
	fbc.SchemaChannel:      {"schema", "name", "package", "entries", "properties"},
	fbc.SchemaBundle:       {"schema", "name", "package", "image", "properties", "relatedImages"},
	fbc.SchemaDeprecations: {"schema", "package", "entries"},
}

// Fields of the objects inside those blobs, by the key holding them.
var innerFields = map[string]map[string][]string{
	fbc.SchemaPackage:      {"icon": {"base64data", "mediatype"}, "properties": {"type", "value"}},
	fbc.SchemaChannel:      {"entries": {"name", "replaces", "skips", "skipRange"}, "properties": {"type", "value"}},
	fbc.SchemaBundle:       {"relatedImages": {"name", "image"}, "properties": {"type", "value"}},
	fbc.SchemaDeprecations: {"entries": {"reference", "message"}},
}

// deprecation is olm.deprecations in upstream's field order, which its
// catalog writer uses for these blobs.
type deprecation struct {
	Schema  string             `json:"schema"`
	Package string             `json:"package"`
	Entries []deprecationEntry `json:"entries"`
}

type deprecationEntry struct {
	Reference struct {
		Schema string `json:"schema"`
		Name   string `json:"name,omitempty"`
	} `json:"reference"`
	Message string `json:"message"`
}

// Blob checks the catalog blob v at path (an item of a template's entries)
// and adds it to c, positioned at its line. Unknown fields of olm.package,
// olm.channel, olm.bundle and olm.deprecations blobs are refused; blobs of
// other schemas are kept whole. Objects are written with sorted keys and
// olm.deprecations in upstream's field order, as upstream renders them.
func (d *Document) Blob(c *fbc.Catalog, path string, v any) error {
	m, err := d.Object(path, v)
	if err != nil {
		return err
	}
	schema, err := d.String(path, m, "schema")
	if err != nil {
		return err
	}
	if schema == "" {
		return d.Errorf(Join(path, "schema"), "missing: every entry is a catalog blob with a schema (olm.package, olm.channel, olm.bundle, olm.deprecations, or one of your own)")
	}
	if known, ok := blobFields[schema]; ok {
		if err := d.CheckFields(path, m, known...); err != nil {
			return err
		}
		for key, fields := range innerFields[schema] {
			if err := d.checkInner(Join(path, key), m[key], fields); err != nil {
				return err
			}
		}
		if schema == fbc.SchemaDeprecations {
			if err := d.checkReferences(path, m); err != nil {
				return err
			}
		}
	}
	raw, err := Marshal(m)
	if err != nil {
		return d.Errorf(path, "%v", err)
	}
	if schema == fbc.SchemaDeprecations {
		var dep deprecation
		if err := json.Unmarshal(raw, &dep); err != nil {
			return d.typeError(path, schema, err)
		}
		if raw, err = Marshal(dep); err != nil {
			return d.Errorf(path, "%v", err)
		}
	}
	part := &fbc.Catalog{}
	if err := part.LoadFile("entry.json", raw); err != nil {
		return d.typeError(path, schema, err)
	}
	pos := fbc.Position{File: d.Source, Line: d.Line(path)}
	for i := range part.Packages {
		part.Packages[i].Pos = pos
	}
	for i := range part.Channels {
		part.Channels[i].Pos = pos
	}
	for i := range part.Bundles {
		part.Bundles[i].Pos = pos
	}
	for i := range part.Others {
		part.Others[i].Pos = pos
	}
	c.Merge(part)
	return nil
}

// checkInner checks the objects at path (one object, or a list of them)
// for unknown fields.
func (d *Document) checkInner(path string, v any, fields []string) error {
	switch x := v.(type) {
	case map[string]any:
		return d.CheckFields(path, x, fields...)
	case []any:
		for i, item := range x {
			if m, ok := item.(map[string]any); ok {
				if err := d.CheckFields(Index(path, i), m, fields...); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (d *Document) checkReferences(path string, m map[string]any) error {
	entries, _ := m["entries"].([]any)
	for i, e := range entries {
		em, _ := e.(map[string]any)
		if ref, ok := em["reference"].(map[string]any); ok {
			if err := d.CheckFields(Join(Index(Join(path, "entries"), i), "reference"), ref, "schema", "name"); err != nil {
				return err
			}
		}
	}
	return nil
}

// typeError turns a blob's decoding error into one naming its field.
func (d *Document) typeError(path, schema string, err error) error {
	var te *json.UnmarshalTypeError
	if ok := asTypeError(err, &te); ok && te.Field != "" {
		return d.Errorf(Join(path, te.Field), "%s blob: must be %s, not %s", schema, te.Type.String(), te.Value)
	}
	if le, ok := err.(*fbc.LoadError); ok {
		return d.Errorf(path, "%s", le.Msg)
	}
	return d.Errorf(path, "%s blob: %v", schema, err)
}

func asTypeError(err error, te **json.UnmarshalTypeError) bool {
	for err != nil {
		if t, ok := err.(*json.UnmarshalTypeError); ok {
			*te = t
			return true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			if j, ok := err.(interface{ Unwrap() []error }); ok {
				for _, e := range j.Unwrap() {
					if asTypeError(e, te) {
						return true
					}
				}
			}
			return false
		}
		err = u.Unwrap()
	}
	return false
}

// Unexpected is the message for a field a template does not take there.
func Unexpected(field, why string) string {
	return fmt.Sprintf("%s is not taken here: %s", field, why)
}
