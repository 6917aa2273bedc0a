package fbc

import (
	"bytes"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/opmkit/opm/internal/bundle"
)

// TestRenderRangeWithoutHTMLEscaping: a package requirement whose range
// holds "<=" (stored by json.Marshal as \u003c=) renders byte for byte as
// upstream renders it: upstream's render of the reference database with the
// same range, which differs from the reference render only in that range.
func TestRenderRangeWithoutHTMLEscaping(t *testing.T) {
	src := filepath.Join(sharedDir(t), "reference", "index", "pelorus-operator.replaces.db")
	ref, err := os.ReadFile(strings.TrimSuffix(src, ".db") + ".fbc.json")
	if err != nil {
		t.Fatal(err)
	}
	db := copyDB(t, src)
	conn, err := sql.Open("sqlite3", db)
	if err != nil {
		t.Fatal(err)
	}
	res, err := conn.Exec(`UPDATE dependencies SET value = replace(value, '"version":"4.8.0"', '"version":"\u003c=4.8.0"') WHERE type = 'olm.package'`)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		t.Fatal("no dependency on grafana-operator 4.8.0 in the reference database")
	}
	conn.Close()
	want := bytes.ReplaceAll(ref, []byte(`"versionRange": "4.8.0"`), []byte(`"versionRange": "<=4.8.0"`))
	c, _ := renderDB(t, db, RenderOptions{})
	var got bytes.Buffer
	if err := Write(&got, c, FormatJSON); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("render differs from upstream's: %s", firstDiff(got.Bytes(), want))
	}
	// And migrate's layout writes the same bytes.
	dir := filepath.Join(t.TempDir(), "catalog")
	if err := WriteDir(dir, c, WriteDirOptions{}); err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile(filepath.Join(dir, "pelorus-operator", "catalog.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(file, want) {
		t.Errorf("migrate differs from upstream's render: %s", firstDiff(file, want))
	}
}

// TestNoHTMLEscapingInOutput: values opm builds (CSV metadata) and values
// read from YAML keep <, > and & as they are, in JSON and YAML output.
func TestNoHTMLEscapingInOutput(t *testing.T) {
	c := &Catalog{}
	yml := `schema: olm.package
name: op
defaultChannel: stable
description: "a <b> & c"
---
schema: example.com.notes
package: op
note: "upgrade when x <= 2 && y > 3"
`
	if err := c.LoadFile("op/catalog.yaml", []byte(yml)); err != nil {
		t.Fatal(err)
	}
	m, err := csvMetadata([]byte(`{"spec":{"description":"<b>bold</b> & more"}}`))
	if err != nil {
		t.Fatal(err)
	}
	c.Bundles = append(c.Bundles, Bundle{Schema: SchemaBundle, Name: "op.v1.0.0", Package: "op", Image: "x",
		Properties: []Property{{Type: PropertyCSVMetadata, Value: m},
			mustProperty(PropertyPackageRequired, PackageRequiredValue{PackageName: "dep", VersionRange: ">=1.0.0 <2.0.0"})}})
	for _, f := range []Format{FormatJSON, FormatYAML} {
		var out bytes.Buffer
		if err := Write(&out, c, f); err != nil {
			t.Fatal(err)
		}
		s := out.String()
		if strings.Contains(s, `\u00`) {
			t.Errorf("%s output escapes HTML:\n%s", f, s)
		}
		for _, want := range []string{"a <b> & c", "x <= 2 && y > 3", "<b>bold</b> & more", ">=1.0.0 <2.0.0"} {
			if !strings.Contains(s, want) {
				t.Errorf("%s output lacks %q:\n%s", f, want, s)
			}
		}
	}
}

// TestRenderKeepsDatabaseEscapes: a property value the database holds
// with json.Marshal's escapes (\u003e, \u0026) is written verbatim, as
// upstream's render of a database wrote it; only the values upstream
// rebuilt (olm.package.required above) lose them.
func TestRenderKeepsDatabaseEscapes(t *testing.T) {
	src := filepath.Join(sharedDir(t), "reference", "index", "pelorus-operator.replaces.db")
	ref, err := os.ReadFile(strings.TrimSuffix(src, ".db") + ".fbc.json")
	if err != nil {
		t.Fatal(err)
	}
	db := copyDB(t, src)
	conn, err := sql.Open("sqlite3", db)
	if err != nil {
		t.Fatal(err)
	}
	const value = `{"cel":{"rule":"properties.exists(p, p.type == \"olm.x\") \u0026\u0026 true"},"failureMessage":"needs \u003e=1"}`
	if _, err := conn.Exec(`INSERT INTO properties(type, value, operatorbundle_name, operatorbundle_version, operatorbundle_path)
		SELECT 'olm.constraint', ?, name, version, bundlepath FROM operatorbundle WHERE name = 'pelorus-operator.v0.0.1'`, value); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	const block = `
        {
            "type": "olm.constraint",
            "value": {
                "cel": {
                    "rule": "properties.exists(p, p.type == \"olm.x\") \u0026\u0026 true"
                },
                "failureMessage": "needs \u003e=1"
            }
        },`
	at := bytes.Index(ref, []byte(`"name": "pelorus-operator.v0.0.1",`))
	if at < 0 {
		t.Fatal("no blob of pelorus-operator.v0.0.1 in the reference render")
	}
	at += bytes.Index(ref[at:], []byte(`"properties": [`)) + len(`"properties": [`)
	want := append(append(append([]byte(nil), ref[:at]...), block...), ref[at:]...)
	c, _ := renderDB(t, db, RenderOptions{})
	var got bytes.Buffer
	if err := Write(&got, c, FormatJSON); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("render differs from upstream's: %s", firstDiff(got.Bytes(), want))
	}
}

