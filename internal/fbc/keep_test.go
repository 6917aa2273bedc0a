package fbc

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/index"
)

// keepCatalog is testdata/keep: a catalog with every kind of property a
// sqlite index has no column for (olm.constraint, olm.gvk.required,
// olm.package.required with "<=", olm.label.required, olm.csv.metadata, a
// custom property), deprecations of a package, a channel and a bundle, and
// custom-schema blobs with and without a package.
func keepCatalog(t *testing.T) *Catalog {
	t.Helper()
	c, err := LoadDir(filepath.Join("testdata", "keep"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func toIndexAndBack(t *testing.T, c *Catalog) (*Catalog, string) {
	t.Helper()
	db := filepath.Join(t.TempDir(), "index.db")
	if err := ToIndex(context.Background(), c, db, ToIndexOptions{}); err != nil {
		t.Fatal(err)
	}
	back, warns := renderDB(t, db, RenderOptions{})
	if len(warns) > 0 {
		t.Errorf("warnings: %v", warns)
	}
	return back, db
}

func writeJSON(t *testing.T, c *Catalog) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, c, FormatJSON); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// blobSet describes a catalog's content as comparable lines: properties
// (by meaning) of each bundle, channels, packages and other blobs.
func blobSet(c *Catalog) []string {
	var out []string
	for _, p := range c.Packages {
		out = append(out, fmt.Sprintf("package %s default=%s description=%q icon=%v properties=%v", p.Name, p.DefaultChannel, p.Description, p.Icon, p.Properties))
	}
	for _, ch := range c.Channels {
		for _, e := range ch.Entries {
			out = append(out, fmt.Sprintf("channel %s/%s %s replaces=%s skips=%v range=%s", ch.Package, ch.Name, e.Name, e.Replaces, e.Skips, e.SkipRange))
		}
	}
	for _, b := range c.Bundles {
		out = append(out, fmt.Sprintf("bundle %s/%s image=%s related=%v", b.Package, b.Name, b.Image, b.RelatedImages))
		for _, p := range b.Properties {
			out = append(out, fmt.Sprintf("property %s %s %s", b.Name, p.Type, sameValue(p.Value)))
		}
	}
	for _, o := range c.Others {
		out = append(out, fmt.Sprintf("blob %s %s %s %s", o.Schema, o.Package, o.Name, sameValue(o.Blob)))
	}
	sort.Strings(out)
	return out
}

// TestRoundTripKeepsEveryProperty: catalog → sqlite → catalog keeps every
// property, channel, deprecation and custom blob; catalog → sqlite →
// catalog → sqlite → catalog is byte for byte stable.
func TestRoundTripKeepsEveryProperty(t *testing.T) {
	c0 := keepCatalog(t)
	c1, db1 := toIndexAndBack(t, c0)
	if d := diffLists(blobSet(c0), blobSet(c1)); d != "" {
		t.Errorf("catalog → index → catalog changed the content:\n%s", d)
	}
	c2, _ := toIndexAndBack(t, c1)
	if a, b := writeJSON(t, c1), writeJSON(t, c2); !bytes.Equal(a, b) {
		t.Errorf("second round trip changed the catalog: %s", firstDiff(b, a))
	}
	out := string(writeJSON(t, c1))
	for _, want := range []string{`"versionRange": "<=1.2.3 || >=2.0.0 <3.0.0"`, `"1.1: a <b> & c"`, `"alice <alice@example.com>"`, `"displayName": "Op <beta>"`} {
		if !strings.Contains(out, want) {
			t.Errorf("the catalog read back lacks %s", want)
		}
	}

	// The database holds the requirements both ways: as properties (what
	// upstream's opm serve answers) and as dependencies, as upstream
	// fills them; the deprecations and custom blobs in opm's own table.
	s := snapshot(t, db1)
	for _, want := range []string{
		`op.v1.1.0 | olm.gvk.required | {"group":"y.io","kind":"Gadget","version":"v2"}`,
		`op.v1.1.0 | olm.constraint | {"cel":{"rule":"properties.exists(p, p.type == \"olm.gvk\" && p.value.kind == \"Gadget\")"},"failureMessage":"needs a gadget provider"}`,
		`op.v1.1.0 | olm.label.required | {"label":"tier"}`,
		`op.v1.0.0 | olm.package.required | {"packageName":"dep","versionRange":"<=1.2.3 || >=2.0.0 <3.0.0"}`,
		// Keys sorted: values are read as upstream reads them (rawjson.Canonical).
		`op.v1.0.0 | example.com/custom | {"a":[true,"x<y"],"b":1}`,
	} {
		if !contains(s["properties"], want) {
			t.Errorf("properties table lacks %s; has:\n%s", want, strings.Join(s["properties"], "\n"))
		}
	}
	wantDeps := []string{
		`op.v1.0.0 | olm.package | {"packageName":"dep","version":"<=1.2.3 || >=2.0.0 <3.0.0"}`,
		`op.v1.1.0 | olm.gvk | {"group":"y.io","kind":"Gadget","version":"v2"}`,
		`op.v2.0.0 | olm.gvk | {"group":"y.io","kind":"Gadget","version":"v2"}`,
		`op.v2.0.0 | olm.package | {"packageName":"dep","version":">=1.0.0"}`,
	}
	if d := diffLists(wantDeps, s["dependencies"]); d != "" {
		t.Errorf("dependencies:\n%s", d)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestRenderDropsStaleDeprecations: deprecations of a channel or bundle the
// database no longer holds (changed since by a tool that does not know the
// blobs) are left out with a warning, so that the render validates; the
// rest of the blob is kept.
func TestRenderDropsStaleDeprecations(t *testing.T) {
	c0 := keepCatalog(t)
	db := filepath.Join(t.TempDir(), "index.db")
	if err := ToIndex(context.Background(), c0, db, ToIndexOptions{}); err != nil {
		t.Fatal(err)
	}
	conn, err := sql.Open("sqlite3", db)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`DELETE FROM channel_entry WHERE channel_name = 'alpha'`,
		`DELETE FROM channel WHERE name = 'alpha'`,
	} {
		if _, err := conn.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	conn.Close()
	c, warns := renderDB(t, db, RenderOptions{})
	if len(warns) != 1 || !strings.Contains(warns[0], `olm.channel "alpha"`) {
		t.Errorf("warnings: %q", warns)
	}
	var dep string
	for _, o := range c.Others {
		if o.Schema == SchemaDeprecations {
			dep = string(o.Blob)
		}
	}
	want := `{"schema":"olm.deprecations","package":"op","entries":[{"reference":{"schema":"olm.package"},"message":"op is end of life; use op2"},{"reference":{"schema":"olm.bundle","name":"op.v1.0.0"},"message":"op.v1.0.0 has a CVE; upgrade"}]}`
	if dep != want {
		t.Errorf("deprecations:\n got %s\nwant %s", dep, want)
	}
	for _, f := range Validate(c) {
		t.Errorf("render does not validate: %s", f.Message)
	}
}

// TestRoundTripIndexWithRequirements: an index built by index add from a
// bundle whose metadata declares every kind of requirement (olm.gvk,
// olm.package with "<=", olm.label, olm.constraint) renders to a catalog
// that goes through sqlite and back unchanged: sqlite → FBC → sqlite → FBC
// gives the same bytes, with each requirement once.
func TestRoundTripIndexWithRequirements(t *testing.T) {
	shared := sharedDir(t)
	src := filepath.Join(shared, "corpus", "real", "pelorus-operator", "0.0.5")
	dir := filepath.Join(t.TempDir(), "bundle")
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	props := `dependencies:
- type: olm.package
  value:
    packageName: prometheus
    version: "<=0.47.0 || >=1.0.0 <2.0.0"
- type: olm.gvk
  value:
    group: grafana.integreatly.org
    kind: Grafana
    version: v1beta1
- type: olm.label
  value:
    label: tier=gold
- type: olm.constraint
  value:
    failureMessage: needs <a> & <b>
    all:
      constraints:
      - package:
          packageName: grafana-operator
          versionRange: ">=4.8.0"
properties:
- type: example.com/custom
  value:
    b: 1
    a: [true, "x<y"]
`
	if err := os.WriteFile(filepath.Join(dir, "metadata", "properties.yaml"), []byte(props), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := bundle.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	dbPath := filepath.Join(t.TempDir(), "index.db")
	db, err := index.Create(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Add(context.Background(), []index.LoadedBundle{{Bundle: b, BundlePath: "example.com/pelorus-bundle:0.0.5"}}, index.AddOptions{Mode: index.ModeSemver}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	c1, warns := renderDB(t, dbPath, RenderOptions{})
	if len(warns) > 0 {
		t.Errorf("warnings: %v", warns)
	}
	// The values the database holds as index add stored them keep
	// json.Marshal's escapes, as upstream's render kept them; the
	// requirement built from the olm.package dependency has none.
	out := string(writeJSON(t, c1))
	for _, want := range []string{
		`"versionRange": "<=0.47.0 || >=1.0.0 <2.0.0"`, `"type": "olm.gvk.required"`, `"type": "olm.label.required"`,
		`"failureMessage": "needs \u003ca\u003e \u0026 \u003cb\u003e"`, `"x\u003cy"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("render lacks %s", want)
		}
	}
	c2, _ := toIndexAndBack(t, c1)
	if a, b := writeJSON(t, c1), writeJSON(t, c2); !bytes.Equal(a, b) {
		t.Errorf("sqlite → FBC → sqlite → FBC changed the catalog: %s", firstDiff(b, a))
	}
}
