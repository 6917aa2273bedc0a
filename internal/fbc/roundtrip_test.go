package fbc

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// snapshotQueries read what a reader of an index sees, independent of row
// ids and of how channel_entry rows are laid out.
var snapshotQueries = map[string]string{
	"packages": `SELECT name, IFNULL(default_channel, '') FROM package`,
	"channels": `SELECT package_name, name, head_operatorbundle_name FROM channel`,
	"members":  `SELECT DISTINCT e.package_name, e.channel_name, e.operatorbundle_name FROM channel_entry e JOIN operatorbundle b ON b.name = e.operatorbundle_name`,
	"edges": `SELECT DISTINCT e.package_name, e.channel_name, e.operatorbundle_name, r.operatorbundle_name
		FROM channel_entry e JOIN channel_entry r ON r.entry_id = e.replaces`,
	"bundles":      `SELECT name, bundlepath, version, IFNULL(skiprange, ''), csv IS NOT NULL AND length(csv) > 0, bundle IS NOT NULL AND length(bundle) > 0 FROM operatorbundle`,
	"csvs":         `SELECT name, json(CAST(csv AS TEXT)) FROM operatorbundle WHERE csv IS NOT NULL AND length(csv) > 0`,
	"objects":      `SELECT name, CAST(bundle AS TEXT) FROM operatorbundle WHERE bundle IS NOT NULL AND length(bundle) > 0`,
	"properties":   `SELECT DISTINCT operatorbundle_name, type, value FROM properties`,
	"dependencies": `SELECT DISTINCT operatorbundle_name, type, value FROM dependencies`,
	"provided":     `SELECT DISTINCT operatorbundle_name, group_name, version, kind FROM api_provider`,
	"required":     `SELECT DISTINCT operatorbundle_name, group_name, version, kind FROM api_requirer`,
	"images":       `SELECT DISTINCT operatorbundle_name, image FROM related_image`,
	"apis":         `SELECT group_name, version, kind, plural FROM api WHERE EXISTS (SELECT 1 FROM api_provider p WHERE p.group_name = api.group_name AND p.version = api.version AND p.kind = api.kind)`,
	"requiredDeps": `SELECT DISTINCT operatorbundle_name, json_extract(value, '$.group'), json_extract(value, '$.version'), json_extract(value, '$.kind') FROM dependencies WHERE type = 'olm.gvk'`,
}

func snapshot(t *testing.T, path string) map[string][]string {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := map[string][]string{}
	for name, q := range snapshotQueries {
		rows, err := db.QueryContext(context.Background(), q)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]sql.NullString, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			var parts []string
			for _, v := range vals {
				parts = append(parts, v.String)
			}
			if name == "objects" {
				// A catalog keeps a bundle's manifests sorted, not in
				// file order: compare them as a set.
				objs := strings.Split(strings.TrimSpace(parts[1]), "\n")
				sort.Strings(objs)
				parts[1] = strings.Join(objs, "|")
			}
			out[name] = append(out[name], strings.Join(parts, " | "))
		}
		rows.Close()
		sort.Strings(out[name])
	}
	return out
}

