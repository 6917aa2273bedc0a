package fbc

import (
	"testing"
	"testing/fstest"
)

// TestLoadOnePackage: LoadOptions.Package keeps the blobs of one package,
// through Load and LoadEach alike, and still reports a blob that is not
// an object.
func TestLoadOnePackage(t *testing.T) {
	fsys := fstest.MapFS{
		"a/catalog.json": {Data: []byte(`{"schema":"olm.package","name":"a","defaultChannel":"s"}
{"schema":"olm.channel","package":"a","name":"s","entries":[{"name":"a.v1"}]}
{"schema":"olm.bundle","package":"a","name":"a.v1","image":"r/a:1","properties":[]}
{"schema":"olm.deprecations","package":"a","entries":[]}
`)},
		"b/catalog.json": {Data: []byte(`{"schema":"olm.package","name":"b","defaultChannel":"s"}
{"schema":"olm.channel","package":"b","name":"s","entries":[{"name":"b.v1"}]}
{"schema":"olm.bundle","package":"b","name":"b.v1","image":"r/b:1","properties":[]}
`)},
	}
	check := func(t *testing.T, c *Catalog) {
		t.Helper()
		if len(c.Packages) != 1 || c.Packages[0].Name != "b" || len(c.Channels) != 1 || len(c.Bundles) != 1 || c.Bundles[0].Name != "b.v1" || len(c.Others) != 0 {
			t.Errorf("got packages %v, %d channels, %d bundles, %d others; want package b alone", c.Packages, len(c.Channels), len(c.Bundles), len(c.Others))
		}
	}
	c, err := LoadWith(fsys, LoadOptions{Package: "b"})
	if err != nil {
		t.Fatal(err)
	}
	check(t, c)
	all := &Catalog{}
	if err := LoadEachWith(fsys, LoadOptions{Package: "b"}, func(part *Catalog) error { all.Merge(part); return nil }); err != nil {
		t.Fatal(err)
	}
	check(t, all)
	fsys["c.json"] = &fstest.MapFile{Data: []byte("[1]\n")}
	if _, err := LoadWith(fsys, LoadOptions{Package: "b"}); err == nil {
		t.Error("a blob that is not an object loaded without error")
	}
}
