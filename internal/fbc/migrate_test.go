package fbc

import (
	"encoding/json"
	"testing"
)

// TestMigrateLoadedBundles: upstream's bundle-object-to-csv-metadata on a
// loaded catalog: manifests out, one olm.csv.metadata appended; bundles
// without an image, without a CSV or already migrated are left alone.
func TestMigrateLoadedBundles(t *testing.T) {
	csv := []byte(`{"apiVersion":"operators.coreos.com/v1alpha1","kind":"ClusterServiceVersion","metadata":{"name":"p.v1","annotations":{"a":"b"}},"spec":{"displayName":"P","version":"1.0.0"}}`)
	crd := []byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"xs.example.com"}}`)
	obj := func(data []byte) Property { return mustProperty(PropertyBundleObject, BundleObjectValue{Data: data}) }
	pkg := mustProperty(PropertyPackage, PackageValue{PackageName: "p", Version: "1.0.0"})
	c := &Catalog{Bundles: []Bundle{
		{Name: "migrated", Image: "r/p:1", Properties: []Property{pkg, obj(crd), obj(csv)}},
		{Name: "no-image", Properties: []Property{pkg, obj(csv)}},
		{Name: "no-csv", Image: "r/p:2", Properties: []Property{pkg, obj(crd)}},
		{Name: "already", Image: "r/p:3", Properties: []Property{pkg, obj(csv), {Type: PropertyCSVMetadata, Value: json.RawMessage(`{}`)}}},
	}}
	if err := Migrate(c, MigrateNone); err != nil || len(c.Bundles[0].Properties) != 3 {
		t.Fatalf("none changed something: %v", err)
	}
	if err := Migrate(c, MigrateCSVMetadata); err != nil {
		t.Fatal(err)
	}
	got := c.Bundles[0].Properties
	if len(got) != 2 || got[0].Type != PropertyPackage || got[1].Type != PropertyCSVMetadata {
		t.Fatalf("migrated properties %+v", got)
	}
	var meta map[string]any
	if err := json.Unmarshal(got[1].Value, &meta); err != nil || meta["displayName"] != "P" || meta["annotations"].(map[string]any)["a"] != "b" {
		t.Errorf("csv metadata %s (%v)", got[1].Value, err)
	}
	for _, b := range c.Bundles[1:] {
		if len(b.Properties) != 2+boolInt(b.Name == "already") {
			t.Errorf("%s changed: %+v", b.Name, b.Properties)
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
