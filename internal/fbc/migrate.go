package fbc

import (
	"encoding/json"
	"fmt"

	"sigs.k8s.io/yaml"
)

// Migrate rewrites the bundles of a loaded catalog to level, as upstream's
// render and migrate do after reading any source. At
// bundle-object-to-csv-metadata, a bundle with an image and a CSV among its
// olm.bundle.object properties loses those properties and gains one
// olm.csv.metadata (appended after its other properties); a bundle that
// already has olm.csv.metadata, or has no image or no CSV, is left alone.
func Migrate(c *Catalog, level MigrateLevel) error {
	if level != MigrateCSVMetadata {
		return nil
	}
	for i := range c.Bundles {
		if err := migrateBundle(&c.Bundles[i]); err != nil {
			return err
		}
	}
	return nil
}

func migrateBundle(b *Bundle) error {
	if b.Image == "" {
		return nil
	}
	var csv []byte
	for _, p := range b.Properties {
		switch p.Type {
		case PropertyCSVMetadata:
			return nil
		case PropertyBundleObject:
			if csv != nil {
				continue
			}
			v, err := decodeBundleObject(p.Value)
			if err != nil || len(v.Data) == 0 {
				continue
			}
			j, err := yaml.YAMLToJSON(v.Data)
			if err != nil {
				continue
			}
			var head struct {
				Kind string `json:"kind"`
			}
			if json.Unmarshal(j, &head) == nil && head.Kind == "ClusterServiceVersion" {
				csv = j
			}
		}
	}
	if csv == nil {
		return nil
	}
	m, err := csvMetadata(csv)
	if err != nil {
		return fmt.Errorf("%s: bundle %s: %w", blobPlace(b.Pos), b.Name, err)
	}
	props := make([]Property, 0, len(b.Properties))
	for _, p := range b.Properties {
		if p.Type != PropertyBundleObject {
			props = append(props, p)
		}
	}
	b.Properties = append(props, Property{Type: PropertyCSVMetadata, Value: m})
	return nil
}

func blobPlace(p Position) string {
	if p.File == "" {
		return "catalog"
	}
	return fmt.Sprintf("%s:%d", p.File, p.Line)
}
