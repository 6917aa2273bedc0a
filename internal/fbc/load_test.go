package fbc

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"
)

func TestLoadStreamsAndDepth(t *testing.T) {
	fsys := fstest.MapFS{
		"op/catalog.json": {Data: []byte(`{"schema":"olm.package","name":"op","defaultChannel":"stable"}
{"schema":"olm.channel","name":"stable","package":"op","entries":[{"name":"op.v1.0.0"}]}{"schema":"olm.bundle","name":"op.v1.0.0","package":"op","image":"i",
 "properties":[{"type":"olm.package","value":{"packageName":"op",   "version":"1.0.0"}}]}`)},
		"deep/a/b/other.yaml": {Data: []byte(`---
schema: olm.package
name: other
defaultChannel: alpha
---
schema: olm.deprecations
package: other
entries: []
`)},
		"README.md": {Data: []byte("# not a catalog")},
	}
	c, err := Load(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Packages) != 2 || len(c.Channels) != 1 || len(c.Bundles) != 1 || len(c.Others) != 1 {
		t.Fatalf("got %d packages, %d channels, %d bundles, %d others", len(c.Packages), len(c.Channels), len(c.Bundles), len(c.Others))
	}
	if got := c.Bundles[0].Pos; got.File != "op/catalog.json" || got.Line != 2 {
		t.Errorf("bundle position %+v, want op/catalog.json:2", got)
	}
	if got := c.Packages[0].Pos; got.File != "deep/a/b/other.yaml" || got.Line != 2 {
		t.Errorf("YAML package position %+v, want deep/a/b/other.yaml:2", got)
	}
	if v := string(c.Bundles[0].Properties[0].Value); v != `{"packageName":"op","version":"1.0.0"}` {
		t.Errorf("property value not kept compact and in order: %s", v)
	}
	if c.Others[0].Schema != SchemaDeprecations || c.Others[0].Package != "other" {
		t.Errorf("other blob: %+v", c.Others[0])
	}
	if len(c.Ignored) != 1 || c.Ignored[0] != "README.md" {
		t.Errorf("ignored %v", c.Ignored)
	}
}

func TestLoadIndexIgnore(t *testing.T) {
	pkg := func(n string) *fstest.MapFile {
		return &fstest.MapFile{Data: []byte(`{"schema":"olm.package","name":"` + n + `","defaultChannel":"a"}`)}
	}
	fsys := fstest.MapFS{
		".indexignore":          {Data: []byte("# comments are fine\n*.bak.json\nbuild/\n/top-only.json\n")},
		"keep.json":             pkg("keep"),
		"old.bak.json":          pkg("bak"),
		"sub/old.bak.json":      pkg("bak2"),
		"build/x.json":          pkg("build"),
		"top-only.json":         pkg("top"),
		"sub/top-only.json":     pkg("subtop"),
		"sub/.indexignore":      {Data: []byte("secret.json\n!old.bak.json\n")},
		"sub/secret.json":       pkg("secret"),
		"other/secret.json":     pkg("othersecret"),
		"other/deeper/bad.json": {Data: []byte("{not json")},
		"other/.indexignore":    {Data: []byte("deeper/**\n")},
	}
	c, err := Load(fsys)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range c.Packages {
		names = append(names, p.Name)
	}
	got := strings.Join(names, ",")
	// Walk order is lexical: keep.json, other/secret.json, sub/old.bak.json
	// (re-included), sub/top-only.json.
	if got != "keep,othersecret,bak2,subtop" {
		t.Errorf("loaded %s", got)
	}
}

func TestLoadErrorsNameFileAndLine(t *testing.T) {
	cases := []struct {
		name, file, data, want string
		line                   int
	}{
		{"json syntax", "c.json", "{\"schema\":\"olm.package\",\"name\":\"a\"}\n{\"schema\": olm.bundle}\n", "JSON syntax error", 2},
		{"json truncated", "c.json", "{\"schema\":\"olm.package\",\n\"name\":\"a\"\n", "ends inside a value", 3},
		{"yaml syntax", "c.yaml", "schema: olm.package\nname: [a\n", "YAML syntax error", 2},
		{"no schema", "c.json", "\n\n{\"name\":\"a\"}", "no schema", 3},
		{"not an object", "c.yaml", "schema: olm.package\n---\n- a\n- b\n", "must be an object", 3},
		{"wrong type", "c.json", `{"schema":"olm.channel","name":"a","package":"p","entries":"x"}`, "field entries must be", 1},
		{"bad icon", "c.json", `{"schema":"olm.package","name":"a","icon":{"base64data":"%%%","mediatype":"image/png"}}`, "olm.package blob", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(fstest.MapFS{tc.file: {Data: []byte(tc.data)}})
			if err == nil {
				t.Fatal("want an error")
			}
			var le *LoadError
			if !errors.As(err, &le) {
				t.Fatalf("want a *LoadError, got %T %v", err, err)
			}
			if le.File != tc.file || le.Line != tc.line || !strings.Contains(le.Msg, tc.want) {
				t.Errorf("got %q (file %s line %d), want %q at %s:%d", err, le.File, le.Line, tc.want, tc.file, tc.line)
			}
		})
	}
}

// TestLoadKeepsGoodBlobs: a bad blob does not hide the others.
func TestLoadKeepsGoodBlobs(t *testing.T) {
	c, err := Load(fstest.MapFS{
		"a.json": {Data: []byte(`{"schema":"olm.package","name":"a","defaultChannel":"s"}`)},
		"b.json": {Data: []byte(`{"name":"nope"}`)},
	})
	if err == nil || len(c.Packages) != 1 {
		t.Fatalf("want one package and an error, got %d and %v", len(c.Packages), err)
	}
	if n := len(LoadErrors(err)); n != 1 {
		t.Errorf("want 1 error, got %d", n)
	}
}

// TestKeysInOtherLetterCases: encoding/json matches keys regardless of
// case, so {"schema":"olm.channel","sChemA":""} decoded as a channel with
// no schema, which then wrote a catalog that did not load. Such a blob is
// refused (as upstream refuses duplicate keys), naming the key.
func TestKeysInOtherLetterCases(t *testing.T) {
	t.Parallel()
	for _, blob := range []string{
		`{"schema":"olm.channel","sChemA":""}`,
		`{"schema":"olm.bundle","package":"op","name":"a","Schema":"olm.channel"}`,
		`{"schema":"olm.package","name":"op","SCHEMA":"olm.bundle"}`,
	} {
		c := &Catalog{}
		err := c.LoadFile("c.json", []byte(blob))
		if err == nil {
			t.Errorf("%s: loaded", blob)
			continue
		}
		if !strings.Contains(err.Error(), "differ only in letter case") {
			t.Errorf("%s: %v", blob, err)
		}
	}
	// The same keys once each still load.
	c := &Catalog{}
	if err := c.LoadFile("c.json", []byte(`{"schema":"olm.channel","package":"op","name":"s","entries":[]}`)); err != nil {
		t.Fatal(err)
	}
}
