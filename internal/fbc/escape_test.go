package fbc

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
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

func TestUnescapeHTML(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":"\u003c=1"}`:      `{"a":"<=1"}`,
		`{"a":"\u003E \u0026"}`: `{"a":"> &"}`,
		`{"a":"\\u003c"}`:       `{"a":"\\u003c"}`,
		`{"a":"\\\u003c"}`:      `{"a":"\\<"}`,
		`{"a":"\u00e9 \n"}`:     `{"a":"\u00e9 \n"}`,
		`{"a":"plain"}`:         `{"a":"plain"}`,
		`{"a":"\u003`:           `{"a":"\u003`,
	} {
		if got := string(unescapeHTML([]byte(in))); got != want {
			t.Errorf("unescapeHTML(%s) = %s, want %s", in, got, want)
		}
	}
}

// FuzzUnescapeHTML: undoing HTML escapes never changes what a JSON value
// means, and leaves none of them behind outside an escaped backslash.
// Seeds live in testdata/fuzz/FuzzUnescapeHTML as well as below.
func FuzzUnescapeHTML(f *testing.F) {
	for _, s := range []string{`{"a":"\u003c=1.0.0 \u0026\u0026 \u003e0"}`, `["\\u003c","\\\u003e"]`, `"\u00e9\u003C"`, `{"a":1}`, `"\\"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var before any
		if json.Unmarshal(data, &before) != nil {
			return
		}
		out := unescapeHTML(data)
		var after any
		if err := json.Unmarshal(out, &after); err != nil {
			t.Fatalf("%q became %q, not JSON: %v", data, out, err)
		}
		if !reflect.DeepEqual(before, after) {
			t.Fatalf("%q became %q: %v, was %v", data, out, after, before)
		}
	})
}