// TestLoadCanonicalizesPropertyValues: upstream re-encodes every blob it
// reads (keys sorted, no HTML escaping, U+2028 escaped, other escapes
// resolved), so a property value of a catalog renders the same whatever
// escapes or key order it was written with, in JSON or YAML.
func TestLoadCanonicalizesPropertyValues(t *testing.T) {
	const blob = `{"schema":"olm.bundle","name":"op.v1.0.0","package":"op","image":"x","properties":[` +
		`{"type":"olm.package.required","value":{"versionRange":"\u003e=1.0.0 \u003c2.0.0","packageName":"b"}},` +
		`{"type":"olm.constraint","value":{"failureMessage":"\u00e4 \/ \u0026 \u001F \u000a \u2028 \u2029 ` + "\u2028" + `","cel":{"rule":"true"}}},` +
		`{"type":"olm.package","value":{"packageName":"op","version":"1.0.0"}}]}`
	const want = `{
    "schema": "olm.bundle",
    "name": "op.v1.0.0",
    "package": "op",
    "image": "x",
    "properties": [
        {
            "type": "olm.package.required",
            "value": {
                "packageName": "b",
                "versionRange": ">=1.0.0 <2.0.0"
            }
        },
        {
            "type": "olm.constraint",
            "value": {
                "cel": {
                    "rule": "true"
                },
                "failureMessage": "ä / & \u001f \n \u2028 \u2029 \u2028"
            }
        },
        {
            "type": "olm.package",
            "value": {
                "packageName": "op",
                "version": "1.0.0"
            }
        }
    ]
}
`
	for name, text := range map[string]string{
		"op/catalog.json": blob,
		// YAML has no \/ escape, and folds a line break (U+2028) in a
		// quoted string.
		"op/catalog.yaml": strings.NewReplacer(`\/`, "/", "\u2028\"", `\u2028"`).Replace(blob),
	} {
		c := &Catalog{}
		if err := c.LoadFile(name, []byte(text)); err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := Write(&got, c, FormatJSON); err != nil {
			t.Fatal(err)
		}
		if got.String() != want {
			t.Errorf("%s: got\n%s", name, got.String())
		}
	}
}

// TestRenderBundleEscapes: a bundle renders as upstream renders it. The
// values upstream takes from the metadata files as they are (converted
// from YAML by json.Marshal: keys sorted, <, > and & escaped) keep those
// escapes; the ones it builds itself (olm.package.required from an
// olm.package dependency, olm.package, olm.gvk) have none.
func TestRenderBundleEscapes(t *testing.T) {
	fsys := fstest.MapFS{
		"manifests/csv.yaml": {Data: []byte(`apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: op.v1.0.0
spec:
  version: 1.0.0
  installModes:
  - type: AllNamespaces
    supported: true
`)},
		"metadata/annotations.yaml": {Data: []byte(`annotations:
  operators.operatorframework.io.bundle.package.v1: op
  operators.operatorframework.io.bundle.channels.v1: stable
`)},
		"metadata/properties.yaml": {Data: []byte(`properties:
- type: olm.constraint
  value:
    failureMessage: ">=1 & <2"
    cel:
      rule: "true"
`)},
		"metadata/dependencies.yaml": {Data: []byte(`dependencies:
- type: olm.package
  value:
    packageName: b
    version: ">=1.0.0"
`)},
	}
	b, err := bundle.Load(fsys)
	if err != nil {
		t.Fatal(err)
	}
	blob, err := RenderBundle(b, "", RenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range blob.Properties {
		got[p.Type] = string(p.Value)
	}
	for typ, want := range map[string]string{
		PropertyConstraint:      `{"cel":{"rule":"true"},"failureMessage":"\u003e=1 \u0026 \u003c2"}`,
		PropertyPackageRequired: `{"packageName":"b","versionRange":">=1.0.0"}`,
		PropertyPackage:         `{"packageName":"op","version":"1.0.0"}`,
	} {
		if got[typ] != want {
			t.Errorf("%s: got %s, want %s", typ, got[typ], want)
		}
	}
}

// TestLoadCanonicalizesOtherBlobs: blobs of other schemas are re-encoded as
// upstream re-encodes them (keys sorted, no HTML escaping); olm.deprecations,
// which upstream reads into its own type, keeps its key order. The expected
// bytes are upstream's render of the same file.
func TestLoadCanonicalizesOtherBlobs(t *testing.T) {
	const in = `{"schema":"example.com/note","package":"op","zeta":"\u003cz\u003e","alpha":1}
{"schema":"olm.deprecations","package":"op","entries":[{"reference":{"schema":"olm.package"},"message":"gone \u0026 done"}]}
`
	const want = `{
    "alpha": 1,
    "package": "op",
    "schema": "example.com/note",
    "zeta": "<z>"
}
{
    "schema": "olm.deprecations",
    "package": "op",
    "entries": [
        {
            "reference": {
                "schema": "olm.package"
            },
            "message": "gone & done"
        }
    ]
}
`
	c := &Catalog{}
	if err := c.LoadFile("op/catalog.json", []byte(in)); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := Write(&got, c, FormatJSON); err != nil {
		t.Fatal(err)
	}
	if got.String() != want {
		t.Errorf("got\n%s", got.String())
	}
}