// TestRoundTripReferences: sqlite → FBC → sqlite keeps packages, default
// channels, channels and heads, channel members and upgrade edges, bundle
// rows, properties, dependencies, APIs and related images of every
// reference database.
func TestRoundTripReferences(t *testing.T) {
	for _, dbPath := range referenceDBs(t) {
		name := strings.TrimSuffix(filepath.Base(dbPath), ".db")
		t.Run(name, func(t *testing.T) {
			src := copyDB(t, dbPath)
			c, _ := renderDB(t, src, RenderOptions{})
			dst := filepath.Join(t.TempDir(), "index.db")
			if err := ToIndex(context.Background(), c, dst, ToIndexOptions{}); err != nil {
				t.Fatal(err)
			}
			// Upstream's render holds nothing the schema-13 tables
			// cannot (its icons are the head CSVs'): no table of opm's.
			if metas, err := openRO(t, dst).Metas(context.Background()); err != nil || len(metas) > 0 {
				t.Errorf("the database keeps %d catalog blob(s) (%v), want none", len(metas), err)
			}
			want, got := snapshot(t, src), snapshot(t, dst)
			// Upstream kept required APIs only as olm.gvk dependencies;
			// opm also fills api_requirer, as its index add does
			// (docs/compatibility.md).
			want["required"] = union(want["required"], want["requiredDeps"])
			// A catalog's requirements are properties, and a database
			// made from it keeps every property where upstream's opm
			// serve answers it: besides the dependencies, the properties
			// table holds them as the catalog says them.
			want["properties"] = union(want["properties"], requirementProperties(t, want["dependencies"]))
			// An API whose CRD no bundle of the catalog carries (upstream's
			// semver modes dropped non-head manifests) has no known plural.
			unknown := map[string]bool{}
			for _, a := range got["apis"] {
				if strings.HasSuffix(a, " | ") {
					unknown[strings.TrimSuffix(a, " | ")] = true
				}
			}
			var known []string
			for _, a := range want["apis"] {
				if i := strings.LastIndex(a, " | "); i < 0 || !unknown[a[:i]] {
					known = append(known, a)
				}
			}
			want["apis"] = append(known, nonEmptyPluralOnly(got["apis"], false)...)
			got["apis"] = append(nonEmptyPluralOnly(got["apis"], true), nonEmptyPluralOnly(got["apis"], false)...)
			// And the catalog read back renders the same.
			again, _ := renderDB(t, dst, RenderOptions{})
			var a, b bytes.Buffer
			if err := Write(&a, c, FormatJSON); err != nil {
				t.Fatal(err)
			}
			if err := Write(&b, again, FormatJSON); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a.Bytes(), b.Bytes()) {
				t.Errorf("catalog → index → catalog changed the catalog: %s", firstDiff(b.Bytes(), a.Bytes()))
			}
			for q := range snapshotQueries {
				if d := diffLists(want[q], got[q]); d != "" {
					t.Errorf("%s differ:\n%s", q, d)
				}
			}
		})
	}
}

// requirementProperties turns snapshot rows of olm.gvk and olm.package
// dependencies into the olm.gvk.required and olm.package.required property
// rows a catalog holds for them.
func requirementProperties(t *testing.T, deps []string) []string {
	t.Helper()
	var out []string
	for _, d := range deps {
		parts := strings.SplitN(d, " | ", 3)
		switch parts[1] {
		case PropertyGVK:
			out = append(out, parts[0]+" | "+PropertyGVKRequired+" | "+parts[2])
		case PropertyPackage:
			var v PackageValue
			if err := json.Unmarshal([]byte(parts[2]), &v); err != nil {
				t.Fatal(err)
			}
			p := mustProperty(PropertyPackageRequired, PackageRequiredValue{PackageName: v.PackageName, VersionRange: v.Version})
			out = append(out, parts[0]+" | "+p.Type+" | "+string(p.Value))
		}
	}
	return out
}

func diffLists(want, got []string) string {
	w, g := map[string]bool{}, map[string]bool{}
	for _, x := range want {
		w[x] = true
	}
	for _, x := range got {
		g[x] = true
	}
	var b strings.Builder
	n := 0
	for _, x := range want {
		if !g[x] && n < 5 {
			fmt.Fprintf(&b, "  lost:  %.300s\n", x)
			n++
		}
	}
	for _, x := range got {
		if !w[x] && n < 10 {
			fmt.Fprintf(&b, "  added: %.300s\n", x)
			n++
		}
	}
	return b.String()
}

