package catalogdiff

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/fbc"
)

func loadDir(t *testing.T, dir string) *fbc.Catalog {
	t.Helper()
	c, err := fbc.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestEveryKindOfChange: testdata/old → testdata/new holds one of each
// change (the whole document is checked by the command's test).
func TestEveryKindOfChange(t *testing.T) {
	res, err := Diff(loadDir(t, "testdata/old"), loadDir(t, "testdata/new"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Equal || len(res.Packages) != 3 {
		t.Fatalf("equal %v, %d packages", res.Equal, len(res.Packages))
	}
	a := res.Packages[0]
	if a.Name != "a" || a.Status != Changed || a.DefaultChannel == nil || a.DefaultChannel.New != "candidate" {
		t.Errorf("package a: %+v", a)
	}
	stable := a.Channels[2]
	if stable.Name != "stable" || len(stable.Unreachable) != 1 || stable.Unreachable[0] != "a.v2" {
		t.Errorf("a.v2 lost its way to the head: %+v", stable)
	}
	if len(stable.EdgesAdded) != 3 || stable.EdgesAdded[1] != (Edge{From: "a.v1", To: "a.v4", Kind: SkipRange, Range: "<2.0.0"}) {
		t.Errorf("edges added %+v", stable.EdgesAdded)
	}
	if res.Packages[1].Status != Removed || res.Packages[2].Status != Added {
		t.Errorf("gone and new: %s, %s", res.Packages[1].Status, res.Packages[2].Status)
	}

	// The reverse diff swaps every side.
	back, err := Diff(loadDir(t, "testdata/new"), loadDir(t, "testdata/old"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, r := res.Summary, back.Summary
	if r.PackagesAdded != s.PackagesRemoved || r.BundlesAdded != s.BundlesRemoved || r.EdgesAdded != s.EdgesRemoved || r.EdgesRemoved != s.EdgesAdded || r.DeprecationsAdded != s.DeprecationsRemoved {
		t.Errorf("reverse summary %+v against %+v", r, s)
	}
}

func TestPackageFilterAndEqual(t *testing.T) {
	old := loadDir(t, "testdata/old")
	res, err := Diff(old, loadDir(t, "testdata/new"), Options{Packages: []string{"gone"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Packages) != 1 || res.Packages[0].Name != "gone" || res.Summary.PackagesRemoved != 1 || res.Summary.BundlesAdded != 0 {
		t.Errorf("--package gone: %+v", res)
	}
	res, err = Diff(old, loadDir(t, "testdata/old"), Options{})
	if err != nil || !res.Equal || len(res.Packages) != 0 {
		t.Errorf("a catalog against itself: %+v %v", res, err)
	}
	// Property order carries no meaning.
	swapped := loadDir(t, "testdata/old")
	b := &swapped.Bundles[0]
	b.Properties = append(b.Properties, fbc.Property{Type: "olm.gvk", Value: json.RawMessage(`{"group":"g","kind":"K","version":"v1"}`)})
	b.Properties[0], b.Properties[1] = b.Properties[1], b.Properties[0]
	res, err = Diff(old, swapped, Options{})
	if err != nil || len(res.Packages) != 1 || len(res.Packages[0].BundlesChanged) != 1 || res.Packages[0].BundlesChanged[0].Properties[0] != "olm.gvk" {
		t.Errorf("an added property: %+v %v", res, err)
	}
}

func TestBrokenDeprecationsBlob(t *testing.T) {
	old := loadDir(t, "testdata/old")
	bad := loadDir(t, "testdata/old")
	for i := range bad.Others {
		if bad.Others[i].Schema == fbc.SchemaDeprecations {
			bad.Others[i].Blob = json.RawMessage(`{"schema":"olm.deprecations","package":"a","entries":{}}`)
			bad.Others[i].Pos = fbc.Position{File: "a/catalog.json", Line: 7}
		}
	}
	if _, err := Diff(old, bad, Options{}); err == nil || !contains(err.Error(), "a/catalog.json:7") || !contains(err.Error(), "new catalog") {
		t.Errorf("broken olm.deprecations: %v", err)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// TestEscapesAndKeyOrderAreNoChange: a property value is compared as JSON,
// so one written with other escapes (a database's \u003e, a hand-written
// \u00e4) or with its keys in another order is the same value; a value
// that says something else is a change.
func TestEscapesAndKeyOrderAreNoChange(t *testing.T) {
	withValue := func(v string) *fbc.Catalog {
		c := loadDir(t, "testdata/old")
		b := &c.Bundles[0]
		b.Properties = append(b.Properties, fbc.Property{Type: "olm.package.required", Value: json.RawMessage(v)})
		return c
	}
	base := withValue(`{"packageName":"b","versionRange":">=1.0.0 <2.0.0"}`)
	for _, v := range []string{
		`{"packageName":"b","versionRange":"\u003e=1.0.0 \u003c2.0.0"}`,
		`{"versionRange":">=1.0.0 <2.0.0","packageName":"b"}`,
		`{ "versionRange": "\u003E=1.0.0 <2.0.0", "package\u004eame": "\u0062" }`,
	} {
		res, err := Diff(base, withValue(v), Options{})
		if err != nil || !res.Equal {
			t.Errorf("%s: %+v %v", v, res, err)
		}
	}
	// The same through the loader: a catalog file with escapes against one
	// without.
	load := func(text string) *fbc.Catalog {
		c := &fbc.Catalog{}
		if err := c.LoadFile("a/catalog.json", []byte(text)); err != nil {
			t.Fatal(err)
		}
		return c
	}
	const blob = `{"schema":"olm.bundle","name":"a.v1","package":"a","image":"x","properties":[{"type":"olm.constraint","value":%s}]}`
	plain := load(fmt.Sprintf(blob, `{"failureMessage":"ä"}`))
	res, err := Diff(plain, load(fmt.Sprintf(blob, `{"failureMessage":"\u00e4"}`)), Options{})
	if err != nil || !res.Equal {
		t.Errorf("ä against \\u00e4: %+v %v", res, err)
	}
	res, err = Diff(base, withValue(`{"packageName":"b","versionRange":">=1.0.0 <3.0.0"}`), Options{})
	if err != nil || res.Equal || res.Packages[0].BundlesChanged[0].Properties[0] != "olm.package.required" {
		t.Errorf("another range: %+v %v", res, err)
	}
	res, err = Diff(plain, load(fmt.Sprintf(blob, `{"failureMessage":"a"}`)), Options{})
	if err != nil || res.Equal {
		t.Errorf("ä against a: %+v %v", res, err)
	}
}