func union(a, b []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range append(append([]string{}, a...), b...) {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	sort.Strings(out)
	return out
}

// TestToIndexFillsAPIRequirer: an olm.gvk.required property becomes both an
// olm.gvk dependency (what upstream's databases hold) and an api_requirer
// row (what opm's index add writes too), with the plural from the CSV.
func TestToIndexFillsAPIRequirer(t *testing.T) {
	c := smallCatalog()
	csv := `{"apiVersion":"operators.coreos.com/v1alpha1","kind":"ClusterServiceVersion","metadata":{"name":"op.v1.1.0"},"spec":{"customresourcedefinitions":{"required":[{"name":"gadgets.y.io","kind":"Gadget","version":"v2"}]}}}`
	c.Bundles[1].Properties = append(c.Bundles[1].Properties,
		mustProperty(PropertyGVKRequired, GVKValue{Group: "y.io", Kind: "Gadget", Version: "v2"}),
		mustProperty(PropertyBundleObject, BundleObjectValue{Data: []byte(csv)}))
	dst := filepath.Join(t.TempDir(), "index.db")
	if err := ToIndex(context.Background(), c, dst, ToIndexOptions{}); err != nil {
		t.Fatal(err)
	}
	s := snapshot(t, dst)
	if got := strings.Join(s["required"], ";"); got != "op.v1.1.0 | y.io | v2 | Gadget" {
		t.Errorf("api_requirer: %s", got)
	}
	if got := strings.Join(s["dependencies"], ";"); got != `op.v1.1.0 | olm.gvk | {"group":"y.io","kind":"Gadget","version":"v2"}` {
		t.Errorf("dependencies: %s", got)
	}
	db, _ := sql.Open("sqlite3", "file:"+dst+"?mode=ro")
	defer db.Close()
	var plural string
	if err := db.QueryRow(`SELECT plural FROM api WHERE kind = 'Gadget'`).Scan(&plural); err != nil || plural != "gadgets" {
		t.Errorf("plural %q, %v", plural, err)
	}
}

// TestToIndexRefusesExistingFile: the destination is never overwritten
// unless forced, and a refused or failed conversion leaves nothing behind.
func TestToIndexRefusesExistingFile(t *testing.T) {
	dir := t.TempDir()
	dst := filepath.Join(dir, "index.db")
	if err := os.WriteFile(dst, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := ToIndex(context.Background(), smallCatalog(), dst, ToIndexOptions{}); err == nil {
		t.Fatal("want an error for an existing file")
	}
	bad := smallCatalog()
	bad.Channels[0].Entries = append(bad.Channels[0].Entries, ChannelEntry{Name: "op.v9.9.9"})
	if err := ToIndex(context.Background(), bad, dst, ToIndexOptions{Force: true}); err == nil || !strings.Contains(err.Error(), "op.v9.9.9") {
		t.Fatalf("want an error naming the missing bundle, got %v", err)
	}
	if data, _ := os.ReadFile(dst); string(data) != "mine" {
		t.Fatal("failed conversion changed the destination")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
	if err := ToIndex(context.Background(), smallCatalog(), dst, ToIndexOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	if s := snapshot(t, dst); len(s["bundles"]) != 2 {
		t.Errorf("bundles: %v", s["bundles"])
	}
}

func TestRenderIndexFile(t *testing.T) {
	c, _, err := RenderIndexFile(context.Background(), filepath.Join(sharedDir(t), "reference", "index", "etcd.replaces.db"), RenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Bundles) != 6 {
		t.Errorf("%d bundles", len(c.Bundles))
	}
}

// TestToIndexRefusesInvalidCatalog: a bundle in no channel would silently
// vanish from the database; ToIndex refuses the catalog instead.
func TestToIndexRefusesInvalidCatalog(t *testing.T) {
	c := smallCatalog()
	c.Bundles = append(c.Bundles, Bundle{Schema: SchemaBundle, Name: "op.v2.0.0", Package: "op", Image: "x",
		Properties: []Property{mustProperty(PropertyPackage, PackageValue{PackageName: "op", Version: "2.0.0"})}})
	err := ToIndex(context.Background(), c, filepath.Join(t.TempDir(), "index.db"), ToIndexOptions{})
	if err == nil || !strings.Contains(err.Error(), "catalog-bundle-channel") {
		t.Fatalf("want a validation error, got %v", err)
	}
}

// nonEmptyPluralOnly keeps the api rows with (keep) or without a plural.
func nonEmptyPluralOnly(rows []string, keep bool) []string {
	var out []string
	for _, r := range rows {
		if strings.HasSuffix(r, " | ") != keep {
			out = append(out, r)
		}
	}
	return out
}
